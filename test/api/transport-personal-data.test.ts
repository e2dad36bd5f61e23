/**
 * Personal data leaves only sealed: with ENFORCE_TRANSPORT_ENCRYPTION=1, a route marked
 * `config: { personalData: true }` is refused without `x-encrypted: true` whatever the method
 * (422 ENCRYPTION_REQUIRED, nothing in the body but the error, nothing done), and answered sealed
 * under the session key when flagged. Checked on every marked GET of Strongroom (the OpenAPI
 * document names them, so a route marked or unmarked later shows here), through the SDK, and on
 * the plugin reused by another service.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrongroomClient, StrongroomError, type FetchLike } from '../../packages/client/src/index.js';
import { loadConfig } from '../../src/platform/config.js';
import { createHttpApp } from '../../src/platform/http/app.js';
import { Metrics } from '../../src/platform/observability/metrics.js';
import { createTransport } from '../../src/transport/plugin.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { ENCRYPTED, fetchServerPem, openPreAuth, openSession, preAuthBody, sessionBody } from '../harness/transport-client.js';

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;

const EMAIL = 'personal.data@bank.example';
const PHONE = '+254700555123';
const DEVICE_NAME = 'Wanjiru Pixel 8';
const PUSH_TOKEN = `fcm0001:APA91bH2x7k3Lq9Zr0Xc3A_${'p'.repeat(120)}-1`;
const USER_AGENT = 'StrongroomBank/5.2 (personal-data test)';

/** The GETs that answer a person's own data: each marked `personalData`. */
const OWN_GETS = [
  '/api/v1/auth/consent', '/api/v1/auth/gdpr/export', '/api/v1/auth/gdpr/portability', '/api/v1/auth/profile',
  '/api/v1/notifications/devices', '/api/v1/notifications/devices/{id}', '/api/v1/passkeys',
  '/api/v1/push-approval/requests/{id}', // where and from what device a sign-in asks the phone's approval
  '/api/v1/auth/sessions', // where you are signed in: each session's browser or app
  '/api/v1/auth/recoveries', // your recoveries and second-factor reset requests: what you lost, your reasons, the decisions
];
/** The operators' GETs that answer other people's data (contacts, addresses, devices, who did what): marked too. */
const ADMIN_GETS = [
  '/api/v1/admin/alerts', '/api/v1/admin/alerts/{id}', '/api/v1/admin/audit', '/api/v1/admin/audit/summary', '/api/v1/admin/breaches/{id}/affected', '/api/v1/admin/consent/purposes/{purpose}/subjects', '/api/v1/admin/device-bindings',
  '/api/v1/admin/gdpr/requests', '/api/v1/admin/recoveries', '/api/v1/admin/users', '/api/v1/admin/users/{id}', '/api/v1/admin/users/{id}/factors', '/api/v1/admin/users/{id}/passkeys', '/api/v1/admin/users/{id}/sessions',
];
const MARKED_GETS = [...OWN_GETS, ...ADMIN_GETS];

/** A refusal that holds nothing but the error: the four fields of an error body, in plaintext. */
function bareRefusal(res: Res): void {
  const body = expectError(res, 422, 'ENCRYPTION_REQUIRED');
  expect(Object.keys(body).sort()).toEqual(['details', 'error_code', 'message', 'status_code']);
  expect(Object.keys(body.details as object)).toEqual(['request_id']);
  expect(res.headers['x-encrypted']).toBeUndefined();
  for (const secret of [EMAIL, PHONE, DEVICE_NAME, USER_AGENT, 'personal.data', 'APA91']) expect(res.body).not.toContain(secret);
}

