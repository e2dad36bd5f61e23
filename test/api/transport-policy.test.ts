/**
 * Transport encryption policy (SPEC Transport encryption 5 to 8, issue 3 section 1): enforcement
 * on and off, exempt paths, USSD traffic, binary answers, which answers are sealed (errors
 * included) and X-Content-SHA256 over the bytes actually sent. The binary rule is checked on a
 * small Fastify app wired like `createHttpApp` wires the plugin, since Strongroom has no binary
 * route yet; that app also shows the plugin reused with its own key source and session lookup.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/platform/config.js';
import { createHttpApp, type App } from '../../src/platform/http/app.js';
import { Metrics } from '../../src/platform/observability/metrics.js';
import { keyIdOf, type TransportKey } from '../../src/transport/keys.js';
import { createTransport, DEFAULT_BINARY_FRAGMENTS, DEFAULT_EXEMPT_PATHS, type TransportOptions } from '../../src/transport/plugin.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { ENCRYPTED, fetchServerPem, openPreAuth, openSession, preAuthBody, sessionBody } from '../harness/transport-client.js';

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;

const GATEWAY_KEY = 'transport-policy-gateway-key-0123456789';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Sent as is: not sealed, and the hash header covers the bytes sent. */
function notSealed(res: Res): void {
  expect(res.headers['x-encrypted'], `${res.statusCode} ${res.body.slice(0, 200)}`).toBeUndefined();
  expect(res.headers['x-content-sha256']).toBe(sha256(res.rawPayload));
}

/** Sealed: the header says so, and the hash covers the envelope (the bytes sent), not the plaintext. */
function isSealed(res: Res, fields: string[]): void {
  expect(res.headers['x-encrypted'], res.body.slice(0, 200)).toBe('true');
  expect(Object.keys(res.json()).sort()).toEqual([...fields].sort());
  expect(res.headers['x-content-sha256']).toBe(sha256(res.rawPayload));
}


async function encryptedSignIn(t: TestApp, pem: string, username: string, password = STRONG_PASSWORD) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(pem, { username, password }) });
  return { res, opened: openPreAuth(res.json()) };
}

