/**
 * The MFA gate with TOTP (issue 4 sections 1 and 2): with MFA_REQUIRED_ROLES=staff, a staff
 * user without a factor gets 403 MFA_SETUP_INCOMPLETE and enrols TOTP with the setup token,
 * which finishes the sign-in; a customer outside those roles signs in with the password alone;
 * setup and sign-in 2FA tokens are not interchangeable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { Authenticator, enrolTotp } from '../harness/authenticator.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, type SignedIn } from '../harness/fixtures.js';
import { ENCRYPTED, openPreAuth, preAuthBody, fetchServerPem } from '../harness/transport-client.js';

interface SetupIncomplete { two_factor_token: string; expires_in: number; setup_methods: string[]; next_step: string }
interface Profile { user: { uuid: string }; user_profile: { mfa_completed: boolean; roles: string[] } }

let t: TestApp;
let seq = 0;

beforeAll(async () => {
  t = await createTestApp({ env: { MFA_REQUIRED_ROLES: 'staff' } });
});
afterAll(async () => t.close());

const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload, headers });

async function staff(extra: Record<string, unknown> = {}): Promise<{ username: string; gate: SetupIncomplete }> {
  const username = `staff.member${++seq}`;
  await seedUser(t.s, username, { roles: ['staff'] });
  const gate = expectError(await login(t.app, username, STRONG_PASSWORD, extra), 403, 'MFA_SETUP_INCOMPLETE').details as unknown as SetupIncomplete;
  return { username, gate };
}

async function setupWith(token: string, headers: Record<string, string> = {}): Promise<Authenticator> {
  const res = await post('/api/v1/2fa/totp/setup', { two_factor_token: token }, headers);
  expect(res.statusCode, res.body).toBe(200);
  return Authenticator.scan(res.json<{ qr_code: string }>().qr_code);
}

describe('a role that requires MFA', () => {
  it('staff without a factor: 403 MFA_SETUP_INCOMPLETE, then setup and verify with its token finish the sign-in', async () => {
    const { username, gate } = await staff();
    expect(gate.expires_in).toBe(300);
    expect(gate.setup_methods).toContain('totp');
    expect(gate.next_step).toContain('/api/v1/2fa/totp/setup');
    expect(gate.next_step).toContain('/api/v1/passkeys/registration/options'); // every factor the token can set up, not push approval (needs a signed-in phone)
    expect(gate.next_step).not.toContain('/api/v1/2fa/push-approval');

    const app = await setupWith(gate.two_factor_token);
    const res = await post('/api/v1/2fa/totp/verify', { two_factor_token: gate.two_factor_token, code: app.code(t.clock.now()) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ backup_codes: string[]; sign_in: SignedIn & Profile }>();
    expect(body.backup_codes).toHaveLength(10);
    expect(body.sign_in).toMatchObject({ token_type: 'bearer', user_profile: { mfa_completed: true, roles: ['staff'] } });
    expect((await post('/api/v1/auth/validate', {}, bearer(body.sign_in.access_token))).statusCode).toBe(200);
    expect((await t.s.sessions.get(body.sign_in.session_id))?.mfaCompleted).toBe(true);
    const enrolled = await t.s.audit.query({ userId: body.sign_in.user.uuid, eventType: 'MFA_ENROLLED', limit: 10, offset: 0 });
    expect(enrolled.entries).toMatchObject([{ username, mfa_method: 'totp' }]);

    // From now on the password leads to 2FA_REQUIRED, and the app finishes it.
    t.clock.advance(30_000);
    const next = expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { two_factor_token: string; methods: string[] };
    expect(next.methods).toEqual(['totp', 'backup_code']);
    const done = await post('/api/v1/2fa/totp/verify-login', { two_factor_token: next.two_factor_token, code: app.code(t.clock.now()) });
    expect(done.statusCode, done.body).toBe(200);
  });

  it('the setup token works once: after the sign-in it finished it is TOKEN_REVOKED', async () => {
    const { gate } = await staff();
    const app = await setupWith(gate.two_factor_token);
    expect((await post('/api/v1/2fa/totp/verify', { two_factor_token: gate.two_factor_token, code: app.code(t.clock.now()) })).statusCode).toBe(200);
    expectError(await post('/api/v1/2fa/totp/setup', { two_factor_token: gate.two_factor_token }), 401, 'TOKEN_REVOKED');
    t.clock.advance(30_000);
    expectError(await post('/api/v1/2fa/totp/verify', { two_factor_token: gate.two_factor_token, code: app.code(t.clock.now()) }), 401, 'TOKEN_REVOKED');
  });

  it('a wrong code during setup is TOTP_INVALID and does not spend the setup token', async () => {
    const { username, gate } = await staff();
    const app = await setupWith(gate.two_factor_token);
    expectError(await post('/api/v1/2fa/totp/verify', { two_factor_token: gate.two_factor_token, code: app.wrongCode(t.clock.now()) }), 401, 'TOTP_INVALID');
    expectError(await login(t.app, username), 403, 'MFA_SETUP_INCOMPLETE'); // a pending secret is not a factor
    expect((await post('/api/v1/2fa/totp/verify', { two_factor_token: gate.two_factor_token, code: app.code(t.clock.now()) })).statusCode).toBe(200);
  });

  it('an expired setup token is refused (TOKEN_EXPIRED)', async () => {
    const { gate } = await staff();
    t.clock.advance(5 * 60_000 + 1_000);
    expectError(await post('/api/v1/2fa/totp/setup', { two_factor_token: gate.two_factor_token }), 401, 'TOKEN_EXPIRED');
  });

  it('a setup token bound to a device is refused without its fingerprint (FINGERPRINT_REQUIRED) and from another (FINGERPRINT_MISMATCH)', async () => {
    const { gate } = await staff({ device_fingerprint: 'teller-pc-12' });
    expectError(await post('/api/v1/2fa/totp/setup', { two_factor_token: gate.two_factor_token }), 401, 'FINGERPRINT_REQUIRED');
    expectError(await post('/api/v1/2fa/totp/setup', { two_factor_token: gate.two_factor_token }, { 'x-device-fingerprint': 'teller-pc-99' }), 401, 'FINGERPRINT_MISMATCH');
    await setupWith(gate.two_factor_token, { 'x-device-fingerprint': 'teller-pc-12' });
  });

  it('an enrolled factor that cannot be used now never turns into a setup token (the password alone cannot enrol a new factor)', async () => {
    const username = `staff.nomail${++seq}`;
    const user = await seedUser(t.s, username, { roles: ['staff'] }); // an email factor, but no address to send to
    const now = new Date(t.clock.now());
    await t.s.database.db.insertInto('mfa_factors').values({ user_id: user.id, method: 'email', status: 'active', secret_enc: null, algorithm: null, created_at: now, confirmed_at: now }).execute();
    const details = expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { two_factor_token: string; methods: string[] };
    expect(details.methods).toEqual([]);
    expect(details).toMatchObject({ recover_path: '/api/v1/auth/reset/initiate', recover_lost: 'mfa' }); // the way out: an MFA recovery
    expectError(await post('/api/v1/2fa/totp/setup', { two_factor_token: details.two_factor_token }), 401, 'TOKEN_INVALID');
    expectError(await post('/api/v1/2fa/otp/setup', { two_factor_token: details.two_factor_token, method: 'sms' }), 401, 'TOKEN_INVALID');
  });
});

describe('roles that do not require MFA', () => {
  it('a customer with no factor signs in with the password alone', async () => {
    const username = `customer${++seq}`;
    await seedUser(t.s, username, { roles: ['customer'] });
    const body = await signIn(t.app, username) as SignedIn & Profile;
    expect(body.user_profile.mfa_completed).toBe(false);
  });

  it('a customer who enrolled TOTP anyway must use it', async () => {
    const username = `customer${++seq}`;
    await seedUser(t.s, username, { roles: ['customer'] });
    await enrolTotp(t.app, t.clock, (await signIn(t.app, username)).access_token);
    expectError(await login(t.app, username), 401, '2FA_REQUIRED');
  });
});

describe('2FA token purposes are not interchangeable', () => {
  it('a setup token is refused at verify-login and verify-backup-code (TOKEN_INVALID)', async () => {
    const { gate } = await staff();
    expectError(await post('/api/v1/2fa/totp/verify-login', { two_factor_token: gate.two_factor_token, code: '123456' }), 401, 'TOKEN_INVALID');
    expectError(await post('/api/v1/2fa/totp/verify-backup-code', { two_factor_token: gate.two_factor_token, code: 'abcd-efgh' }), 401, 'TOKEN_INVALID');
  });

  it('a sign-in token is refused at setup and at verify (TOKEN_INVALID)', async () => {
    const username = `customer${++seq}`;
    await seedUser(t.s, username, { roles: ['customer'] });
    const { authenticator } = await enrolTotp(t.app, t.clock, (await signIn(t.app, username)).access_token);
    const c = expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { two_factor_token: string };
    expectError(await post('/api/v1/2fa/totp/setup', { two_factor_token: c.two_factor_token }), 401, 'TOKEN_INVALID');
    expectError(await post('/api/v1/2fa/totp/verify', { two_factor_token: c.two_factor_token, code: authenticator.code(t.clock.now()) }), 401, 'TOKEN_INVALID');
  });

  it('a setup token is not a bearer token (TOKEN_INVALID)', async () => {
    const { gate } = await staff();
    expectError(await post('/api/v1/2fa/totp/setup', {}, bearer(gate.two_factor_token)), 401, 'TOKEN_INVALID');
  });
});

describe('setup sign-in over transport encryption', () => {
  it('verify with a setup token answers under the new session key', async () => {
    const t2 = await createTestApp({ env: { MFA_REQUIRED_ROLES: 'staff', ENFORCE_TRANSPORT_ENCRYPTION: '1' } });
    try {
      await seedUser(t2.s, 'sealed.staff', { roles: ['staff'] });
      const serverPem = await fetchServerPem(t2.app);
      const sealed = async (url: string, body: Record<string, unknown>) => {
        const res = await t2.app.inject({ method: 'POST', url, headers: ENCRYPTED, payload: preAuthBody(serverPem, body) });
        return { status: res.statusCode, ...openPreAuth(res.json()) };
      };
      const gate = await sealed('/api/v1/auth/login', { username: 'sealed.staff', password: STRONG_PASSWORD });
      expect(gate.status).toBe(403);
      expect(gate.body).toMatchObject({ status_code: 403, error_code: 'MFA_SETUP_INCOMPLETE' });
      const token = String((gate.body.details as SetupIncomplete).two_factor_token);
      const setup = await sealed('/api/v1/2fa/totp/setup', { two_factor_token: token });
      expect(setup.status).toBe(200);
      const app = Authenticator.scan(String(setup.body.qr_code));
      const done = await sealed('/api/v1/2fa/totp/verify', { two_factor_token: token, code: app.code(t2.clock.now()) });
      expect(done.status).toBe(200);
      const signIn = done.body.sign_in as { session_id: string };
      expect((await t2.s.sessions.get(signIn.session_id))?.aesKey?.equals(done.key)).toBe(true);
    } finally {
      await t2.close();
    }
  });
});
