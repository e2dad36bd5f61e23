/**
 * TOTP with backup codes over HTTP (issue 4 section 2): enrolment by scanning the QR code,
 * password then 2FA_REQUIRED then TOTP then tokens, replay (one node and two), window edges
 * and 2FA-token expiry on a frozen clock, the attempt cap under a burst, backup codes, step-up,
 * SHA-256 enrolment and the flow over transport encryption.
 */
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registry } from '../../src/app.js';
import { createTestApp, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { Authenticator, decodeQr, enrolTotp } from '../harness/authenticator.js';
import { admin, auditTotal, bearer, expectError, login, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD, type SignedIn } from '../harness/fixtures.js';
import { ENCRYPTED, openPreAuth, preAuthBody, fetchServerPem, sessionBody } from '../harness/transport-client.js';
import { withoutRequestId } from '../harness/request-id.js';

type Res = Awaited<ReturnType<typeof login>>;
interface Challenge { two_factor_token: string; methods: string[]; expires_in: number }

let t: TestApp;
let seq = 0;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

/** A new customer with TOTP enrolled through the API. */
async function enrolled(s: Registry = t.s, tt: TestApp = t) {
  const username = `totp.user${++seq}`;
  const user = await seedUser(s, username);
  const first = await signIn(tt.app, username);
  const { authenticator, backupCodes, setup } = await enrolTotp(tt.app, tt.clock, first.access_token);
  return { user, username, authenticator, backupCodes, setup };
}

/** Password step: must answer 401 2FA_REQUIRED; returns its details. */
async function challenge(username: string, extra: Record<string, unknown> = {}, tt: TestApp = t): Promise<Challenge> {
  return expectError(await login(tt.app, username, undefined, extra), 401, '2FA_REQUIRED').details as unknown as Challenge;
}

const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}, tt: TestApp = t): Promise<Res> =>
  tt.app.inject({ method: 'POST', url, payload, headers });
const verifyLogin = (token: string, code: string, headers: Record<string, string> = {}, tt: TestApp = t) =>
  post('/api/v1/2fa/totp/verify-login', { two_factor_token: token, code }, headers, tt);
const verifyBackup = (token: string, code: string) => post('/api/v1/2fa/totp/verify-backup-code', { two_factor_token: token, code });

/** Audit entries of one user and event, newest first. */
async function audits(userId: string, eventType: string) {
  return (await t.s.audit.query({ userId, eventType, limit: 100, offset: 0 })).entries;
}

/** Moves the frozen clock to the middle of the next 30-second step. */
function midStep(tt: TestApp = t): void {
  tt.clock.set((Math.floor(tt.clock.now() / 30_000) + 1) * 30_000 + 15_000);
}