describe('ENFORCE_TRANSPORT_ENCRYPTION=1', () => {
  let t: TestApp;
  let pem: string;
  let adminToken: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MAX_CONCURRENT_SESSIONS: '20', USSD_GATEWAY_KEYS: `ussd-test:${GATEWAY_KEY}` } });
    await seedUser(t.s, 'policy.user');
    await seedUser(t.s, 'policy.admin', { roles: ['admin'] });
    pem = await fetchServerPem(t.app);
    const { opened } = await encryptedSignIn(t, pem, 'policy.admin');
    adminToken = String(opened.body.access_token);
  });
  afterAll(async () => t.close());

  it('refuses unencrypted POST, PUT and PATCH with a plaintext 422 ENCRYPTION_REQUIRED', async () => {
    const attempts: Array<{ method: 'POST' | 'PUT' | 'PATCH'; url: string; payload?: Record<string, unknown>; headers?: Record<string, string> }> = [
      { method: 'POST', url: '/api/v1/auth/login', payload: { username: 'policy.user', password: STRONG_PASSWORD } },
      { method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: 'x' } },
      { method: 'POST', url: '/api/v1/auth/logout', payload: {}, headers: bearer(adminToken) },
      { method: 'POST', url: '/api/v1/auth/logout', headers: bearer(adminToken) }, // no body at all
      { method: 'POST', url: '/api/v1/admin/users', payload: { username: 'never.created', roles: ['customer'] }, headers: bearer(adminToken) },
      { method: 'PUT', url: '/api/v1/admin/users', payload: {}, headers: bearer(adminToken) },
      { method: 'PATCH', url: '/api/v1/admin/users/1', payload: {}, headers: bearer(adminToken) },
      { method: 'POST', url: '/api/v1/auth/login', payload: { username: 'policy.user', password: STRONG_PASSWORD }, headers: { 'x-encrypted': 'false' } },
      { method: 'POST', url: '/api/v1/auth/login', payload: { username: 'policy.user', password: STRONG_PASSWORD }, headers: { 'x-encrypted': '1' } },
    ];
    const users = await t.s.users.count();
    for (const a of attempts) {
      const res = await t.app.inject(a);
      expectError(res, 422, 'ENCRYPTION_REQUIRED');
      notSealed(res);
    }
    expect(await t.s.users.count()).toBe(users);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(adminToken) })).statusCode).toBe(422);
  });

  it('does not refuse a GET of a route not marked personal data: a plaintext GET gets a plaintext answer', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/admin/roles', headers: bearer(adminToken) });
    expect(res.statusCode).toBe(200);
    notSealed(res);
    expect(res.json()).toMatchObject({ roles: expect.arrayContaining([expect.objectContaining({ name: 'admin' })]) });
  });

  it('seals a GET sent with x-encrypted: true under the session key', async () => {
    const { opened } = await encryptedSignIn(t, pem, 'policy.admin');
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/admin/users?limit=1', headers: { ...ENCRYPTED, ...bearer(String(opened.body.access_token)) } });
    expect(res.statusCode).toBe(200);
    isSealed(res, ['iv', 'ciphertext', 'tag']);
    expect(openSession(opened.key, res.json())).toMatchObject({ limit: 1 });
  });

  it('never refuses nor encrypts the exempt paths, even when asked to with x-encrypted: true', async () => {
    expect(DEFAULT_EXEMPT_PATHS).toEqual(expect.arrayContaining(['/api/v1/auth/public_key', '/api/docs', '/api/redoc', '/api/openapi.json', '/api', '/api/health', '/health', '/metrics']));
    for (const url of ['/api/v1/auth/public_key', '/api/docs', '/api/redoc', '/api/openapi.json', '/api', '/api/health', '/health', '/metrics']) {
      for (const headers of [{}, ENCRYPTED, { ...ENCRYPTED, ...bearer(adminToken) }]) {
        const get = await t.app.inject({ method: 'GET', url, headers });
        expect(get.statusCode, `GET ${url}`).toBeLessThan(400);
        notSealed(get);
        const post = await t.app.inject({ method: 'POST', url, headers, payload: { data: { iv: 'AAAA', ciphertext: 'AAAA', tag: 'AAAA' } } });
        expect(post.statusCode, `POST ${url}: ${post.body}`).not.toBe(422);
        expect(post.statusCode, `POST ${url}: ${post.body}`).not.toBe(400);
        notSealed(post);
      }
    }
    const pk = await t.app.inject({ method: 'POST', url: '/api/v1/auth/public_key', headers: ENCRYPTED, payload: { data: {} } });
    expect(pk.json()).toMatchObject({ algorithm: 'RSA-2048', public_key: pem });
    // An unknown exempt path (another service's translations) is a 404, not a 422.
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/core/translations/fetch', payload: {} }), 404, 'NOT_FOUND');
  });

  it('leaves USSD traffic alone: a `ussd` path segment is neither refused nor encrypted', async () => {
    for (const headers of [{}, ENCRYPTED]) {
      for (const url of ['/api/v1/auth/login/ussd', '/api/v1/auth/password/ussd']) {
        // No gateway key: the route itself answers, in plaintext.
        const anonymous = await t.app.inject({ method: 'POST', url, headers, payload: { phone_number: '+254700000001', pin: '2580' } });
        expectError(anonymous, 401, 'GATEWAY_UNAUTHORIZED');
        notSealed(anonymous);
      }
      // A gateway's plaintext call, even flagged `x-encrypted`, is read as it is and answered in plaintext.
      const gateway = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/ussd', headers: { ...headers, 'x-gateway-key': GATEWAY_KEY }, payload: { phone_number: '+254700000001', pin: '2580' } });
      expectError(gateway, 401, 'INVALID_CREDENTIALS');
      notSealed(gateway);
    }
    // A segment, not a substring: "ussdx" is ordinary traffic.
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/ussdx', payload: {} }), 422, 'ENCRYPTION_REQUIRED');
  });

  it('does not let a header opt out: `x-channel: ussd` on an ordinary route is still refused with 422 ENCRYPTION_REQUIRED', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'x-channel': 'ussd' }, payload: { username: 'policy.user', password: STRONG_PASSWORD, channel: 'ussd' } });
    expectError(res, 422, 'ENCRYPTION_REQUIRED');
  });

  it('seals a pre-auth error (wrong password, bad input) to the client key, with its real status', async () => {
    const wrong = await encryptedSignIn(t, pem, 'policy.user', 'Wrong#Passw0rd!');
    expect(wrong.res.statusCode).toBe(401);
    isSealed(wrong.res, ['ciphertext', 'encrypted_key', 'nonce', 'tag']);
    expect(wrong.opened.body).toMatchObject({ status_code: 401, error_code: 'INVALID_CREDENTIALS' });
    const invalid = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(pem, { username: 'policy.user', password: STRONG_PASSWORD, role: 'admin' }) });
    expect(invalid.statusCode).toBe(422);
    isSealed(invalid, ['ciphertext', 'encrypted_key', 'nonce', 'tag']);
    expect(openPreAuth(invalid.json()).body).toMatchObject({ status_code: 422, error_code: 'VALIDATION_ERROR' });
    const badRefresh = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', headers: ENCRYPTED, payload: preAuthBody(pem, { refresh_token: 'not.a.token' }) });
    expect(badRefresh.statusCode).toBe(401);
    expect(openPreAuth(badRefresh.json()).body).toMatchObject({ status_code: 401 });
  });

  it('seals an authenticated error under the session key (a handler 4xx after decryption)', async () => {
    const { opened } = await encryptedSignIn(t, pem, 'policy.user');
    const token = String(opened.body.access_token);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(token) }, payload: sessionBody(opened.key, { all_sessions: 'yes' }) });
    expect(res.statusCode).toBe(422);
    isSealed(res, ['iv', 'ciphertext', 'tag']);
    expect(openSession(opened.key, res.json())).toMatchObject({ status_code: 422, error_code: 'VALIDATION_ERROR' });
    // The session was not ended by the refused call.
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(token) }, payload: sessionBody(opened.key, {}) })).statusCode).toBe(200);
  });

  it('hashes the bytes actually sent, for sealed and plaintext answers', async () => {
    const { res, opened } = await encryptedSignIn(t, pem, 'policy.user');
    isSealed(res, ['ciphertext', 'encrypted_key', 'nonce', 'tag']);
    const plaintext = JSON.stringify(opened.body);
    expect(res.headers['x-content-sha256']).not.toBe(sha256(Buffer.from(plaintext)));
    notSealed(await t.app.inject({ method: 'GET', url: '/health' }));
  });
});

