/**
 * The SDK against a real Strongroom HTTP server in this process, with transport encryption
 * enforced, over the real global fetch. A recording fetch shows what went over the wire.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness/app.js';
import { Authenticator } from '../../../test/harness/authenticator.js';
import { OTHER_PASSWORD, seedUser, STRONG_PASSWORD } from '../../../test/harness/fixtures.js';
import { generateClientKeyPair } from '../src/crypto.js';
import { DEFAULT_PREAUTH_ROUTES, StrongroomClient, StrongroomError, type FetchLike, type StoredSession, type StrongroomClientOptions } from '../src/index.js';

const ACCESS_TTL_MINUTES = 5;
let t: TestApp;
let baseUrl: string;
/** One client key pair for most clients here, to save RSA key generations; some generate their own. */
const sharedKeyPair = await generateClientKeyPair();

beforeAll(async () => {
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', ACCESS_TOKEN_EXPIRE_MINUTES: String(ACCESS_TTL_MINUTES) } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  for (const name of ['sdk.amina', 'sdk.refresh', 'sdk.logout', 'sdk.changer', 'sdk.wrongpass', 'sdk.expiry', 'sdk.device', 'sdk.rotation', 'sdk.retry']) await seedUser(t.s, name);
  await seedUser(t.s, 'sdk.admin', { roles: ['admin'] });
  await seedUser(t.s, 'sdk.readme', { roles: ['admin'] });
});
afterAll(async () => t?.close());

interface Wire {
  method: string;
  path: string;
  requestHeaders: Record<string, string>;
  requestBody: string | undefined;
  status: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
}

/** The real fetch, recording each exchange. */
function recordingFetch(): { fetch: FetchLike; wire: Wire[] } {
  const wire: Wire[] = [];
  const fetch: FetchLike = async (input, init) => {
    const res = await globalThis.fetch(input, init);
    wire.push({
      method: init.method ?? 'GET',
      path: new URL(input).pathname,
      requestHeaders: Object.fromEntries(new Headers(init.headers).entries()),
      requestBody: typeof init.body === 'string' ? init.body : undefined,
      status: res.status,
      responseHeaders: Object.fromEntries(res.headers.entries()),
      responseBody: await res.clone().text(),
    });
    return res;
  };
  return { fetch, wire };
}

function client(opts: Partial<StrongroomClientOptions> = {}): StrongroomClient {
  return new StrongroomClient({ baseUrl, keyPair: sharedKeyPair, ...opts });
}

async function signedIn(username: string, opts: Partial<StrongroomClientOptions> = {}): Promise<StrongroomClient> {
  const c = client(opts);
  await c.login({ username, password: STRONG_PASSWORD });
  return c;
}

async function failure(p: Promise<unknown>): Promise<StrongroomError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(StrongroomError);
  return err as StrongroomError;
}

async function serverSessionKey(sessionId: string): Promise<string | undefined> {
  return (await t.s.sessions.get(sessionId))?.aesKey?.toString('base64');
}

describe('public key', () => {
  it('fetches the server key once and caches it', async () => {
    const { fetch, wire } = recordingFetch();
    const c = client({ fetch });
    const info = await c.publicKey();
    expect(info).toMatchObject({ algorithm: 'RSA-2048', key_id: t.s.transportKeys.current().keyId });
    expect(info.public_key).toContain('-----BEGIN PUBLIC KEY-----');
    expect(await c.publicKey()).toEqual(info);
    expect(wire.map((w) => w.path)).toEqual(['/api/v1/auth/public_key']);
    expect(wire[0]!.requestHeaders['x-encrypted']).toBeUndefined();
    await c.publicKey({ force: true });
    expect(wire).toHaveLength(2);
  });
});