describe('enrolment', () => {
  it('a phone app enrols by scanning the QR code, and the secret it reads is the one returned', async () => {
    const username = `scan.user${++seq}`;
    const user = await seedUser(t.s, username);
    const session = await signIn(t.app, username);
    const res = await post('/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD }, bearer(session.access_token));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ secret: string; otpauth_uri: string; qr_code: string; algorithm: string; digits: number; period: number }>();
    expect(body).toMatchObject({ algorithm: 'SHA1', digits: 6, period: 30 });
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/); // 160 bits, base32
    expect(body.qr_code).toMatch(/^data:image\/png;base64,/);
    const scanned = decodeQr(body.qr_code);
    expect(scanned).toBe(body.otpauth_uri);
    const uri = new URL(scanned);
    expect(`${uri.protocol}//${uri.host}${decodeURIComponent(uri.pathname)}`).toBe(`otpauth://totp/Strongroom:${username}`);
    expect(Object.fromEntries(uri.searchParams)).toEqual({ secret: body.secret, issuer: 'Strongroom', algorithm: 'SHA1', digits: '6', period: '30' });

    const app = Authenticator.scan(body.qr_code);
    const verify = await post('/api/v1/2fa/totp/verify', { code: app.code(t.clock.now()) }, bearer(session.access_token));
    expect(verify.statusCode, verify.body).toBe(200);
    const codes = verify.json<{ backup_codes: string[]; sign_in?: unknown }>();
    expect(codes.sign_in).toBeUndefined(); // a bearer enrolment is not a sign-in
    expect(codes.backup_codes).toHaveLength(10);
    expect(new Set(codes.backup_codes).size).toBe(10);
    for (const c of codes.backup_codes) expect(c).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}$/);
    expect(await audits(user.uuid, 'MFA_ENROLLED')).toMatchObject([{ username, mfa_method: 'totp', status: 'SUCCESS' }]);
  });

  it('stores the TOTP secret encrypted and the backup codes only as keyed hashes', async () => {
    const { user, setup, backupCodes } = await enrolled();
    const row = await t.s.database.db.selectFrom('mfa_factors').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ method: 'totp', status: 'active', algorithm: 'SHA1' });
    expect(row.secret_enc).toMatch(/^fe1:/);
    expect(JSON.stringify(row)).not.toContain(setup.secret);
    expect(JSON.stringify(row).toLowerCase()).not.toContain(setup.secret.toLowerCase());
    const hashes = await t.s.database.db.selectFrom('mfa_backup_codes').select('code_hash').where('user_id', '=', user.id).execute();
    expect(hashes).toHaveLength(10);
    const stored = JSON.stringify(hashes);
    for (const c of backupCodes) {
      expect(stored).not.toContain(c);
      expect(stored).not.toContain(c.replace('-', ''));
    }
  });

  it('refuses a second enrolment with 409 TOTP_ALREADY_ENROLLED', async () => {
    const { username, authenticator } = await enrolled();
    const c = await challenge(username);
    const session = (await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now()))).json<SignedIn>();
    expectError(await post('/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD }, bearer(session.access_token)), 409, 'TOTP_ALREADY_ENROLLED');
    expectError(await post('/api/v1/2fa/totp/verify', { code: '123456' }, bearer(session.access_token)), 409, 'TOTP_ALREADY_ENROLLED');
  });

  it('refuses verify before setup with 409 TOTP_SETUP_NOT_STARTED', async () => {
    const username = `nosetup${++seq}`;
    await seedUser(t.s, username);
    const session = await signIn(t.app, username);
    expectError(await post('/api/v1/2fa/totp/verify', { code: '123456' }, bearer(session.access_token)), 409, 'TOTP_SETUP_NOT_STARTED');
  });

  it('a wrong enrolment code is 401 TOTP_INVALID and enrols nothing', async () => {
    const username = `wrongenrol${++seq}`;
    const user = await seedUser(t.s, username);
    const session = await signIn(t.app, username);
    const app = Authenticator.scan((await post('/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD }, bearer(session.access_token))).json<{ qr_code: string }>().qr_code);
    expectError(await post('/api/v1/2fa/totp/verify', { code: app.wrongCode(t.clock.now()) }, bearer(session.access_token)), 401, 'TOTP_INVALID');
    expect(await t.s.factors.active(user.id)).toEqual([]);
    expect((await signIn(t.app, username)).access_token).toBeTypeOf('string'); // still no second factor
  });

  it('a stolen access token alone cannot enrol an attacker\'s authenticator (current_password required)', async () => {
    const username = `stolen${++seq}`;
    const user = await seedUser(t.s, username);
    const session = await signIn(t.app, username);
    expectError(await post('/api/v1/2fa/totp/setup', {}, bearer(session.access_token)), 422, 'VALIDATION_ERROR');
    expectError(await post('/api/v1/2fa/totp/setup', { current_password: 'Wrong#Guess42xyz' }, bearer(session.access_token)), 401, 'INVALID_CREDENTIALS');
    const pending = await t.s.database.db.selectFrom('mfa_factors').select('status').where('user_id', '=', user.id).execute();
    expect(pending).toEqual([]);
  });

  it('wrong current passwords at TOTP setup count toward the account lockout (429 ACCOUNT_LOCKED)', async () => {
    const username = `setupguess${++seq}`;
    await seedUser(t.s, username);
    const session = await signIn(t.app, username);
    for (let i = 0; i < 4; i++) expectError(await post('/api/v1/2fa/totp/setup', { current_password: `Wrong#Guess42x${i}` }, bearer(session.access_token)), 401, 'INVALID_CREDENTIALS');
    const locked = await post('/api/v1/2fa/totp/setup', { current_password: 'Wrong#Guess42x9' }, bearer(session.access_token));
    expectError(locked, 429, 'ACCOUNT_LOCKED');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expectError(await post('/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD }, bearer(session.access_token)), 429, 'ACCOUNT_LOCKED');
  });

  it('setup without a bearer token or two_factor_token is 401 TOKEN_MISSING', async () => {
    expectError(await post('/api/v1/2fa/totp/setup', {}), 401, 'TOKEN_MISSING');
  });
});

describe('sign-in with TOTP', () => {
  it('password, then 2FA_REQUIRED, then the app code, then tokens that validate with mfa_completed', async () => {
    const { user, username, authenticator } = await enrolled();
    const c = await challenge(username);
    expect(c.methods).toEqual(expect.arrayContaining(['totp', 'backup_code']));
    expect(c.expires_in).toBe(300);
    const res = await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now()));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<SignedIn & { user_profile: { mfa_completed: boolean; username: string } }>();
    expect(body).toMatchObject({ token_type: 'bearer', user_profile: { username, mfa_completed: true } });
    const valid = await post('/api/v1/auth/validate', {}, bearer(body.access_token));
    expect(valid.statusCode, valid.body).toBe(200);
    expect((await t.s.sessions.get(body.session_id))?.mfaCompleted).toBe(true);
    expect((await audits(user.uuid, 'USER_LOGIN'))[0]).toMatchObject({ username, mfa_method: 'totp', details: { session_id: body.session_id } });
  });

  it('replayed TOTP code is refused (TOTP_INVALID)', async () => {
    const { username, authenticator } = await enrolled();
    const code = authenticator.code(t.clock.now());
    expect((await verifyLogin((await challenge(username)).two_factor_token, code)).statusCode).toBe(200);
    expectError(await verifyLogin((await challenge(username)).two_factor_token, code), 401, 'TOTP_INVALID');
  });

  it('a code of an earlier step than the last one used is refused as a replay (TOTP_INVALID)', async () => {
    const { username, authenticator } = await enrolled();
    const now = t.clock.now();
    expect((await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(now, 1))).statusCode).toBe(200);
    expectError(await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(now)), 401, 'TOTP_INVALID');
  });

  it('a wrong code is 401 TOTP_INVALID and audited MFA_FAILED', async () => {
    const { user, username, authenticator } = await enrolled();
    const wrong = authenticator.wrongCode(t.clock.now());
    expectError(await verifyLogin((await challenge(username)).two_factor_token, wrong), 401, 'TOTP_INVALID');
    const failed = await audits(user.uuid, 'MFA_FAILED');
    expect(failed).toMatchObject([{ username, status: 'FAILURE', mfa_method: 'totp', details: { reason: 'invalid_code', failed_count: 1 } }]);
    expect(JSON.stringify(failed)).not.toContain(wrong);
  });

  it('accepts the previous, current and next step and refuses two steps away (frozen clock)', async () => {
    const { username, authenticator } = await enrolled();
    t.clock.advance(120_000); // far from the enrolment step, so only the window can refuse
    midStep();
    const now = t.clock.now();
    expectError(await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(now, -2)), 401, 'TOTP_INVALID');
    for (const steps of [-1, 0, 1]) {
      const res = await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(now, steps));
      expect(res.statusCode, `step ${steps}: ${res.body}`).toBe(200);
    }
    t.clock.advance(90_000); // three steps on: +2 from here is new, never used
    const later = t.clock.now();
    expectError(await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(later, 2)), 401, 'TOTP_INVALID');
  });

  it('an expired 2FA token is refused (TOKEN_EXPIRED) after 5 minutes', async () => {
    const { username, authenticator } = await enrolled();
    const c = await challenge(username);
    t.clock.advance(5 * 60_000 + 1_000);
    expectError(await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now())), 401, 'TOKEN_EXPIRED');
  });

  it('a 2FA token finishes one sign-in only (TOKEN_REVOKED), and the second try burns no code', async () => {
    const { username, authenticator } = await enrolled();
    const c = await challenge(username);
    expect((await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now()))).statusCode).toBe(200);
    t.clock.advance(30_000);
    const fresh = authenticator.code(t.clock.now());
    expectError(await verifyLogin(c.two_factor_token, fresh), 401, 'TOKEN_REVOKED');
    expect((await verifyLogin((await challenge(username)).two_factor_token, fresh)).statusCode).toBe(200);
  });

  it('a 2FA token is not an access token, and an access token is not a 2FA token (TOKEN_INVALID)', async () => {
    const { username, authenticator } = await enrolled();
    const c = await challenge(username);
    expectError(await post('/api/v1/auth/validate', {}, bearer(c.two_factor_token)), 401, 'TOKEN_INVALID');
    expectError(await post('/api/v1/2fa/totp/backup-codes', { code: authenticator.code(t.clock.now()) }, bearer(c.two_factor_token)), 401, 'TOKEN_INVALID');
    const session = (await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now()))).json<SignedIn>();
    expectError(await verifyLogin(session.access_token, authenticator.code(t.clock.now(), 1)), 401, 'TOKEN_INVALID');
  });

  it('a 2FA token bound to a device fingerprint is refused without it (FINGERPRINT_REQUIRED) and from another device (FINGERPRINT_MISMATCH)', async () => {
    const { username, authenticator } = await enrolled();
    const c = await challenge(username, { device_fingerprint: 'phone-7f3a' });
    expectError(await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now())), 401, 'FINGERPRINT_REQUIRED');
    expectError(await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now()), { 'x-device-fingerprint': 'laptop-01' }), 401, 'FINGERPRINT_MISMATCH');
    const ok = await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now()), { 'x-device-fingerprint': 'phone-7f3a' });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a malformed code is a schema error (422) and costs no attempt', async () => {
    const { user, username } = await enrolled();
    const c = await challenge(username);
    expectError(await verifyLogin(c.two_factor_token, '12345'), 422, 'VALIDATION_ERROR');
    expectError(await verifyLogin(c.two_factor_token, '12345a'), 422, 'VALIDATION_ERROR');
    expect(await audits(user.uuid, 'MFA_FAILED')).toEqual([]);
    expect(await t.s.database.db.selectFrom('mfa_attempts').selectAll().where('user_id', '=', user.id).execute()).toEqual([]);
  });
});