describe('ENFORCE_TRANSPORT_ENCRYPTION=1: GETs that answer personal data', () => {
  let t: TestApp;
  let token: string;
  let key: Buffer;
  let deviceId: string;
  let baseUrl: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1' } });
    await seedUser(t.s, 'personal.data', { email: EMAIL, phone: PHONE });
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(await fetchServerPem(t.app), { username: 'personal.data', password: STRONG_PASSWORD }) });
    expect(login.statusCode, login.body).toBe(200);
    const opened = openPreAuth(login.json());
    token = String(opened.body.access_token);
    key = opened.key;
    const sealedPost = async (url: string, body: unknown) => {
      const res = await t.app.inject({ method: 'POST', url, headers: bearer(token, { ...ENCRYPTED, 'user-agent': USER_AGENT }), payload: sessionBody(key, body) });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return openSession(key, res.json());
    };
    deviceId = String((await sealedPost('/api/v1/notifications/devices/register', { push_token: PUSH_TOKEN, platform: 'mobile', device_name: DEVICE_NAME })).id);
    await sealedPost('/api/v1/auth/consent', { consents: [{ purpose: 'terms_of_service', given: true, version: 1 }] });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => t?.close());

  const urls = (): string[] => [
    '/api/v1/auth/profile', '/api/v1/auth/consent', '/api/v1/auth/consent?history=true', '/api/v1/notifications/devices', `/api/v1/notifications/devices/${deviceId}`,
    '/api/v1/auth/gdpr/export', '/api/v1/auth/gdpr/export?format=csv', '/api/v1/auth/gdpr/portability', '/api/v1/passkeys', '/api/v1/auth/sessions',
    '/api/v1/auth/recoveries',
  ];

  it('the marked routes are exactly the GETs that answer contacts, addresses, devices or a copy of the records (the document lists ENCRYPTION_REQUIRED on them)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> };
    const marked = Object.entries(doc.paths)
      .filter(([, ops]) => JSON.stringify(ops.get?.responses?.['422'] ?? {}).includes('ENCRYPTION_REQUIRED'))
      .map(([path]) => path).sort();
    expect(marked).toEqual([...MARKED_GETS].sort());
  });

  it('personal data in the clear: each marked GET without x-encrypted is 422 ENCRYPTION_REQUIRED with nothing but the error, before any work', async () => {
    for (const url of urls()) {
      for (const headers of [bearer(token), bearer(token, { 'x-encrypted': 'false' }), {}]) bareRefusal(await t.app.inject({ method: 'GET', url, headers }));
    }
    // Nothing done: no export was collected or logged, and a route without the mark still answers a plaintext GET.
    expect(await t.s.db.selectFrom('gdpr_requests').select('id').execute()).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(token) })).statusCode).toBe(200);
  });

  it('flagged, each marked GET answers sealed under the session key, and the data is inside', async () => {
    const inside: Record<string, string[]> = {
      '/api/v1/auth/profile': [EMAIL, PHONE], '/api/v1/auth/consent?history=true': [USER_AGENT, '"client_address"'],
      '/api/v1/notifications/devices': [DEVICE_NAME], [`/api/v1/notifications/devices/${deviceId}`]: [DEVICE_NAME],
      '/api/v1/auth/gdpr/export': [EMAIL, DEVICE_NAME], '/api/v1/auth/gdpr/portability': [EMAIL],
    };
    for (const url of urls()) {
      const res = await t.app.inject({ method: 'GET', url, headers: bearer(token, ENCRYPTED) });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      expect(res.headers['x-encrypted']).toBe('true');
      expect(Object.keys(res.json()).sort()).toEqual(['ciphertext', 'iv', 'tag']);
      for (const secret of [EMAIL, PHONE, DEVICE_NAME, USER_AGENT]) expect(res.body).not.toContain(secret);
      const plain = JSON.stringify(openSession(key, res.json()));
      for (const expected of inside[url] ?? []) expect(plain, url).toContain(expected);
    }
  });

  it("operators' GETs of other people's data: each refused unsealed even to an administrator (422, nothing but the error), and answered sealed", async () => {
    await seedUser(t.s, 'privacy.admin', { roles: ['admin'] });
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(await fetchServerPem(t.app), { username: 'privacy.admin', password: STRONG_PASSWORD }) });
    expect(login.statusCode, login.body).toBe(200);
    const admin = openPreAuth(login.json());
    const adminToken = String(admin.body.access_token);
    const someone = '0190f1c2-7a3b-7c4d-8e5f-6a7b8c9d0e1f';
    const refusedUrls = ADMIN_GETS.map((p) => p.replace('{id}', someone).replace('{purpose}', 'terms_of_service'));
    for (const url of refusedUrls) bareRefusal(await t.app.inject({ method: 'GET', url, headers: bearer(adminToken) }));
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/admin/users?search=personal.data', headers: bearer(adminToken, ENCRYPTED) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain(EMAIL);
    expect(JSON.stringify(openSession(admin.key, res.json()))).toContain(EMAIL);
  });

  it('the SDK flags its GETs when it holds a session key and opens the sealed answer; without a key it is refused', async () => {
    const sent: Array<{ path: string; flagged: string | null }> = [];
    const recording: FetchLike = async (input, init) => {
      sent.push({ path: new URL(input).pathname, flagged: new Headers(init.headers).get('x-encrypted') });
      return globalThis.fetch(input, init);
    };
    const sdk = new StrongroomClient({ baseUrl, fetch: recording });
    await sdk.login({ username: 'personal.data', password: STRONG_PASSWORD });
    const profile = await sdk.request<{ profile: { email: string; phone: string } }>('GET', '/api/v1/auth/profile');
    expect(profile.profile).toMatchObject({ email: EMAIL, phone: PHONE });
    expect(await sdk.request('GET', '/api/v1/auth/consent?history=true')).toMatchObject({ history: [expect.objectContaining({ user_agent: USER_AGENT })] });
    expect(await sdk.downloadExport('json')).toMatchObject({ user_id: expect.any(String) });
    expect(sent.filter((s) => s.path !== '/api/v1/auth/public_key').every((s) => s.flagged === 'true')).toBe(true);

    // The same session resumed without its key (a client that does not encrypt): plaintext GETs, refused.
    const keyless = new StrongroomClient({ baseUrl });
    await keyless.setSession({ ...sdk.getSession()!, sessionKey: null });
    const err = await keyless.request('GET', '/api/v1/auth/profile').then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(StrongroomError);
    expect(err).toMatchObject({ status: 422, errorCode: 'ENCRYPTION_REQUIRED' });
  });
});