describe('encrypted sign-in', () => {
  it('signs in with an encrypted body and keeps the session key the server holds', async () => {
    const { fetch, wire } = recordingFetch();
    const c = client({ fetch, keyPair: undefined }); // generates its own key pair
    const r = await c.login({ username: 'sdk.amina', password: STRONG_PASSWORD, channel: 'mobile', deviceFingerprint: 'sdk-test-device-01' });
    expect(r).toMatchObject({ token_type: 'bearer', user_profile: { username: 'sdk.amina', channel: 'mobile' } });
    expect(c.signedIn).toBe(true);

    const login = wire.find((w) => w.path === '/api/v1/auth/login/mobile')!;
    expect(login.requestHeaders['x-encrypted']).toBe('true');
    expect(login.requestHeaders.authorization).toBeUndefined();
    expect(login.requestBody).not.toContain(STRONG_PASSWORD);
    expect(login.requestBody).not.toContain('sdk.amina');
    const sent = JSON.parse(login.requestBody!) as { data: Record<string, string> };
    expect(Object.keys(sent.data).sort()).toEqual(['ciphertext', 'encrypted_key', 'key_id', 'nonce', 'tag']);
    expect(login.status).toBe(200);
    expect(login.responseHeaders['x-encrypted']).toBe('true');
    expect(Object.keys(JSON.parse(login.responseBody) as object).sort()).toEqual(['ciphertext', 'encrypted_key', 'nonce', 'tag']);
    expect(login.responseBody).not.toContain(r.access_token);

    const session = c.getSession()!;
    expect(session).toMatchObject({ accessToken: r.access_token, refreshToken: r.refresh_token, sessionId: r.session_id });
    expect(session.sessionKey).toBe(await serverSessionKey(r.session_id));
  });

  it('maps a wrong password to StrongroomError 401 INVALID_CREDENTIALS, decrypted from a sealed answer', async () => {
    const { fetch, wire } = recordingFetch();
    const c = client({ fetch });
    const err = await failure(c.login({ username: 'sdk.wrongpass', password: 'Wrong#Passw0rd!x' }));
    expect(err).toMatchObject({ status: 401, errorCode: 'INVALID_CREDENTIALS', name: 'StrongroomError' });
    expect(typeof err.message).toBe('string');
    expect(err.details).toEqual(expect.any(Object));
    expect(err.requestId).toBe(wire.at(-1)!.responseHeaders['x-request-id']); // the server's request id, from the sealed body
    expect(err.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(wire.at(-1)!.responseHeaders['x-encrypted']).toBe('true');
    expect(c.signedIn).toBe(false);
  });

  it('maps a plaintext refusal too: a client that does not encrypt gets 422 ENCRYPTION_REQUIRED', async () => {
    const err = await failure(client({ encrypt: false }).login({ username: 'sdk.amina', password: STRONG_PASSWORD }));
    expect(err).toMatchObject({ status: 422, errorCode: 'ENCRYPTION_REQUIRED' });
  });

  it('refuses methods that need a session before sign-in, without a request', async () => {
    const { fetch, wire } = recordingFetch();
    const c = client({ fetch });
    expect(await failure(c.validate())).toMatchObject({ status: 0, errorCode: 'NOT_SIGNED_IN' });
    expect(await failure(c.request('POST', '/api/v1/auth/logout', {}))).toMatchObject({ status: 0, errorCode: 'NOT_SIGNED_IN' });
    expect(wire).toHaveLength(0);
  });
});

describe('authenticated encrypted calls', () => {
  it('validates the session (pre-auth route with a bearer token)', async () => {
    const c = await signedIn('sdk.amina');
    const v = await c.validate();
    expect(v).toMatchObject({ valid: true, session_id: c.getSession()!.sessionId, roles: ['customer'] });
  });

  it('GETs an admin route with the answer sealed under the session key', async () => {
    const { fetch, wire } = recordingFetch();
    const c = await signedIn('sdk.admin', { fetch });
    const r = await c.request<{ users: { username: string }[]; total: number }>('GET', '/api/v1/admin/users?search=sdk.a');
    expect(r.users.map((u) => u.username).sort()).toEqual(['sdk.admin', 'sdk.amina']);
    const get = wire.at(-1)!;
    expect(get.requestHeaders).toMatchObject({ 'x-encrypted': 'true', authorization: expect.stringMatching(/^Bearer /) });
    expect(Object.keys(JSON.parse(get.responseBody) as object).sort()).toEqual(['ciphertext', 'iv', 'tag']);
    expect(get.responseBody).not.toContain('sdk.amina');
  });

  it('POSTs to an admin route with the body sealed under the session key, and maps a sealed error', async () => {
    const { fetch, wire } = recordingFetch();
    const c = await signedIn('sdk.admin', { fetch });
    const created = await c.request<{ user: { username: string }; temporary_password: string }>('POST', '/api/v1/admin/users', { username: 'sdk.created', roles: ['customer'] });
    expect(created.user.username).toBe('sdk.created');
    const post = wire.at(-1)!;
    expect(post.status).toBe(201);
    expect(Object.keys((JSON.parse(post.requestBody!) as { data: object }).data).sort()).toEqual(['ciphertext', 'iv', 'tag']);
    expect(post.requestBody).not.toContain('sdk.created');

    const dup = await failure(c.request('POST', '/api/v1/admin/users', { username: 'sdk.created', roles: ['customer'] }));
    expect(dup).toMatchObject({ status: 409, errorCode: 'USER_EXISTS' });
    expect(wire.at(-1)!.responseHeaders['x-encrypted']).toBe('true');
  });

  it('maps 403 PERMISSION_DENIED for a customer on an admin route', async () => {
    const c = await signedIn('sdk.amina');
    expect(await failure(c.request('GET', '/api/v1/admin/users'))).toMatchObject({ status: 403, errorCode: 'PERMISSION_DENIED' });
  });

  it('logs out: the session ends on the server and in the client', async () => {
    const c = await signedIn('sdk.logout');
    const saved = c.getSession()!;
    expect(await c.logout()).toEqual({ status: 'success', sessions_ended: 1 });
    expect(c.signedIn).toBe(false);
    const stale = client({ session: saved });
    expect((await failure(stale.validate())).status).toBe(401);
    expect(stale.signedIn).toBe(true); // validate does not forget a session; logout and refresh do
  });

  it('logs out every session with allSessions', async () => {
    const a = await signedIn('sdk.logout');
    const b = await signedIn('sdk.logout');
    expect(await a.logout({ allSessions: true })).toMatchObject({ sessions_ended: 2 });
    expect((await failure(b.validate())).status).toBe(401);
  });
});

describe('refresh', () => {
  it('gets a new token pair and a new session key; the new key works, the old one is refused', async () => {
    const changes: (StoredSession | null)[] = [];
    const c = await signedIn('sdk.refresh', { onSessionChange: (s) => changes.push(s) });
    const before = c.getSession()!;
    const r = await c.refresh();
    const after = c.getSession()!;
    expect(r.session_id).toBe(before.sessionId);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.sessionKey).not.toBe(before.sessionKey);
    expect(after.sessionKey).toBe(await serverSessionKey(before.sessionId));
    expect(changes).toEqual([before, after]);

    // The new key works for a session-encrypted call.
    expect((await c.validate()).session_id).toBe(before.sessionId);
    // The old key, with the new token, is refused: the body cannot be decrypted.
    const stale = client({ session: { ...after, sessionKey: before.sessionKey } });
    expect(await failure(stale.logout())).toMatchObject({ status: 400, errorCode: 'DECRYPTION_FAILED' });
    expect(await c.logout()).toMatchObject({ sessions_ended: 1 });
  });

  it('refreshes an expired access token once and retries (401 TOKEN_EXPIRED), concurrent calls sharing one refresh', async () => {
    const { fetch, wire } = recordingFetch();
    const c = await signedIn('sdk.expiry', { fetch });
    const before = c.getSession()!;
    t.clock.advance((ACCESS_TTL_MINUTES + 1) * 60_000);
    const [v1, v2] = await Promise.all([c.validate(), c.validate()]);
    expect(v1.session_id).toBe(before.sessionId);
    expect(v2.session_id).toBe(before.sessionId);
    expect(wire.filter((w) => w.path === '/api/v1/auth/refresh')).toHaveLength(1);
    // validate is a pre-auth route: its token errors come sealed to the client key, and the
    // SDK opened them to see TOKEN_EXPIRED (it refreshed exactly once above).
    const refused = wire.filter((w) => w.status === 401).map((w) => Object.keys(JSON.parse(w.responseBody) as object).sort());
    expect(refused).toEqual([['ciphertext', 'encrypted_key', 'nonce', 'tag'], ['ciphertext', 'encrypted_key', 'nonce', 'tag']]);
    expect(c.getSession()!.sessionKey).not.toBe(before.sessionKey);

    const manual = await signedIn('sdk.expiry', { autoRefresh: false });
    t.clock.advance((ACCESS_TTL_MINUTES + 1) * 60_000);
    expect(await failure(manual.validate())).toMatchObject({ status: 401, errorCode: 'TOKEN_EXPIRED' });
  });

  it('forgets the session when the refresh token is refused', async () => {
    const c = await signedIn('sdk.refresh');
    const saved = c.getSession()!;
    await c.refresh();
    const copy = client({ session: saved });
    expect(await failure(copy.refresh())).toMatchObject({ status: 401, errorCode: 'REFRESH_TOKEN_REUSED' });
    expect(copy.signedIn).toBe(false);
  });
});