describe('a forced password change with a factor enrolled (issue 9, section 6)', () => {
  const sessionsOf = async (userId: number) => (await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', userId).where('is_active', '=', true).execute()).length;

  it('threat: a temporary password from an admin reset does not skip the enrolled factor; the reset token comes only after it', async () => {
    const { user, username, authenticator } = await enrolled();
    const { temporaryPassword } = await admin(t.s).resetPassword(user.uuid, { uuid: null, username: 'test' });
    const before = await sessionsOf(user.id);

    const c = expectError(await login(t.app, username, temporaryPassword), 401, '2FA_REQUIRED').details as unknown as Challenge;
    expect(c.methods).toContain('totp');
    midStep();
    const changed = expectError(await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now())), 403, 'PASSWORD_CHANGE_REQUIRED');
    expect(changed.details).toMatchObject({ reason: 'temporary_password', expires_in: 600 });
    expect(await sessionsOf(user.id)).toBe(before); // the factor alone made no session
    expectError(await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now())), 401, 'TOKEN_REVOKED'); // spent

    const reset = await post('/api/v1/auth/reset/password', { reset_token: (changed.details as { reset_token: string }).reset_token, new_password: OTHER_PASSWORD });
    expect(reset.statusCode, reset.body).toBe(200);
    const next = expectError(await login(t.app, username, OTHER_PASSWORD), 401, '2FA_REQUIRED').details as unknown as Challenge;
    midStep();
    expect((await verifyLogin(next.two_factor_token, authenticator.code(t.clock.now()))).statusCode).toBe(200);
    expect((await audits(user.uuid, 'MFA_REQUIRED'))[1]?.details).toMatchObject({ then: 'password_change' });
  });

  it('a burst of verifications with one 2FA token and the right code yields one reset token, and no session', async () => {
    const { user, username, authenticator } = await enrolled();
    const { temporaryPassword } = await admin(t.s).resetPassword(user.uuid, { uuid: null, username: 'test' });
    const before = await sessionsOf(user.id);
    const c = expectError(await login(t.app, username, temporaryPassword), 401, '2FA_REQUIRED').details as unknown as Challenge;
    midStep();
    const code = authenticator.code(t.clock.now());
    const results = await Promise.all(Array.from({ length: 10 }, () => verifyLogin(c.two_factor_token, code)));
    expect(results.filter((r) => r.statusCode === 403)).toHaveLength(1);
    expectError(results.find((r) => r.statusCode === 403)!, 403, 'PASSWORD_CHANGE_REQUIRED');
    // The others find the token spent (401 TOKEN_REVOKED) or replay a used code (401
    // TOTP_INVALID) until those failures lock the factor (429 MFA_LOCKED).
    for (const r of results.filter((x) => x.statusCode !== 403)) {
      const code = (r.json() as { error_code: string }).error_code;
      expect(['401 TOKEN_REVOKED', '401 TOTP_INVALID', '429 MFA_LOCKED'], r.body).toContain(`${r.statusCode} ${code}`);
    }
    expect((await audits(user.uuid, 'PASSWORD_CHANGE_REQUIRED')).filter((e) => e.details.reason === 'temporary_or_reset')).toHaveLength(1);
    expect(await sessionsOf(user.id)).toBe(before);
  });

  it('threat: an expired password does not skip it either', async () => {
    const { user, username, authenticator } = await enrolled();
    const before = await sessionsOf(user.id);
    t.clock.advance(91 * 86_400_000); // regular accounts: 90 days
    const c = expectError(await login(t.app, username, STRONG_PASSWORD), 401, '2FA_REQUIRED').details as unknown as Challenge;
    midStep();
    const changed = expectError(await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now())), 403, 'PASSWORD_CHANGE_REQUIRED');
    expect(changed.details).toMatchObject({ reason: 'password_expired' });
    expect(await sessionsOf(user.id)).toBe(before);
  });

  it('a wrong code after a temporary password is refused like any other (401 TOTP_INVALID), with no reset token', async () => {
    const { user, username, authenticator } = await enrolled();
    const { temporaryPassword } = await admin(t.s).resetPassword(user.uuid, { uuid: null, username: 'test' });
    const c = expectError(await login(t.app, username, temporaryPassword), 401, '2FA_REQUIRED').details as unknown as Challenge;
    const body = expectError(await verifyLogin(c.two_factor_token, authenticator.wrongCode(t.clock.now())), 401, 'TOTP_INVALID');
    expect(JSON.stringify(body)).not.toContain('reset_token');
  });
});