describe('ENFORCE_TRANSPORT_ENCRYPTION=0', () => {
  it('a marked GET without x-encrypted is answered in plaintext, as before', async () => {
    const t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '0' } });
    try {
      await seedUser(t.s, 'personal.plain', { email: EMAIL });
      const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'personal.plain', password: STRONG_PASSWORD } });
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/auth/profile', headers: bearer(String(login.json().access_token)) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['x-encrypted']).toBeUndefined();
      expect(res.json()).toMatchObject({ profile: { email: EMAIL } });
    } finally {
      await t.close();
    }
  });
});

describe('the plugin reused by another service: `personalData` on its own routes', () => {
  it('refuses an unflagged request to a marked route whatever the method (nothing runs), seals it flagged; unmarked GETs are left alone', async () => {
    const sessionKey = randomBytes(32);
    const transport = createTransport({
      keys: { current: () => { throw new Error('no pre-auth here'); }, live: () => [] },
      enforce: true,
      sessionKey: async (request) => (request.headers.authorization === 'Bearer good' ? sessionKey : null),
    });
    const app = createHttpApp({ config: loadConfig({ NODE_ENV: 'test' }), log: pino({ level: 'silent' }), metrics: new Metrics(), envelope: transport });
    let ran = 0;
    const answer = async () => {
      ran += 1;
      return { iban: 'KE12 3456 7890' };
    };
    for (const method of ['GET', 'DELETE'] as const) app.route({ method, url: '/svc/me', config: { personalData: true }, handler: answer });
    app.get('/svc/rates', async () => ({ usd: 129.5 }));
    await app.ready();
    try {
      for (const method of ['GET', 'DELETE'] as const) {
        const plain = await app.inject({ method, url: '/svc/me', headers: { authorization: 'Bearer good' } });
        expectError(plain, 422, 'ENCRYPTION_REQUIRED');
        expect(plain.body).not.toContain('KE12');
        const sealed = await app.inject({ method, url: '/svc/me', headers: { authorization: 'Bearer good', ...ENCRYPTED } });
        expect(sealed.headers['x-encrypted']).toBe('true');
        expect(openSession(sessionKey, sealed.json())).toEqual({ iban: 'KE12 3456 7890' });
      }
      expect(ran).toBe(2); // only the flagged ones
      const rates = await app.inject({ method: 'GET', url: '/svc/rates' });
      expect(rates.statusCode).toBe(200);
      expect(rates.json()).toEqual({ usd: 129.5 });
    } finally {
      await app.close();
    }
  });
});