describe('passwords', () => {
  it('changes the password: this session stays, the new password signs in', async () => {
    const c = await signedIn('sdk.changer');
    const wrong = await failure(c.changePassword({ currentPassword: 'Not#TheRight1!', newPassword: OTHER_PASSWORD }));
    expect(wrong).toMatchObject({ status: 401, errorCode: 'INVALID_CREDENTIALS' });
    const weak = await failure(c.changePassword({ currentPassword: STRONG_PASSWORD, newPassword: 'short' }));
    expect(weak).toMatchObject({ status: 422, errorCode: 'PASSWORD_POLICY_VIOLATION' });
    expect(weak.details.violations).toEqual(expect.arrayContaining([expect.objectContaining({ rule: 'min_length' })]));

    expect(await c.changePassword({ currentPassword: STRONG_PASSWORD, newPassword: OTHER_PASSWORD })).toMatchObject({ status: 'success' });
    expect((await c.validate()).valid).toBe(true);
    expect(await failure(client().login({ username: 'sdk.changer', password: STRONG_PASSWORD }))).toMatchObject({ errorCode: 'INVALID_CREDENTIALS' });
    expect((await client().login({ username: 'sdk.changer', password: OTHER_PASSWORD })).token_type).toBe('bearer');
  });

  it('follows the forced change: 403 PASSWORD_CHANGE_REQUIRED, then resetPassword, then sign-in', async () => {
    const adminClient = await signedIn('sdk.admin');
    const { temporary_password } = await adminClient.request<{ temporary_password: string }>('POST', '/api/v1/admin/users', { username: 'sdk.newcomer', roles: ['customer'] });
    const c = client();
    const err = await failure(c.login({ username: 'sdk.newcomer', password: temporary_password }));
    expect(err).toMatchObject({ status: 403, errorCode: 'PASSWORD_CHANGE_REQUIRED' });
    const resetToken = err.details.reset_token;
    expect(typeof resetToken).toBe('string');
    expect(await c.resetPassword({ resetToken: String(resetToken), newPassword: STRONG_PASSWORD })).toMatchObject({ status: 'success' });
    expect(await failure(c.resetPassword({ resetToken: String(resetToken), newPassword: OTHER_PASSWORD }))).toMatchObject({ status: 401 });
    expect((await c.login({ username: 'sdk.newcomer', password: STRONG_PASSWORD })).user_profile.username).toBe('sdk.newcomer');
  });
});