describe('attempt cap', () => {
  it('20 parallel wrong TOTP codes buy exactly MFA_MAX_FAILURES (5) tries, then MFA_LOCKED holds even for the right code', async () => {
    const { user, username, authenticator } = await enrolled();
    const c = await challenge(username);
    const wrong = authenticator.wrongCode(t.clock.now());
    const results = await Promise.all(Array.from({ length: 20 }, () => verifyLogin(c.two_factor_token, wrong)));
    const invalid = results.filter((r) => r.statusCode === 401);
    const locked = results.filter((r) => r.statusCode === 429);
    // Each reservation is one atomic row update: the 5 that win compare (and the 5th sets the lock), the 15 others are refused.
    expect(invalid).toHaveLength(5);
    expect(locked).toHaveLength(15);
    for (const r of invalid) expectError(r, 401, 'TOTP_INVALID');
    for (const r of locked) {
      const body = expectError(r, 429, 'MFA_LOCKED');
      expect(r.headers['retry-after']).toBe('900'); // MFA_LOCKOUT_MINUTES=15 on the frozen clock
      expect(withoutRequestId(body.details)).toEqual({ retry_after_seconds: 900 });
    }
    expectError(await verifyLogin(c.two_factor_token, authenticator.code(t.clock.now())), 429, 'MFA_LOCKED');
    expect(await audits(user.uuid, 'MFA_LOCKED')).toMatchObject([{ username, details: { locked_minutes: 15 } }]);

    // Backup codes share the lock: a lost phone is no way around it.
    expectError(await verifyBackup((await challenge(username)).two_factor_token, 'aaaa-aaaa'), 429, 'MFA_LOCKED');

    t.clock.advance(15 * 60_000 + 1_000); // the lock ends (and the first 2FA token with it)
    const res = await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(t.clock.now()));
    expect(res.statusCode, res.body).toBe(200);
  });

  it('a success clears the count of earlier failures', async () => {
    const { username, authenticator } = await enrolled();
    for (let i = 0; i < 4; i++) expectError(await verifyLogin((await challenge(username)).two_factor_token, authenticator.wrongCode(t.clock.now())), 401, 'TOTP_INVALID');
    expect((await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(t.clock.now()))).statusCode).toBe(200);
    for (let i = 0; i < 4; i++) expectError(await verifyLogin((await challenge(username)).two_factor_token, authenticator.wrongCode(t.clock.now())), 401, 'TOTP_INVALID');
  });
});

