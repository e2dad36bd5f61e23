/**
 * The document's request and success bodies: each becomes a named component schema (its `title`,
 * else `<OperationId>Request` / `<OperationId>Response`) referenced by the operation, and gets an
 * example when it has none, built from its properties' examples, defaults and formats. A value no
 * rule can make up (a pattern) needs an `examples` in its schema: the quality test
 * (test/api/openapi-quality.test.ts) validates every example against its schema.
 */
import { isErrorBodySchema } from './platform/http/schemas.js';

type Schema = Record<string, unknown>;

const FORMAT_EXAMPLES: Record<string, unknown> = {
  uuid: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77',
  'date-time': '2026-01-15T09:00:00.000Z',
  date: '2026-01-15',
  email: 'amina@bank.example',
  uri: 'https://bank.example/',
  url: 'https://bank.example/',
  ipv4: '192.0.2.10',
  ipv6: '2001:db8::10',
  time: '09:00:00Z',
};

const MISSING = Symbol('no example');

/** Sent with every answer (errors too): the request's id, also `details.request_id` of an error. */
const REQUEST_ID = {
  description: 'This request\'s id (a UUID the service makes; never read from the request): quote it to support, it finds the request\'s log line and trace.',
  schema: { type: 'string', format: 'uuid', examples: ['7d4e9a1c-5b2f-4c3d-8e6a-0f1b2c3d4e5f'] },
};

function own(schema: Schema): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  return MISSING;
}

function ofObject(schema: Schema, depth: number): Schema {
  const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const out: Schema = {};
  for (const [name, prop] of Object.entries(properties)) {
    // Optional properties appear when they have an example of their own: a made-up one would say nothing.
    if (!required.has(name) && own(prop) === MISSING && !hasExampleInside(prop)) continue;
    out[name] = exampleOf(prop, depth + 1);
  }
  return out;
}

function hasExampleInside(schema: Schema): boolean {
  if (own(schema) !== MISSING) return true;
  const props = schema.properties as Record<string, Schema> | undefined;
  if (props && Object.values(props).some(hasExampleInside)) return true;
  const items = schema.items as Schema | undefined;
  return items !== undefined && hasExampleInside(items);
}

function ofType(schema: Schema, depth: number): unknown {
  const types = [schema.type].flat().filter((t) => t !== 'null');
  const type = types[0] ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'object': return ofObject(schema, depth);
    case 'array': {
      const items = schema.items as Schema | undefined;
      const min = Number(schema.minItems ?? 0);
      if (items === undefined || (own(items) === MISSING && !hasExampleInside(items) && min === 0)) return [];
      const given = Array.isArray(items.examples) ? items.examples : [];
      if (given.length >= Math.max(1, min)) return given.slice(0, Math.max(1, min));
      return Array.from({ length: Math.max(1, min) }, () => exampleOf(items, depth + 1));
    }
    case 'string': return FORMAT_EXAMPLES[String(schema.format)] ?? 'x'.repeat(Math.max(1, Number(schema.minLength ?? 1)));
    case 'integer':
    case 'number': return typeof schema.minimum === 'number' && schema.minimum > 1 ? schema.minimum : 1;
    case 'boolean': return true;
    default: return types.length === 0 && [schema.type].flat().includes('null') ? null : {};
  }
}

/** An example of `schema`: its own, else one built from its parts. */
export function exampleOf(schema: Schema, depth = 0): unknown {
  const given = own(schema);
  if (given !== MISSING) return given;
  if (depth > 12) return null;
  const members = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (members) {
    const pick = members.find((m) => m.type !== 'null' && hasExampleInside(m)) ?? members.find((m) => m.type !== 'null') ?? members[0]!;
    return exampleOf(pick, depth + 1);
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...(schema.allOf as Schema[]).map((s) => exampleOf(s, depth + 1)));
  return ofType(schema, depth);
}

const pascal = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

interface Media {
  schema?: Schema;
  example?: unknown;
  examples?: unknown;
}

/** Gives `media` an example, moves its schema to `components.schemas` under `name` (or its title), and refers to it. */
function hoist(components: Record<string, Schema>, media: Media, name: string): void {
  const schema = media.schema;
  if (schema === undefined || typeof schema.$ref === 'string') return;
  if (media.example === undefined && media.examples === undefined) media.example = exampleOf(schema);
  const title = typeof schema.title === 'string' && /^[A-Za-z0-9_.-]+$/.test(schema.title) ? schema.title : name;
  const text = JSON.stringify({ ...schema, title: undefined });
  const free = (key: string): boolean => components[key] === undefined || JSON.stringify({ ...components[key], title: undefined }) === text;
  let key = free(title) ? title : name;
  for (let n = 2; !free(key); n++) key = `${name}${n}`;
  components[key] = { ...schema, title: key };
  media.schema = { $ref: `#/components/schemas/${key}` };
}

/** JSON Schema 2020-12 (OpenAPI 3.1) writes a tuple as `prefixItems`; TypeBox writes draft-07's `items: [...]`. */
function tuples(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(tuples);
  if (node === null || typeof node !== 'object') return;
  const o = node as Schema;
  if (Array.isArray(o.items) && o.type === 'array') {
    o.prefixItems = o.items;
    o.items = o.additionalItems === undefined ? false : o.additionalItems;
    delete o.additionalItems;
  }
  Object.values(o).forEach(tuples);
}

const isJson = (type: string): boolean => type.includes('json');
const isForm = (type: string): boolean => type === 'application/x-www-form-urlencoded';

/** @fastify/swagger's `transformObject`: names and exemplifies every request and success body. */
export function hoistBodies(doc: Schema): Schema {
  const components = ((doc.components as Schema | undefined) ?? {}) as Schema;
  const schemas = ((components.schemas as Record<string, Schema> | undefined) ?? {});
  for (const ops of Object.values((doc.paths as Record<string, Record<string, Schema>> | undefined) ?? {})) {
    for (const op of Object.values(ops)) {
      const id = pascal(String(op.operationId ?? 'operation'));
      const body = op.requestBody as { content?: Record<string, Media> } | undefined;
      for (const [type, media] of Object.entries(body?.content ?? {})) if (isJson(type) || isForm(type)) hoist(schemas, media, `${id}Request`);
      const responses = (op.responses as Record<string, { description?: string; content?: Record<string, Media> }> | undefined) ?? {};
      const successes = Object.keys(responses).filter((s) => /^[23]/.test(s));
      for (const [status, response] of Object.entries(responses)) {
        (response as { headers?: Schema }).headers = { ...(response as { headers?: Schema }).headers, 'X-Request-ID': { $ref: '#/components/headers/RequestId' } };
        const success = successes.includes(status);
        if (success && response.description === 'Default Response') response.description = typeof op.summary === 'string' ? `${op.summary}: done.` : 'Success.';
        for (const [type, media] of Object.entries(response.content ?? {})) {
          // An error body stays inline (its codes are the route's own); a documented non-error body (a 503 health answer) is named.
          if (!isJson(type) || isErrorBodySchema(media.schema)) continue;
          hoist(schemas, media, success && successes.length === 1 ? `${id}Response` : `${id}Response${status}`);
        }
      }
    }
  }
  tuples(doc);
  return { ...doc, components: { ...components, schemas, headers: { ...(components.headers as Schema | undefined), RequestId: REQUEST_ID } } };
}