describe('ENFORCE_TRANSPORT_ENCRYPTION=0: both modes coexist', () => {
  let t: TestApp;
  let pem: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '0' } });
    await seedUser(t.s, 'mixed.user');
    pem = await fetchServerPem(t.app);
  });
  afterAll(async () => t.close());

  it('an unencrypted sign-in and logout pass in plaintext', async () => {
    const s = await signIn(t.app, 'mixed.user');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token), payload: {} });
    expect(res.statusCode).toBe(200);
    notSealed(res);
  });

  it('an encrypted sign-in and logout are still decrypted and sealed', async () => {
    const { res, opened } = await encryptedSignIn(t, pem, 'mixed.user');
    expect(res.statusCode).toBe(200);
    isSealed(res, ['ciphertext', 'encrypted_key', 'nonce', 'tag']);
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(String(opened.body.access_token)) }, payload: sessionBody(opened.key, {}) });
    expect(out.statusCode).toBe(200);
    expect(openSession(opened.key, out.json())).toEqual({ status: 'success', sessions_ended: 1 });
  });

  it('a plaintext call with the token of an encrypted sign-in is answered in plaintext', async () => {
    const { opened } = await encryptedSignIn(t, pem, 'mixed.user');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(String(opened.body.access_token)) });
    expect(res.statusCode).toBe(200);
    notSealed(res);
  });

  it('still refuses a tampered encrypted body with DECRYPTION_FAILED', async () => {
    const body = preAuthBody(pem, { username: 'mixed.user', password: STRONG_PASSWORD });
    body.data.tag = Buffer.alloc(16).toString('base64');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: body }), 400, 'DECRYPTION_FAILED');
  });
});

// ---- the plugin on its own: binary answers and reuse by another service -------------------

function serverKey(): TransportKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const now = Date.now();
  return { keyId: keyIdOf(publicKey), privateKey, publicKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), createdAt: now, expiresAt: now + 86_400_000 };
}