describe('backup codes', () => {
  it('each of the 10 codes signs in once; a used code is refused (BACKUP_CODE_INVALID)', async () => {
    const { user, username, backupCodes } = await enrolled();
    expect(backupCodes).toHaveLength(10);
    const res = await verifyBackup((await challenge(username)).two_factor_token, backupCodes[0]!);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Record<string, unknown> & { user_profile: { mfa_completed: boolean } }>();
    expect(body.user_profile.mfa_completed).toBe(true);
    expect(body).not.toHaveProperty('remaining_backup_codes');
    expect(await audits(user.uuid, 'BACKUP_CODE_USED')).toMatchObject([{ username, mfa_method: 'backup_code', details: { remaining_backup_codes: 9 } }]);
    expectError(await verifyBackup((await challenge(username)).two_factor_token, backupCodes[0]!), 401, 'BACKUP_CODE_INVALID');

    for (const code of backupCodes.slice(1)) {
      const r = await verifyBackup((await challenge(username)).two_factor_token, code);
      expect(r.statusCode, r.body).toBe(200);
    }
    const used = await audits(user.uuid, 'BACKUP_CODE_USED');
    expect(used.map((e) => e.details.remaining_backup_codes).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const c of backupCodes) expect(JSON.stringify(used)).not.toContain(c.replace('-', ''));
    expect((await challenge(username)).methods).toEqual(['totp']); // none left to offer
  });

  it('accepts a code typed in capitals without its dash', async () => {
    const { username, backupCodes } = await enrolled();
    const typed = backupCodes[1]!.replace('-', ' ').toUpperCase();
    expect((await verifyBackup((await challenge(username)).two_factor_token, typed)).statusCode).toBe(200);
  });

  it('five parallel uses of one backup code: exactly one signs in (one session, one BACKUP_CODE_USED), four are 401 BACKUP_CODE_INVALID', async () => {
    const { user, username, backupCodes } = await enrolled();
    const sessions = async () => (await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', user.id).execute()).length;
    const before = await sessions();
    const challenges = await Promise.all(Array.from({ length: 5 }, () => challenge(username)));
    const results = await Promise.all(challenges.map((c) => verifyBackup(c.two_factor_token, backupCodes[2]!)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 401, 'BACKUP_CODE_INVALID');
    expect(await auditTotal(t.s, user.uuid, 'BACKUP_CODE_USED')).toBe(1);
    expect(await sessions()).toBe(before + 1);
  });

  it('a wrong backup code is 401 BACKUP_CODE_INVALID', async () => {
    const { username } = await enrolled();
    expectError(await verifyBackup((await challenge(username)).two_factor_token, 'zzzz-zzzz'), 401, 'BACKUP_CODE_INVALID');
    expectError(await verifyBackup((await challenge(username)).two_factor_token, 'not a code'), 401, 'BACKUP_CODE_INVALID');
  });

  it('once no backup code is left the challenge stops offering them (MFA_METHOD_UNAVAILABLE)', async () => {
    const { user, username } = await enrolled();
    await t.s.database.db.updateTable('mfa_backup_codes').set({ used_at: new Date(t.clock.now()) }).where('user_id', '=', user.id).execute();
    const c = await challenge(username);
    expect(c.methods).toEqual(['totp']);
    expectError(await verifyBackup(c.two_factor_token, 'zzzz-zzzz'), 400, 'MFA_METHOD_UNAVAILABLE');
  });

  it('regenerating replaces the set: old codes stop working, new ones work', async () => {
    const { user, username, authenticator, backupCodes } = await enrolled();
    const session = (await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(t.clock.now()))).json<SignedIn>();
    expectError(await post('/api/v1/2fa/totp/backup-codes', { code: authenticator.wrongCode(t.clock.now()) }, bearer(session.access_token)), 401, 'TOTP_INVALID');
    const res = await post('/api/v1/2fa/totp/backup-codes', { code: authenticator.code(t.clock.now(), 1) }, bearer(session.access_token));
    expect(res.statusCode, res.body).toBe(200);
    const fresh = res.json<{ backup_codes: string[] }>().backup_codes;
    expect(fresh).toHaveLength(10);
    expectError(await verifyBackup((await challenge(username)).two_factor_token, backupCodes[3]!), 401, 'BACKUP_CODE_INVALID');
    expect((await verifyBackup((await challenge(username)).two_factor_token, fresh[0]!)).statusCode).toBe(200);
    expect(await audits(user.uuid, 'BACKUP_CODES_REGENERATED')).toMatchObject([{ username, details: { backup_codes_issued: 10 } }]);
  });
});

describe('step-up (POST /api/v1/auth/totp/verify)', () => {
  it('records a fresh second factor on the signed-in session', async () => {
    const { username, authenticator } = await enrolled();
    const session = (await verifyLogin((await challenge(username)).two_factor_token, authenticator.code(t.clock.now()))).json<SignedIn>();
    t.clock.advance(30_000);
    const res = await post('/api/v1/auth/totp/verify', { code: authenticator.code(t.clock.now()) }, bearer(session.access_token));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ verified: true, method: 'totp', session_id: session.session_id, verified_at: new Date(t.clock.now()).toISOString() });
    const row = await t.s.database.db.selectFrom('sessions').select(['mfa_completed', 'mfa_verified_at']).where('session_id', '=', session.session_id).executeTakeFirstOrThrow();
    expect(row.mfa_completed).toBe(true);
    expect(new Date(row.mfa_verified_at!).getTime()).toBe(t.clock.now());
  });

  it('refuses a replayed code, a missing token and a 2FA token', async () => {
    const { username, authenticator } = await enrolled();
    const code = authenticator.code(t.clock.now());
    const c = await challenge(username);
    const session = (await verifyLogin(c.two_factor_token, code)).json<SignedIn>();
    expectError(await post('/api/v1/auth/totp/verify', { code }, bearer(session.access_token)), 401, 'TOTP_INVALID');
    expectError(await post('/api/v1/auth/totp/verify', { code }), 401, 'TOKEN_MISSING');
    expectError(await post('/api/v1/auth/totp/verify', { code }, bearer(c.two_factor_token)), 401, 'TOKEN_INVALID');
  });

  it('without an enrolled authenticator is 400 MFA_METHOD_UNAVAILABLE', async () => {
    const username = `stepup.none${++seq}`;
    await seedUser(t.s, username);
    const session = await signIn(t.app, username);
    expectError(await post('/api/v1/auth/totp/verify', { code: '123456' }, bearer(session.access_token)), 400, 'MFA_METHOD_UNAVAILABLE');
  });
});

