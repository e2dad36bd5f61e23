import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { ENCRYPTED, openPreAuth, openSession, preAuthBody, fetchServerPem, sessionBody } from '../harness/transport-client.js';

let t: TestApp;
let serverPem: string;

beforeAll(async () => {
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1' } });
  await seedUser(t.s, 'transport.user');
  serverPem = await fetchServerPem(t.app);
});
afterAll(async () => t.close());

async function encryptedLogin(password = STRONG_PASSWORD) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(serverPem, { username: 'transport.user', password }) });
  return { res, opened: openPreAuth(res.json()) };
}

describe('transport encryption end to end', () => {
  it('signs in encrypted: the answer is sealed to the client key, and its AES key is the session key', async () => {
    const { res, opened } = await encryptedLogin();
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['ciphertext', 'encrypted_key', 'nonce', 'tag']);
    expect(res.headers['x-content-sha256']).toBe(createHash('sha256').update(res.rawPayload).digest('hex'));
    expect(opened.body).toMatchObject({ token_type: 'bearer' });
    const session = await t.s.sessions.get(String(opened.body.session_id));
    expect(session?.aesKey?.equals(opened.key)).toBe(true);
  });

  it('encrypts a failed sign-in too', async () => {
    const { res, opened } = await encryptedLogin('Wrong#Passw0rd!');
    expect(res.statusCode).toBe(401);
    expect(opened.body).toMatchObject({ status_code: 401, error_code: 'INVALID_CREDENTIALS' });
  });

  it('calls an authenticated route under the session key, both ways', async () => {
    const { opened } = await encryptedLogin();
    const token = String(opened.body.access_token);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(token) }, payload: sessionBody(opened.key, { all_sessions: false }) });
    expect(res.statusCode).toBe(200);
    expect(openSession(opened.key, res.json())).toEqual({ status: 'success', sessions_ended: 1 });
  });

  it('refresh is pre-auth and hands out a new session key', async () => {
    const { opened } = await encryptedLogin();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', headers: ENCRYPTED, payload: preAuthBody(serverPem, { refresh_token: opened.body.refresh_token }) });
    expect(res.statusCode).toBe(200);
    const next = openPreAuth(res.json());
    expect(next.key.equals(opened.key)).toBe(false);
    const token = String(next.body.access_token);
    const ok = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(token) }, payload: sessionBody(next.key, {}) });
    expect(ok.statusCode).toBe(200);
  });

  it('seals token errors on pre-auth routes that need a bearer token (validate)', async () => {
    const { opened } = await encryptedLogin();
    t.clock.advance(61 * 60_000); // the access token has expired
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: { ...ENCRYPTED, ...bearer(String(opened.body.access_token)) }, payload: preAuthBody(serverPem, {}) });
    expect(res.statusCode).toBe(401);
    expect(openPreAuth(res.json()).body).toMatchObject({ status_code: 401, error_code: 'TOKEN_EXPIRED' });
  });

  it('refuses an unencrypted write with 422 ENCRYPTION_REQUIRED when enforcement is on', async () => {
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'transport.user', password: STRONG_PASSWORD } }), 422, 'ENCRYPTION_REQUIRED');
  });

  it('leaves exempt paths alone', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/public_key' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });

  it('answers a tampered ciphertext with a plaintext 400 DECRYPTION_FAILED', async () => {
    const body = preAuthBody(serverPem, { username: 'transport.user', password: STRONG_PASSWORD });
    const ct = Buffer.from(body.data.ciphertext, 'base64');
    ct[0]! ^= 1;
    body.data.ciphertext = ct.toString('base64');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: body }), 400, 'DECRYPTION_FAILED');
  });
});