async function pluginApp(opts: Partial<TransportOptions> & { sessionKeyValue: Buffer; key: TransportKey }): Promise<App> {
  const transport = createTransport({
    keys: { current: () => opts.key, live: () => [opts.key] },
    enforce: true,
    preAuthRoutes: ['/svc/echo-preauth'],
    ...opts,
    async sessionKey(request) {
      return request.headers.authorization === 'Bearer good' ? opts.sessionKeyValue : null;
    },
  });
  const app = createHttpApp({ config: loadConfig({ NODE_ENV: 'test' }), log: pino({ level: 'silent' }), metrics: new Metrics(), envelope: transport });
  const PDF = Buffer.from('%PDF-1.7\n%\u00e2\u00e3\n1 0 obj <<>> endobj\n', 'latin1');
  app.all('/svc/*', async (request, reply) => {
    if (request.url.endsWith('.pdf')) {
      reply.header('content-type', 'application/pdf');
      return PDF;
    }
    return { path: request.url, body: request.body ?? null };
  });
  await app.ready();
  return app;
}

describe('the plugin on a small app of another service', () => {
  const key = serverKey();
  const sessionKeyValue = randomBytes(32);
  let app: App;
  const auth = { ...ENCRYPTED, authorization: 'Bearer good' };

  beforeAll(async () => {
    app = await pluginApp({ key, sessionKeyValue });
  });
  afterAll(async () => app.close());

  it('seals an ordinary JSON answer under the session key its host supplies', async () => {
    const res = await app.inject({ method: 'POST', url: '/svc/accounts', headers: auth, payload: sessionBody(sessionKeyValue, { n: 1 }) });
    expect(res.statusCode).toBe(200);
    isSealed(res, ['iv', 'ciphertext', 'tag']);
    expect(openSession(sessionKeyValue, res.json())).toEqual({ path: '/svc/accounts', body: { n: 1 } });
  });

  it('serves its own pre-auth routes: decrypts the envelope and seals the answer to the client key', async () => {
    const res = await app.inject({ method: 'POST', url: '/svc/echo-preauth', headers: ENCRYPTED, payload: preAuthBody(key.publicKeyPem, { hello: 'world' }, { keyId: key.keyId }) });
    expect(res.statusCode).toBe(200);
    isSealed(res, ['ciphertext', 'encrypted_key', 'nonce', 'tag']);
    expect(openPreAuth(res.json()).body).toEqual({ path: '/svc/echo-preauth', body: { hello: 'world' } });
  });

  it('without a session key from its host, an encrypted call is DECRYPTION_FAILED', async () => {
    const res = await app.inject({ method: 'POST', url: '/svc/accounts', headers: { ...ENCRYPTED, authorization: 'Bearer other' }, payload: sessionBody(sessionKeyValue, {}) });
    expectError(res, 400, 'DECRYPTION_FAILED');
    notSealed(res);
  });

  it('does not seal answers on binary paths: every fragment of SPEC 7, JSON or not', async () => {
    for (const fragment of DEFAULT_BINARY_FRAGMENTS) {
      const pdf = await app.inject({ method: 'GET', url: `/svc/${fragment}/statement-42.pdf`, headers: auth });
      expect(pdf.statusCode, fragment).toBe(200);
      expect(pdf.headers['content-type']).toBe('application/pdf');
      expect(pdf.rawPayload.subarray(0, 8).toString('latin1')).toBe('%PDF-1.7');
      notSealed(pdf);
      // The request body is still decrypted; only the answer is left alone.
      const json = await app.inject({ method: 'POST', url: `/svc/${fragment}?format=json`, headers: auth, payload: sessionBody(sessionKeyValue, { id: 42 }) });
      expect(json.statusCode, fragment).toBe(200);
      notSealed(json);
      expect(json.json()).toEqual({ path: `/svc/${fragment}?format=json`, body: { id: 42 } });
    }
  });

  it('does not seal a non-JSON answer on an ordinary path either', async () => {
    const res = await app.inject({ method: 'GET', url: '/svc/logo.pdf', headers: auth });
    expect(res.headers['content-type']).toBe('application/pdf');
    notSealed(res);
  });

  it('takes its lists from its options: another service can name its own binary fragments', async () => {
    const custom = await pluginApp({ key, sessionKeyValue, binaryFragments: ['pdf/render'] });
    try {
      notSealed(await custom.inject({ method: 'GET', url: '/svc/pdf/render/1', headers: auth }));
      isSealed(await custom.inject({ method: 'GET', url: '/svc/document/download/1', headers: auth }), ['iv', 'ciphertext', 'tag']);
    } finally {
      await custom.close();
    }
  });
});