describe('replay across two nodes', () => {
  it('the same code sent to two nodes at once signs in once (TOTP_INVALID on the other)', async () => {
    const database = await openTestDatabase();
    const secrets = testSecrets();
    const a = await createTestApp({ database, secrets });
    const b = await createTestApp({ database, secrets, clock: a.clock });
    try {
      const { username, authenticator } = await enrolled(a.s, a);
      const [ca, cb] = [await challenge(username, {}, a), await challenge(username, {}, b)];
      const code = authenticator.code(a.clock.now());
      const results = await Promise.all([verifyLogin(ca.two_factor_token, code, {}, a), verifyLogin(cb.two_factor_token, code, {}, b)]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401]);
      expectError(results.find((r) => r.statusCode === 401)!, 401, 'TOTP_INVALID');
      // And in sequence: a code used on node A is a replay on node B.
      a.clock.advance(30_000);
      const next = authenticator.code(a.clock.now());
      expect((await verifyLogin((await challenge(username, {}, a)).two_factor_token, next, {}, a)).statusCode).toBe(200);
      expectError(await verifyLogin((await challenge(username, {}, b)).two_factor_token, next, {}, b), 401, 'TOTP_INVALID');
    } finally {
      await a.app.close();
      await b.app.close();
      a.s.mailer.close?.();
      b.s.mailer.close?.();
      await database.close();
    }
  });
});

