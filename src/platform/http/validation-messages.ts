/**
 * What a schema failure says to the client: one place that turns Ajv's errors (the route
 * validator's, and any other `makeAjv` validator's) into fields that each name what to change:
 * the allowed values of an enum or constant, a length or range limit, the expected format or
 * type, the pattern (with the field's description when it has one), an unknown field's name and
 * the fields that are allowed, a missing field's name. A value the client sent is never echoed
 * (it may be a password).
 */

/** An Ajv error as the validators produce it (`verbose`: with its schema and parent schema). */
export interface SchemaError {
  keyword?: string;
  instancePath?: string;
  schemaPath?: string;
  params?: Record<string, unknown>;
  message?: string;
  schema?: unknown;
  parentSchema?: Record<string, unknown>;
}

/** One field a request failed on: where, which, and what to change. */
export interface FieldProblem {
  location: string;
  field: string;
  message: string;
  /** The schema keyword that failed: `required`, `enum`, `maxLength`... */
  constraint: string;
  /** The allowed values (enum, const, a union of constants), or the allowed fields (unknown field). */
  allowed?: unknown[];
  /** The limit of a length, a range or a count. */
  limit?: number;
  /** The expected format (`uuid`, `email`, `date-time`...), pattern or type. */
  format?: string;
  pattern?: string;
  expected_type?: string;
}

const FORMAT_TEXT: Record<string, string> = {
  uuid: 'a UUID such as 3fa85f64-5717-4562-b3fc-2c963f66afa6',
  email: 'an email address such as ada@bank.example',
  'date-time': 'an RFC 3339 date-time with a time zone, such as 2026-01-31T09:00:00Z',
  date: 'a date such as 2026-01-31',
  time: 'a time such as 09:00:00Z',
  uri: 'an absolute URI such as https://bank.example/path',
  url: 'an absolute URL such as https://bank.example/path',
  ipv4: 'an IPv4 address such as 192.0.2.10',
  ipv6: 'an IPv6 address such as 2001:db8::10',
  hostname: 'a host name such as bank.example',
};

const RANGE_WORDS: Record<string, string> = { '<=': 'at most', '>=': 'at least', '<': 'less than', '>': 'more than' };

const list = (values: unknown[]): string => values.map((v) => JSON.stringify(v)).join(', ');

