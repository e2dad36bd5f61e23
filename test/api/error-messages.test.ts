/**
 * Errors that say how to fix the request: every route's schema is walked (the routes as the app
 * registered them, `app.knownRoutes()`), and for each constraint of its body, query and path
 * parameters and declared headers (type, enum and constants, lengths, ranges, item counts,
 * pattern, format, required fields, unknown fields) one request breaks it alone. Each answer must be a 4xx (never a 500) whose
 * `details.fields` names the field, the constraint and its limit or allowed values, and whose
 * message names the field.
 *
 * Validation runs after `onRequest` hooks and before `preValidation`/`preHandler` ones: a route
 * guarded in `onRequest` would answer 401 before its schema is looked at, so the walker calls
 * as a signed-in administrator with the device's fingerprint, and as a configured USSD gateway.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KnownRoute } from '../../src/platform/http/routing.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, seedUser, signIn } from '../harness/fixtures.js';

const GATEWAY_KEY = 'k'.repeat(40);
const FINGERPRINT = 'walker-device-1';

type Schema = Record<string, unknown> & { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; anyOf?: Schema[] };
type Location = 'body' | 'querystring' | 'params' | 'headers';

/** One request that breaks one constraint, and what its answer must name. */
interface Case {
  title: string;
  location: Location;
  field: string;
  constraint: string;
  value?: unknown;
  /** What `details.fields` must hold for the field besides the constraint. */
  expect: Record<string, unknown>;
}

/** A value of no constraint's liking, for a string pattern: the first candidate the pattern refuses. */
function breaksPattern(pattern: string, min = 0, max = Infinity): string | undefined {
  const re = new RegExp(pattern, 'u');
  return ['\u0000', '\u0001x', ' ', '!!!', 'a b', '-1', 'x', 'ABC', '..', '<>', '*', '\n\n', 'é'].find((c) => !re.test(c) && c.length >= min && c.length <= max);
}

const FORMAT_BAD: Record<string, string> = { uuid: 'not-a-uuid', email: 'not-an-email', 'date-time': 'yesterday', date: '31/01/2026', uri: 'not a uri', ipv4: '999.1.1.1' };

/** The one-constraint-broken cases of a property (and of the properties within it). */
function propertyCases(schema: Schema, field: string, location: Location, text: boolean): Case[] {
  const out: Case[] = [];
  const add = (constraint: string, value: unknown, expectation: Record<string, unknown> = {}) => out.push({ title: `${location} ${field}: ${constraint}`, location, field, constraint, value, expect: expectation });
  const consts = schema.anyOf?.every((b) => 'const' in b || b.type === 'null') ? schema.anyOf.map((b) => ('const' in b ? b.const : null)) : undefined;
  if (Array.isArray(schema.enum)) add('enum', 'not-a-valid-choice', { allowed: schema.enum });
  else if ('const' in schema) add('const', typeof schema.const === 'string' ? 'not-the-constant' : 'x', { allowed: [schema.const] });
  else if (consts) add('enum', 'not-a-valid-choice', { allowed: consts });
  const branch = schema.anyOf?.find((b) => b.type !== 'null' && !('const' in b)) ?? schema;
  const type = branch.type;
  if (type === 'integer' || type === 'number') {
    add('type', 'abc', { expected_type: type });
    if (typeof branch.minimum === 'number' && branch.minimum > -1e15) add('minimum', branch.minimum - 1, { limit: branch.minimum });
    if (typeof branch.maximum === 'number' && branch.maximum < 1e15) add('maximum', branch.maximum + 1, { limit: branch.maximum });
  } else if (type === 'string' && !Array.isArray(branch.enum) && !('const' in branch)) {
    if (!text) add('type', 12345, { expected_type: 'string' });
    const min = typeof branch.minLength === 'number' ? branch.minLength : 0;
    const max = typeof branch.maxLength === 'number' ? branch.maxLength : Infinity;
    if (min >= 2 && location !== 'params') add('minLength', 'x'.repeat(min - 1), { limit: min });
    if (max < 20_000) add('maxLength', 'x'.repeat(max + 1), { limit: max });
    if (typeof branch.format === 'string' && FORMAT_BAD[branch.format]) add('format', FORMAT_BAD[branch.format], { format: branch.format });
    if (typeof branch.pattern === 'string') {
      const bad = breaksPattern(branch.pattern, min, max);
      const control = bad !== undefined && [...bad].some((ch) => ch.charCodeAt(0) < 0x20);
      if (bad !== undefined && (location === 'body' || !control)) add('pattern', bad, { pattern: branch.pattern });
    }
  } else if (type === 'boolean' && !text) {
    add('type', 'yes', { expected_type: 'boolean' });
  } else if (type === 'array' && !text) {
    add('type', 'not-an-array', { expected_type: 'array' });
    if (typeof branch.minItems === 'number' && branch.minItems >= 1) add('minItems', [], { limit: branch.minItems });
    // One item too many (the items themselves may be wrong too: every error is reported).
    if (typeof branch.maxItems === 'number' && branch.maxItems < 5_000) add('maxItems', Array.from({ length: branch.maxItems + 1 }, () => null), { limit: branch.maxItems });
    // One wrong item: its constraints, at index 0 (`field.0`).
    if (branch.items && typeof branch.items === 'object') out.push(...propertyCases(branch.items, `${field}.0`, location, text).filter((c) => c.constraint !== 'required' || c.field.startsWith(`${field}.0.`)));
  } else if (type === 'object' && !text && branch.properties) {
    add('type', 'not-an-object', { expected_type: 'object' });
    for (const c of objectCases(branch, location, field)) out.push(c);
  }
  return out;
}