describe('SHA-256 enrolment (TOTP_ALGORITHM=SHA256)', () => {
  it('enrols a 256-bit secret with algorithm=SHA256 and signs in end to end', async () => {
    const t2 = await createTestApp({ env: { TOTP_ALGORITHM: 'SHA256' } });
    try {
      const { user, username, authenticator, setup } = await enrolled(t2.s, t2);
      expect(setup.algorithm).toBe('SHA256');
      expect(setup.secret).toMatch(/^[A-Z2-7]{52}$/); // 32 bytes
      expect(authenticator.totp.algorithm).toBe('SHA256');
      expect(new URL(setup.otpauth_uri).searchParams.get('algorithm')).toBe('SHA256');
      const row = await t2.s.database.db.selectFrom('mfa_factors').select('algorithm').where('user_id', '=', user.id).executeTakeFirstOrThrow();
      expect(row.algorithm).toBe('SHA256');
      const res = await verifyLogin((await challenge(username, {}, t2)).two_factor_token, authenticator.code(t2.clock.now()), {}, t2);
      expect(res.statusCode, res.body).toBe(200);
      // The same secret under SHA-1 (an app that ignored algorithm=) does not sign in.
      const sha1 = new Authenticator(new OTPAuth.TOTP({ secret: authenticator.totp.secret, algorithm: 'SHA1' }));
      t2.clock.advance(30_000);
      while (sha1.code(t2.clock.now()) === authenticator.code(t2.clock.now(), -1) || sha1.code(t2.clock.now()) === authenticator.code(t2.clock.now()) || sha1.code(t2.clock.now()) === authenticator.code(t2.clock.now(), 1)) t2.clock.advance(30_000);
      expectError(await verifyLogin((await challenge(username, {}, t2)).two_factor_token, sha1.code(t2.clock.now()), {}, t2), 401, 'TOTP_INVALID');
    } finally {
      await t2.close();
    }
  });
});

