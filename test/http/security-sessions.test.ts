/**
 * Security regressions: stolen refresh tokens, device binding and privilege escalation
 * (SPEC "Bearer tokens" 3 and 5, "Permissions"; issue 2 section 9). Each test is named after
 * the threat and asserts the exact status and error_code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn, type SignedIn } from '../harness/fixtures.js';

let t: TestApp;

const refresh = (token: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: token }, headers });
const validate = (token: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token, headers) });

beforeAll(async () => {
  t = await createTestApp();
  await seedUser(t.s, 'refresh.victim');
  await seedUser(t.s, 'race.victim');
  await seedUser(t.s, 'device.owner');
  await seedUser(t.s, 'plain.customer');
  await seedUser(t.s, 'root.admin', { roles: ['admin'] });
});
afterAll(async () => t.close());

describe('stolen refresh token (reuse detection)', () => {
  it('answers a replayed refresh token with 401 REFRESH_TOKEN_REUSED, revokes the family, ends the session and audits TOKEN_REUSE_DETECTED', async () => {
    const first = await signIn(t.app, 'refresh.victim');
    const rotated = await refresh(first.refresh_token);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const next = rotated.json() as SignedIn;
    expect((await validate(next.access_token)).statusCode).toBe(200);

    // The attacker (or the victim) presents the already spent token.
    expectError(await refresh(first.refresh_token), 401, 'REFRESH_TOKEN_REUSED');

    // The legitimate successor in the same family is refused too, and the session is over.
    expectError(await refresh(next.refresh_token), 401, 'TOKEN_REVOKED');
    expectError(await validate(next.access_token), 401, 'SESSION_INVALID');
    expectError(await validate(first.access_token), 401, 'SESSION_INVALID');

    const audit = await t.s.audit.query({ eventType: 'TOKEN_REUSE_DETECTED', limit: 10, offset: 0 });
    const entry = audit.entries.find((e) => (e.details as { session_id?: string }).session_id === first.session_id);
    expect(entry).toMatchObject({ event_type: 'TOKEN_REUSE_DETECTED', status: 'DETECTED', username: 'refresh.victim' });
  });

  it('a replayed refresh token of a mobile session is audited on the mobile channel (not the refresh request\'s default)', async () => {
    const device = { 'x-device-fingerprint': 'fp-refresh-victim-01' };
    const first = await signIn(t.app, 'refresh.victim', undefined, { channel: 'mobile', device_fingerprint: device['x-device-fingerprint'] });
    expect((await refresh(first.refresh_token, device)).statusCode).toBe(200);
    expectError(await refresh(first.refresh_token, device), 401, 'REFRESH_TOKEN_REUSED');
    const audit = await t.s.audit.query({ eventType: 'TOKEN_REUSE_DETECTED', limit: 50, offset: 0 });
    const entry = audit.entries.find((e) => (e.details as { session_id?: string }).session_id === first.session_id);
    expect(entry).toMatchObject({ status: 'DETECTED', channel: 'mobile' });
  });

  it('keeps refusing a replayed refresh token after the family is revoked: 401 REFRESH_TOKEN_REUSED', async () => {
    const first = await signIn(t.app, 'refresh.victim');
    expect((await refresh(first.refresh_token)).statusCode).toBe(200);
    expectError(await refresh(first.refresh_token), 401, 'REFRESH_TOKEN_REUSED');
    expectError(await refresh(first.refresh_token), 401, 'REFRESH_TOKEN_REUSED');
  });

  it('does not let reuse in one family end the user\'s other sessions', async () => {
    const other = await signIn(t.app, 'refresh.victim');
    const first = await signIn(t.app, 'refresh.victim');
    expect((await refresh(first.refresh_token)).statusCode).toBe(200);
    expectError(await refresh(first.refresh_token), 401, 'REFRESH_TOKEN_REUSED');
    expect((await validate(other.access_token)).statusCode).toBe(200);
  });

  it('lets exactly one of ten parallel refreshes with the same token succeed (race to double-spend)', async () => {
    const s = await signIn(t.app, 'race.victim');
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(s.refresh_token)));
    const ok = results.filter((r) => r.statusCode === 200);
    expect(ok.length, results.map((r) => r.body).join('\n')).toBe(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 401, 'REFRESH_TOKEN_REUSED');
    const rows = await t.s.database.db.selectFrom('refresh_tokens').select('used_at').where('family_id', '=', (await t.s.database.db.selectFrom('refresh_families').select('family_id').where('session_id', '=', s.session_id).executeTakeFirstOrThrow()).family_id).execute();
    expect(rows.length).toBe(2); // the spent one and the single successor: no second pair was issued
  });
});

describe('device binding (stolen token replayed from another device)', () => {
  let s: SignedIn;
  beforeAll(async () => {
    s = await signIn(t.app, 'device.owner', undefined, { device_fingerprint: 'fp-owner-laptop' });
  });

  it('refuses a bound token sent without X-Device-Fingerprint (or with an empty one) with 401 FINGERPRINT_REQUIRED, saying to send the header', async () => {
    for (const headers of [{}, { 'x-device-fingerprint': '' }] as Array<Record<string, string>>) {
      const body = expectError(await validate(s.access_token, headers), 401, 'FINGERPRINT_REQUIRED');
      expect(body.message).toContain('X-Device-Fingerprint');
    }
  });

  it('refuses a bound refresh token and a bound token on other routes without X-Device-Fingerprint with 401 FINGERPRINT_REQUIRED, spending nothing', async () => {
    const mine = await signIn(t.app, 'device.owner', undefined, { device_fingerprint: 'fp-owner-tablet' });
    expectError(await refresh(mine.refresh_token), 401, 'FINGERPRINT_REQUIRED');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(mine.access_token) }), 401, 'FINGERPRINT_REQUIRED');
    expect((await refresh(mine.refresh_token, { 'x-device-fingerprint': 'fp-owner-tablet' })).statusCode).toBe(200);
  });

  it('refuses a bound token sent with another device fingerprint with 401 FINGERPRINT_MISMATCH', async () => {
    for (const fp of ['fp-attacker', 'FP-OWNER-LAPTOP', 'fp-owner-laptop ', 'fp-owner-lapto', ' ']) {
      expectError(await validate(s.access_token, { 'x-device-fingerprint': fp }), 401, 'FINGERPRINT_MISMATCH');
    }
  });

  it('accepts the bound token from the same device: 200', async () => {
    expect((await validate(s.access_token, { 'x-device-fingerprint': 'fp-owner-laptop' })).statusCode).toBe(200);
  });

  it('refuses a bound refresh token from another device with 401 FINGERPRINT_MISMATCH', async () => {
    const mine = await signIn(t.app, 'device.owner', undefined, { device_fingerprint: 'fp-owner-phone' });
    expectError(await refresh(mine.refresh_token, { 'x-device-fingerprint': 'fp-attacker' }), 401, 'FINGERPRINT_MISMATCH');
    // The attempt did not spend the token: the owner's device still refreshes, and no reuse is flagged.
    expect((await refresh(mine.refresh_token, { 'x-device-fingerprint': 'fp-owner-phone' })).statusCode).toBe(200);
  });

  it('authenticates before reading the body: no token and a malformed body is 401 TOKEN_MISSING, not a schema hint', async () => {
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/admin/users', payload: { nope: 1 } }), 401, 'TOKEN_MISSING');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { 'content-type': 'application/json' }, payload: '{"broken' }), 401, 'TOKEN_MISSING');
    // Pre-auth routes that need a token (validate, password) authenticate after decryption
    // instead, so that their token errors are sealed (test/api/transport.test.ts).
  });

  it('refuses a bound token on other authenticated routes (logout) from another device with 401 FINGERPRINT_MISMATCH', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token, { 'x-device-fingerprint': 'fp-attacker' }) });
    expectError(res, 401, 'FINGERPRINT_MISMATCH');
    expect((await validate(s.access_token, { 'x-device-fingerprint': 'fp-owner-laptop' })).statusCode).toBe(200);
  });
});

describe('privilege escalation on administration routes', () => {
  const routes: Array<{ method: 'GET' | 'POST'; url: string; payload?: Record<string, unknown> }> = [
    { method: 'POST', url: '/api/v1/admin/users', payload: { username: 'sneaky.user', roles: ['admin'] } },
    { method: 'GET', url: '/api/v1/admin/users' },
    { method: 'GET', url: '/api/v1/admin/users?search=admin' },
    { method: 'POST', url: '/api/v1/admin/users/1/reset-password' },
    { method: 'POST', url: '/api/v1/admin/users/1/unlock' },
    { method: 'GET', url: '/api/v1/admin/audit' },
  ];

  it('refuses a non-admin token on every admin route with 403 PERMISSION_DENIED', async () => {
    const s = await signIn(t.app, 'plain.customer');
    for (const r of routes) {
      const res = await t.app.inject({ ...r, headers: bearer(s.access_token) });
      expectError(res, 403, 'PERMISSION_DENIED');
    }
    expect(await t.s.users.findByLogin('sneaky.user')).toBeUndefined();
  });

  it('refuses every admin route without a token with 401 TOKEN_MISSING', async () => {
    for (const r of routes) expectError(await t.app.inject(r), 401, 'TOKEN_MISSING');
  });

  it('refuses a forged admin claim on a customer token with 401 TOKEN_INVALID', async () => {
    const s = await signIn(t.app, 'plain.customer');
    const [h, p, sig] = s.access_token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, roles: ['admin'], permissions: ['users.create', 'users.read', 'users.update', 'audit.read'] })).toString('base64url');
    for (const r of routes) expectError(await t.app.inject({ ...r, headers: bearer(`${h}.${forged}.${sig}`) }), 401, 'TOKEN_INVALID');
  });

  it('control: the admin token is allowed on the same routes', async () => {
    const s = await signIn(t.app, 'root.admin');
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/admin/users', headers: bearer(s.access_token) });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses an admin token after logout (revoked token replay) with 401 TOKEN_REVOKED', async () => {
    const s = await signIn(t.app, 'root.admin');
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token) })).statusCode).toBe(200);
    for (const r of routes) expectError(await t.app.inject({ ...r, headers: bearer(s.access_token) }), 401, 'TOKEN_REVOKED');
  });
});