/** The cases of an object's properties, its required fields and its closedness, at `prefix`. */
function objectCases(schema: Schema, location: Location, prefix = ''): Case[] {
  const text = location !== 'body';
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const out: Case[] = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) out.push(...propertyCases(prop, at(name), location, text));
  if (location !== 'params') {
    for (const name of schema.required ?? []) out.push({ title: `${location} ${at(name)}: required`, location, field: at(name), constraint: 'required', expect: {} });
    if (schema.additionalProperties === false) {
      out.push({ title: `${location} ${at('surplus_field')}: additionalProperties`, location, field: at('surplus_field'), constraint: 'additionalProperties', value: 1, expect: { allowed: Object.keys(schema.properties ?? {}) } });
    }
  }
  return out;
}

/** A value that passes a path parameter's or header's schema, for the ones a case leaves alone. */
function validParam(schema: Schema): string {
  if (Array.isArray(schema.enum)) return String(schema.enum[0]);
  const constant = schema.anyOf?.find((b) => 'const' in b);
  if (constant) return String(constant.const);
  if (schema.type === 'integer' || schema.type === 'number') return String(Math.max(1, Number(schema.minimum ?? 1)));
  if (schema.format === 'uuid') return randomUUID();
  return 'x'.repeat(Math.max(1, Number(schema.minLength ?? 1)));
}

/** Puts `value` at the dotted `field` of an object (nothing for a required field: it is left out). */
function withValue(field: string, value: unknown, constraint: string): Record<string, unknown> {
  const parts = field.split('.');
  const root: Record<string, unknown> = {};
  let cur: Record<string, unknown> = root;
  parts.forEach((p, i) => {
    if (i === parts.length - 1) {
      if (constraint !== 'required') cur[p] = value;
    } else {
      // `0` is an array's first item.
      const next: Record<string, unknown> = parts[i + 1] === '0' ? ([] as unknown as Record<string, unknown>) : {};
      cur[p] = next;
      cur = next;
    }
  });
  return root;
}

/**
 * The configuration routes read on an empty body (`{}`) and write on any other: leaving out a
 * required field of the configuration is a read there, not an error.
 */
const READ_ON_EMPTY = new Set(['POST /api/v1/auth/ldap/config', 'POST /api/v1/auth/saml/config']);

let t: TestApp;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp({ env: { USSD_GATEWAY_KEYS: `ussd-walker:${GATEWAY_KEY}` } });
  await seedUser(t.s, 'walker.admin', { roles: ['admin'] });
  const s = await signIn(t.app, 'walker.admin', undefined, { device_fingerprint: FINGERPRINT });
  headers = bearer(s.access_token, { 'x-device-fingerprint': FINGERPRINT, 'x-gateway-key': GATEWAY_KEY });
});
afterAll(async () => t?.close());

/** The routes with a schema to walk: not HEAD or OPTIONS copies, not the documentation's assets. */
function walkedRoutes(): KnownRoute[] {
  return t.app.knownRoutes().filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !r.url.includes('*') && !r.url.startsWith('/api/docs'));
}