describe('over transport encryption', () => {
  it('enrols and signs in encrypted; verify-login hands the client its session key', async () => {
    const t3 = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1' } });
    try {
      const username = `sealed.user${++seq}`;
      await seedUser(t3.s, username);
      const serverPem = await fetchServerPem(t3.app);
      const sealed = async (url: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
        const res = await t3.app.inject({ method: 'POST', url, headers: { ...ENCRYPTED, ...headers }, payload: preAuthBody(serverPem, body) });
        return { res, ...openPreAuth(res.json()) };
      };
      const first = await sealed('/api/v1/auth/login', { username, password: STRONG_PASSWORD });
      expect(first.res.statusCode).toBe(200);
      const access = String(first.body.access_token);
      const setup = await sealed('/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD }, bearer(access));
      expect(setup.res.statusCode, JSON.stringify(setup.body)).toBe(200);
      const app = Authenticator.scan(String(setup.body.qr_code));
      const enrol = await sealed('/api/v1/2fa/totp/verify', { code: app.code(t3.clock.now()) }, bearer(access));
      expect(enrol.res.statusCode, JSON.stringify(enrol.body)).toBe(200);
      expect(enrol.body.backup_codes).toHaveLength(10);
      t3.clock.advance(30_000);

      const pw = await sealed('/api/v1/auth/login', { username, password: STRONG_PASSWORD });
      expect(pw.res.statusCode).toBe(401);
      expect(pw.body).toMatchObject({ error_code: '2FA_REQUIRED' });
      const token = String((pw.body.details as Challenge).two_factor_token);
      const wrong = await sealed('/api/v1/2fa/totp/verify-login', { two_factor_token: token, code: app.wrongCode(t3.clock.now()) });
      expect(wrong.res.statusCode).toBe(401);
      expect(wrong.body).toMatchObject({ status_code: 401, error_code: 'TOTP_INVALID' }); // errors are sealed too
      const done = await sealed('/api/v1/2fa/totp/verify-login', { two_factor_token: token, code: app.code(t3.clock.now()) });
      expect(done.res.statusCode).toBe(200);
      expect(done.body).toMatchObject({ token_type: 'bearer', user_profile: { mfa_completed: true } });
      const session = await t3.s.sessions.get(String(done.body.session_id));
      expect(session?.aesKey?.equals(done.key)).toBe(true);
      const logout = await t3.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(String(done.body.access_token)) }, payload: sessionBody(done.key, {}) });
      expect(logout.statusCode).toBe(200);
    } finally {
      await t3.close();
    }
  });
});

describe('OpenAPI', () => {
  it('documents every TOTP route under "MFA and 2FA" with its error codes, bearer where accepted', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, { post: { tags: string[]; description: string; security?: unknown[] } }> }>();
    const routes: [string, boolean, string[]][] = [
      ['/api/v1/2fa/totp/setup', true, ['TOTP_ALREADY_ENROLLED', 'INVALID_CREDENTIALS']],
      ['/api/v1/2fa/totp/verify', true, ['TOTP_INVALID', 'TOTP_SETUP_NOT_STARTED', 'MFA_LOCKED']],
      ['/api/v1/2fa/totp/verify-login', false, ['TOTP_INVALID', 'MFA_METHOD_UNAVAILABLE', 'MFA_LOCKED', 'TOKEN_REVOKED']],
      ['/api/v1/2fa/totp/verify-backup-code', false, ['BACKUP_CODE_INVALID', 'MFA_METHOD_UNAVAILABLE', 'MFA_LOCKED']],
      ['/api/v1/auth/totp/verify', true, ['TOTP_INVALID', 'MFA_METHOD_UNAVAILABLE', 'MFA_LOCKED']],
      ['/api/v1/2fa/totp/backup-codes', true, ['TOTP_INVALID', 'MFA_LOCKED']],
    ];
    for (const [path, bearerAccepted, codes] of routes) {
      const op = doc.paths[path]?.post;
      expect(op, path).toBeDefined();
      expect(op!.tags).toEqual(['MFA and 2FA']);
      expect(op!.security !== undefined, path).toBe(bearerAccepted);
      for (const code of codes) expect(op!.description, `${path} ${code}`).toContain(code);
    }
  });
});