/** The field's dotted path, the named property included (a missing or unknown one). */
function fieldOf(e: SchemaError): string {
  const at = (e.instancePath ?? '').replace(/^\//, '').split('/').filter((p) => p !== '').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const named = e.params?.missingProperty ?? e.params?.additionalProperty;
  if (named !== undefined) at.push(String(named).slice(0, 64)); // a name the client sent: echoed, but bounded
  return (at.join('.') || '(root)').slice(0, 200);
}

/** The constants of a union's branches (`Type.Union([Type.Literal(...)...])`), or undefined when a branch is not one. */
function unionConstants(branches: unknown): unknown[] | undefined {
  if (!Array.isArray(branches)) return undefined;
  const out: unknown[] = [];
  for (const b of branches as Array<Record<string, unknown>>) {
    if (b && 'const' in b) out.push(b.const);
    else if (b && Array.isArray(b.enum)) out.push(...(b.enum as unknown[]));
    else if (b && b.type === 'null') out.push(null);
    else return undefined;
  }
  return out;
}

/** The types a union accepts, for a value of none of them. */
function unionTypes(branches: unknown): string {
  if (!Array.isArray(branches)) return 'one of the documented forms';
  const types = (branches as Array<Record<string, unknown>>).map((b) => (typeof b?.type === 'string' ? b.type : Array.isArray(b?.type) ? (b.type as string[]).join(' or ') : 'the documented form')).filter((t, i, all) => all.indexOf(t) === i);
  return types.join(' or ');
}

/** What one error asks the client to change, without the field's name. */
function describe(e: SchemaError): Omit<FieldProblem, 'location' | 'field'> {
  const p = e.params ?? {};
  const keyword = e.keyword ?? 'schema';
  const limit = typeof p.limit === 'number' ? p.limit : undefined;
  switch (keyword) {
    case 'required':
      return { constraint: keyword, message: 'is required' };
    case 'additionalProperties': {
      const props = e.parentSchema?.properties;
      const allowed = props && typeof props === 'object' ? Object.keys(props) : [];
      return { constraint: keyword, allowed, message: allowed.length > 0 ? `is not a known field; the fields are ${allowed.join(', ')}` : 'is not a known field: this object takes no fields' };
    }
    case 'enum':
      return { constraint: keyword, allowed: p.allowedValues as unknown[], message: `must be one of ${list(p.allowedValues as unknown[])}` };
    case 'const':
      return { constraint: keyword, allowed: [p.allowedValue], message: `must be ${JSON.stringify(p.allowedValue)}` };
    case 'type':
      return { constraint: keyword, expected_type: String(p.type), message: `must be of type ${String(p.type)}` };
    case 'minLength':
      return { constraint: keyword, limit, message: limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long` };
    case 'maxLength':
      return { constraint: keyword, limit, message: `must be at most ${limit} characters long` };
    case 'minimum': case 'maximum': case 'exclusiveMinimum': case 'exclusiveMaximum':
      return { constraint: keyword, limit, message: `must be ${RANGE_WORDS[String(p.comparison)] ?? String(p.comparison)} ${limit}` };
    case 'minItems': case 'maxItems':
      return { constraint: keyword, limit, message: `must have ${keyword === 'minItems' ? 'at least' : 'at most'} ${limit} item${limit === 1 ? '' : 's'}` };
    case 'minProperties': case 'maxProperties':
      return { constraint: keyword, limit, message: `must have ${keyword === 'minProperties' ? 'at least' : 'at most'} ${limit} field${limit === 1 ? '' : 's'}` };
    case 'uniqueItems':
      return { constraint: keyword, message: 'must not repeat an item' };
    case 'format': {
      const format = String(p.format);
      return { constraint: keyword, format, message: `must be ${FORMAT_TEXT[format] ?? `in the ${format} format`}` };
    }
    case 'pattern': {
      const description = typeof e.parentSchema?.description === 'string' ? e.parentSchema.description : undefined;
      return { constraint: keyword, pattern: String(p.pattern), message: `must match the pattern ${String(p.pattern)}${description ? ` (${description})` : ''}` };
    }
    case 'anyOf': case 'oneOf': {
      const allowed = unionConstants(e.schema);
      if (allowed) return { constraint: 'enum', allowed, message: `must be one of ${list(allowed)}` };
      const types = unionTypes(e.schema);
      return { constraint: 'type', expected_type: types, message: `must be of type ${types}` };
    }
    default:
      return { constraint: keyword, message: e.message ?? 'is not valid' };
  }
}

/**
 * The fields a request failed its schema on, one problem per field and constraint. A union's
 * branch errors are folded: a union of constants says its allowed values; a value of the right
 * type that broke a branch's constraint (a nullable string too long) says that constraint; a
 * value of none of the types says the types.
 */
export function describeSchemaErrors(errors: readonly SchemaError[], location: string): FieldProblem[] {
  const unions = errors.filter((e) => (e.keyword === 'anyOf' || e.keyword === 'oneOf') && e.schemaPath !== undefined);
  const within = (u: SchemaError, e: SchemaError): boolean => e !== u && e.schemaPath !== undefined && e.schemaPath.startsWith(`${u.schemaPath}/`);
  const dropped = new Set<SchemaError>();
  for (const u of unions) {
    const children = errors.filter((e) => within(u, e));
    // A branch's error tells more than the union's when it is not about the value's own type
    // (a constraint it broke, or anything about a field within it).
    const telling = children.filter((e) => (e.keyword !== 'type' && e.keyword !== 'anyOf' && e.keyword !== 'oneOf') || (e.instancePath ?? '') !== (u.instancePath ?? ''));
    if (unionConstants(u.schema) === undefined && telling.length > 0) {
      dropped.add(u);
      for (const c of children) if (!telling.includes(c)) dropped.add(c);
    } else {
      for (const c of children) dropped.add(c);
    }
  }
  const out: FieldProblem[] = [];
  for (const e of errors) {
    if (dropped.has(e) || e.keyword === 'if') continue;
    const problem = { location, field: fieldOf(e), ...describe(e) };
    if (!out.some((o) => o.field === problem.field && o.message === problem.message)) out.push(problem);
  }
  return out;
}

const LOCATION_WORDS: Record<string, string> = { body: 'body field', querystring: 'query parameter', params: 'path parameter', headers: 'header' };

/** One sentence for the error's `message`: the first few problems, each with its field. */
export function summarise(problems: readonly FieldProblem[], max = 3): string {
  const parts = problems.slice(0, max).map((p) => (p.field === '(root)' ? `the ${p.location === 'body' ? 'JSON body' : p.location} ${p.message}` : `${LOCATION_WORDS[p.location] ?? p.location} "${p.field}" ${p.message}`));
  const more = problems.length > max ? `; and ${problems.length - max} more (details.fields)` : '';
  return `The request does not match the schema: ${parts.join('; ')}${more}.`;
}