function casesOf(route: KnownRoute): Case[] {
  const schema = (route.schema ?? {}) as Partial<Record<Location, Schema>>;
  const cases = (['params', 'querystring', 'body', 'headers'] as const).flatMap((loc) => (schema[loc]?.type === 'object' || schema[loc]?.properties ? objectCases(schema[loc]!, loc) : []));
  return READ_ON_EMPTY.has(`${route.method} ${route.url}`) ? cases.filter((c) => !(c.location === 'body' && c.constraint === 'required')) : cases;
}

async function send(route: KnownRoute, c: Case) {
  const schema = (route.schema ?? {}) as Partial<Record<Location, Schema>>;
  const params = Object.fromEntries(Object.entries(schema.params?.properties ?? {}).map(([k, v]) => [k, validParam(v)]));
  if (c.location === 'params' && c.constraint !== 'required') params[c.field] = encodeURIComponent(String(c.value));
  const url = route.url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => params[name] ?? 'x');
  const value = withValue(c.field, c.value, c.constraint);
  const query = c.location === 'querystring' ? `?${new URLSearchParams(Object.entries(value).map(([k, v]) => [k, String(v)])).toString()}` : '';
  const payload = c.location === 'body' ? value : schema.body ? {} : undefined;
  // Declared headers: valid but for the one a header case breaks (left out when it is the required one).
  const declared = Object.fromEntries(Object.entries(schema.headers?.properties ?? {}).map(([k, v]) => [k, validParam(v)]));
  if (c.location === 'headers') {
    if (c.constraint === 'required') delete declared[c.field];
    else declared[c.field] = String(c.value);
  }
  return t.app.inject({ method: route.method as 'POST', url: url + query, headers: { ...headers, ...declared }, ...(payload === undefined ? {} : { payload }) });
}

describe('every schema constraint of every route answers 422 VALIDATION_ERROR (a configuration route its own 400) naming the field and the constraint', () => {
  it('walks enough routes and cases to mean something', () => {
    const routes = walkedRoutes().filter((r) => casesOf(r).length > 0);
    expect(routes.length).toBeGreaterThan(80);
    expect(routes.flatMap(casesOf).length).toBeGreaterThan(400);
  });

  it('each case: 422 VALIDATION_ERROR (or the configuration route\'s 400), details.fields names the field with the constraint and its limit or allowed values, the message names the field', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const route of walkedRoutes()) {
      for (const c of casesOf(route)) {
        const res = await send(route, c);
        const where = `${route.method} ${route.url} ${c.title}`;
        checked++;
        // 422 VALIDATION_ERROR; the configuration routes answer their own 400 (LDAP_CONFIG_INVALID, SAML_CONFIG_INVALID).
        const config = READ_ON_EMPTY.has(`${route.method} ${route.url}`);
        const body = (res.statusCode >= 400 && res.statusCode < 500 ? res.json() : {}) as { error_code?: string; message: string; details: { fields?: Array<Record<string, unknown>> } };
        if (config ? res.statusCode !== 400 || !/_CONFIG_INVALID$/.test(body.error_code ?? '') : res.statusCode !== 422 || body.error_code !== 'VALIDATION_ERROR') {
          failures.push(`${where}: ${res.statusCode} ${res.body.slice(0, 200)}`);
          continue;
        }
        const fields = body.details.fields ?? [];
        // A nullable field's type is "string or null": the expected type is named within it.
        const matches = (k: string, v: unknown, got: unknown): boolean => (k === 'expected_type' ? String(got).split(' or ').includes(String(v)) : JSON.stringify(got) === JSON.stringify(v));
        const named = fields.find((f) => f.field === c.field && f.constraint === c.constraint && Object.entries(c.expect).every(([k, v]) => matches(k, v, f[k])));
        if (!named) {
          failures.push(`${where}: ${res.statusCode} ${JSON.stringify(fields).slice(0, 300)}`);
          continue;
        }
        if (typeof named.message !== 'string' || named.message.length < 8) failures.push(`${where}: field message ${JSON.stringify(named.message)}`);
        if (!body.message.includes(c.field.split('.').pop()!) && fields.indexOf(named) < 3) failures.push(`${where}: message ${JSON.stringify(body.message)}`);
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(checked).toBeGreaterThan(400);
  }, 300_000);
});