describe('second factors', () => {
  it('enrols an authenticator by its QR code, then finishes a sign-in with a code and with a backup code', async () => {
    await seedUser(t.s, 'sdk.totp');
    const c = await signedIn('sdk.totp');
    const setup = await c.request<{ qr_code: string }>('POST', '/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD });
    const app = Authenticator.scan(setup.qr_code);
    const { backup_codes } = await c.request<{ backup_codes: string[] }>('POST', '/api/v1/2fa/totp/verify', { code: app.code(t.clock.now()) });
    expect(backup_codes).toHaveLength(10);
    t.clock.advance(30_000); // the next code: the enrolment's step is spent

    const fresh = client();
    const challenge = await failure(fresh.login({ username: 'sdk.totp', password: STRONG_PASSWORD }));
    expect(challenge).toMatchObject({ status: 401, errorCode: '2FA_REQUIRED' });
    expect(challenge.details.methods).toEqual(['totp', 'backup_code']);
    expect(fresh.signedIn).toBe(false);
    const done = await fresh.verifyTotp({ twoFactorToken: String(challenge.details.two_factor_token), code: app.code(t.clock.now()) });
    expect(done.user_profile.mfa_completed).toBe(true);
    expect(fresh.signedIn).toBe(true);
    expect(fresh.getSession()!.sessionKey).toBe(await serverSessionKey(done.session_id)); // the encrypted answer handed over the session key
    expect((await fresh.validate()).session_id).toBe(done.session_id);

    const other = client();
    const again = await failure(other.login({ username: 'sdk.totp', password: STRONG_PASSWORD }));
    await other.verifyBackupCode({ twoFactorToken: String(again.details.two_factor_token), code: backup_codes[0]! });
    expect((await other.validate()).valid).toBe(true);
  });

  it('finishes a sign-in with a one-time code by SMS (development outbox)', async () => {
    const phone = '+254711000222';
    await seedUser(t.s, 'sdk.sms', { phone });
    const c = await signedIn('sdk.sms');
    await c.request('POST', '/api/v1/2fa/otp/setup', { method: 'sms' });
    await c.request('POST', '/api/v1/2fa/otp/verify', { method: 'sms', code: t.s.otp.outbox.latest(phone)!.code });

    const fresh = client();
    const challenge = await failure(fresh.login({ username: 'sdk.sms', password: STRONG_PASSWORD }));
    expect(challenge.details.methods).toEqual(['sms']);
    const twoFactorToken = String(challenge.details.two_factor_token);
    expect(await fresh.requestCode({ twoFactorToken, method: 'sms' })).toMatchObject({ method: 'sms', destination: '+2547****22', expires_in: 300 });
    const code = t.s.otp.outbox.latest(phone)!.code;
    const wrong = await failure(fresh.validateCode({ twoFactorToken, code: code === '000000' ? '111111' : '000000' }));
    expect(wrong).toMatchObject({ status: 401, errorCode: 'OTP_INVALID' });
    const done = await fresh.validateCode({ twoFactorToken, code });
    expect(done.user_profile.mfa_completed).toBe(true);
    expect((await fresh.validate()).valid).toBe(true);
  });
});

describe('device binding', () => {
  it('sends X-Device-Fingerprint on every request, and the session is bound to it', async () => {
    const { fetch, wire } = recordingFetch();
    const c = await signedIn('sdk.device', { fetch, deviceFingerprint: 'sdk-device-7f3a' });
    await c.validate();
    await c.refresh();
    await c.request('GET', '/api/v1/admin/users').catch(() => undefined);
    expect(wire.length).toBeGreaterThanOrEqual(5);
    for (const w of wire) expect(w.requestHeaders['x-device-fingerprint']).toBe('sdk-device-7f3a');
    const without = client({ session: c.getSession() });
    expect(await failure(without.validate())).toMatchObject({ status: 401, errorCode: 'FINGERPRINT_REQUIRED' });
    const elsewhere = client({ session: c.getSession(), deviceFingerprint: 'another-device' });
    expect(await failure(elsewhere.validate())).toMatchObject({ status: 401, errorCode: 'FINGERPRINT_MISMATCH' });
    expect((await c.validate()).valid).toBe(true);
  });
});

describe('server key rotation', () => {
  it('keeps working with the previous key, and re-keys once the previous key is revoked', async () => {
    const { fetch, wire } = recordingFetch();
    const c = await signedIn('sdk.rotation', { fetch });
    const oldKeyId = c.serverKeyId;
    expect(oldKeyId).toBe(t.s.transportKeys.current().keyId);

    const newer = await t.s.transportKeys.rotate();
    expect(newer).not.toBe(oldKeyId);
    wire.length = 0;
    expect((await c.validate()).valid).toBe(true);
    expect(c.serverKeyId).toBe(oldKeyId); // the previous key is still accepted: no refetch
    expect(wire.map((w) => `${w.path} ${w.status}`)).toEqual(['/api/v1/auth/validate 200']);

    const newest = await t.s.transportKeys.rotate({ revokePrevious: true });
    wire.length = 0;
    expect((await c.validate()).valid).toBe(true);
    expect(c.serverKeyId).toBe(newest);
    expect(wire.map((w) => `${w.path} ${w.status}`)).toEqual(['/api/v1/auth/validate 400', '/api/v1/auth/public_key 200', '/api/v1/auth/validate 200']);
    expect((JSON.parse(wire[0]!.responseBody) as { error_code: string }).error_code).toBe('DECRYPTION_FAILED');
    // A fresh sign-in works too, and a refresh.
    await c.refresh();
    expect((await signedIn('sdk.rotation')).serverKeyId).toBe(newest);
  });

  it('retries a DECRYPTION_FAILED only once', async () => {
    const { fetch: real, wire } = recordingFetch();
    // A man in the middle that flips a bit of every pre-auth ciphertext.
    const tamper: FetchLike = async (input, init) => {
      if (typeof init.body === 'string' && init.body.includes('encrypted_key')) {
        const body = JSON.parse(init.body) as { data: { ciphertext: string } };
        const ct = Buffer.from(body.data.ciphertext, 'base64');
        ct[0]! ^= 1;
        body.data.ciphertext = ct.toString('base64');
        return real(input, { ...init, body: JSON.stringify(body) });
      }
      return real(input, init);
    };
    const err = await failure(client({ fetch: tamper }).login({ username: 'sdk.retry', password: STRONG_PASSWORD }));
    expect(err).toMatchObject({ status: 400, errorCode: 'DECRYPTION_FAILED' });
    expect(wire.map((w) => `${w.path} ${w.status}`)).toEqual([
      '/api/v1/auth/public_key 200', '/api/v1/auth/login 400', '/api/v1/auth/public_key 200', '/api/v1/auth/login 400',
    ]);
  });
});

describe('against a fake server', () => {
  const fake = (status: number, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }): FetchLike => async (input) => {
    if (new URL(input).pathname === '/api/v1/auth/public_key') return globalThis.fetch(input);
    return new Response(body, { status, headers });
  };

  it('a plaintext success to an encrypted request is INVALID_RESPONSE, and no session is kept', async () => {
    const c = client({ fetch: fake(200, JSON.stringify({ access_token: 'a', refresh_token: 'r', session_id: 's', expires_in: 60 })) });
    expect(await failure(c.login({ username: 'x', password: 'y' }))).toMatchObject({ status: 200, errorCode: 'INVALID_RESPONSE' });
    expect(c.signedIn).toBe(false);
  });

  it('a sealed answer that does not open is INVALID_RESPONSE', async () => {
    const sealed = JSON.stringify({ encrypted_key: Buffer.alloc(256).toString('base64'), ciphertext: 'AAAA', nonce: Buffer.alloc(12).toString('base64'), tag: Buffer.alloc(16).toString('base64') });
    const c = client({ fetch: fake(200, sealed, { 'content-type': 'application/json', 'x-encrypted': 'true' }) });
    expect(await failure(c.login({ username: 'x', password: 'y' }))).toMatchObject({ errorCode: 'INVALID_RESPONSE' });
  });

  it('encrypts the routes configured as pre-auth', async () => {
    const bodies: string[] = [];
    const capture: FetchLike = async (input, init) => {
      if (new URL(input).pathname === '/api/v1/auth/public_key') return globalThis.fetch(input);
      bodies.push(String(init.body));
      return new Response('{}', { status: 500, headers: { 'content-type': 'application/json' } });
    };
    const c = client({ fetch: capture, preAuthRoutes: [...DEFAULT_PREAUTH_ROUTES, '/api/v1/partner/enrol'] });
    await c.request('POST', '/api/v1/partner/enrol', { msisdn: '+254700000001' }).catch(() => undefined);
    const sent = JSON.parse(bodies[0]!) as { data: Record<string, string> };
    expect(Object.keys(sent.data).sort()).toEqual(['ciphertext', 'encrypted_key', 'key_id', 'nonce', 'tag']);
    expect(bodies[0]).not.toContain('254700000001');
  });

  it('an error without SPEC body, and a network failure, are still StrongroomErrors', async () => {
    expect(await failure(client({ fetch: fake(502, '<html>bad gateway</html>', { 'content-type': 'text/html' }) }).login({ username: 'x', password: 'y' }))).toMatchObject({ status: 502, errorCode: 'INVALID_RESPONSE' });
    const down = client({ fetch: async () => { throw new TypeError('fetch failed'); } });
    expect(await failure(down.publicKey())).toMatchObject({ status: 0, errorCode: 'NETWORK_ERROR' });
  });
});

describe('README', () => {
  it('its quick example runs as written against a server that enforces encryption', async () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const readme = readFileSync(path.join(here, '../README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    expect(example.trim().split('\n').length).toBeLessThanOrEqual(16);
    const source = example
      .replace("'@strongroom/client'", JSON.stringify(path.join(here, '../src/index.ts')))
      .replace("'https://auth.bank.example'", JSON.stringify(baseUrl))
      .replace("'amina.otieno'", "'sdk.readme'")
      .replace("'Vt7#qLm2!xRp9$'", JSON.stringify(STRONG_PASSWORD));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sdk-readme-'));
    const file = path.join(dir, 'example.mjs');
    writeFileSync(file, (await transform(source, { loader: 'ts', format: 'esm' })).code);
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      await import(pathToFileURL(file).href);
      expect(error).not.toHaveBeenCalled();
      expect(log.mock.calls).toEqual([['signed in as sdk.readme'], [true, expect.any(String), expect.any(Number)]]);
    } finally {
      log.mockRestore();
      error.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
