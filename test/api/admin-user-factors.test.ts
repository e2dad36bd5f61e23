/**
 * An operator's view of a user's second factors (`GET /api/v1/admin/users/{id}/factors`,
 * permission users.read), read before an MFA reset: each factor appears once enrolled, with its
 * dates and counts (the app's "last used" is the step of its last accepted code; a code's, the last
 * use among the codes still kept: none once the clean-up deleted them), and the answer never holds
 * a secret, a hash, a code or an answer (checked on the serialized body against what the database
 * holds). Refusals: 403 without users.read, 404
 * for an unknown uuid, 422 for an integer id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTP_CODES_KEPT_MS } from '../../src/mfa/otp/store.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { SoftAuthenticator } from '../harness/webauthn.js';

const ORIGIN = 'https://app.bank.example';
const EMAIL = 'factor.holder@bank.example';
const PHONE = '+254712000311';
const ANSWERS = ['Mrs Wanjiru Kamau', 'Kisumu Central', 'Toyota Corolla'];

type Json = Record<string, unknown>;
let t: TestApp;
const clock = new ManualClock(Date.parse('2026-11-27T08:00:00.000Z'));
let adminToken: string;

beforeAll(async () => {
  t = await createTestApp({ clock, env: { WEBAUTHN_RP_ID: 'bank.example', WEBAUTHN_RP_NAME: 'Example Bank', WEBAUTHN_ORIGINS: ORIGIN } });
  await seedUser(t.s, 'factors.admin', { roles: ['admin'] });
  adminToken = (await signIn(t.app, 'factors.admin')).access_token;
});
afterAll(async () => t?.close());

const post = async (url: string, payload: Json, token: string) => {
  const res = await t.app.inject({ method: 'POST', url, payload, headers: bearer(token) });
  expect(res.statusCode, `${url}: ${res.body}`).toBeLessThan(300);
  return res.json<Json>();
};
const factorsOf = (id: string, token = adminToken) => t.app.inject({ method: 'GET', url: `/api/v1/admin/users/${id}/factors`, headers: bearer(token) });
const latestCode = (to: string): string => t.s.otp.outbox.latest(to)!.code;
const STEP_MS = 30_000; // the authenticator app's time step

/** Enrols codes by `method` for a signed-in holder (the dev outbox carries the code). */
async function enrolOtp(token: string, method: 'email' | 'sms', to: string): Promise<void> {
  await post('/api/v1/2fa/otp/setup', { method }, token);
  await post('/api/v1/2fa/otp/verify', { method, code: latestCode(to) }, token);
}

describe('GET /api/v1/admin/users/{id}/factors', () => {
  it('an account without factors: every factor empty', async () => {
    const user = await seedUser(t.s, 'no.factors.yet');
    const res = await factorsOf(user.uuid);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      user_id: user.uuid, enrolled: [],
      factors: {
        authenticator_app: null, backup_codes: { left: 0, issued: 0, issued_at: null, last_used_at: null }, email_codes: null, sms_codes: null,
        push_codes: null, push_approval: null, passkeys: [], security_questions: { count: 0, set_at: null, questions: [] },
      },
    });
  });

  it('each factor appears once enrolled, with its dates, and the answer holds no secret, hash, code or answer', async () => {
    const user = await seedUser(t.s, 'factor.holder', { email: EMAIL, phone: PHONE });
    const token = (await signIn(t.app, 'factor.holder')).access_token;

    await enrolOtp(token, 'email', EMAIL);
    const codes: string[] = [latestCode(EMAIL)];
    // A second factor needs a step-up with the first: that use of an email code is "last used".
    await post('/api/v1/auth/2fa/request', { method: 'email' }, token);
    codes.push(latestCode(EMAIL));
    await post('/api/v1/auth/2fa/verify', { code: latestCode(EMAIL) }, token);
    const emailUsedAt = new Date(clock.now()).toISOString();
    await enrolOtp(token, 'sms', PHONE);
    codes.push(latestCode(PHONE));
    const { setup, backupCodes, authenticator } = await enrolTotp(t.app, clock, token);
    // A step-up with the app, at the start of a step (the clock frozen there): its "last used" is this moment, not the enrolment's code.
    clock.advance(2 * STEP_MS - (clock.now() % STEP_MS));
    await post('/api/v1/auth/totp/verify', { code: authenticator.code(clock.now()) }, token);
    const appUsedAt = new Date(clock.now()).toISOString();
    clock.advance(STEP_MS);

    const pool = (await post('/api/v1/auth/security-questions/predefined', {}, token)).questions as Array<{ id: string; text: string }>;
    await post('/api/v1/auth/security-questions/setup', { current_password: STRONG_PASSWORD, answers: ANSWERS.map((answer, i) => ({ question_id: pool[i]!.id, answer })) }, token);

    const o = await post('/api/v1/passkeys/registration/options', { current_password: STRONG_PASSWORD }, token) as { challenge_id: string; options: never };
    await post('/api/v1/passkeys/registration/verify', { challenge_id: o.challenge_id, name: 'Amina laptop', response: new SoftAuthenticator().register(o.options, { origin: ORIGIN }) }, token);

    // A backup code finishes a sign-in: one fewer left.
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'factor.holder', password: STRONG_PASSWORD } });
    const twoFactor = (login.json() as { details: { two_factor_token: string } }).details.two_factor_token;
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify-backup-code', payload: { two_factor_token: twoFactor, code: backupCodes[0] } })).statusCode).toBe(200);
    const backupUsedAt = new Date(clock.now()).toISOString();

    // Push codes and push approval: their enrolment needs a phone (its key attestation); the factor rows as enrolment writes them.
    await t.s.database.db.transaction().execute((trx) => t.s.factors.activate(trx, user, 'push', new Date(clock.now())));

    const res = await factorsOf(user.uuid);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ user_id: string; enrolled: string[]; factors: Record<string, unknown> }>();
    expect(body.user_id).toBe(user.uuid);
    expect(body.enrolled).toEqual(['email', 'passkey', 'push', 'sms', 'totp']);
    const f = body.factors;
    expect(f.authenticator_app).toEqual({ enrolled_at: expect.any(String), last_used_at: appUsedAt });
    expect(Date.parse(appUsedAt)).toBeGreaterThan(Date.parse((f.authenticator_app as { enrolled_at: string }).enrolled_at));
    expect(f.backup_codes).toEqual({ left: 9, issued: 10, issued_at: expect.any(String), last_used_at: backupUsedAt });
    expect(f.email_codes).toEqual({ enrolled_at: expect.any(String), last_used_at: emailUsedAt, uses_kept_days: 7 });
    expect(f.sms_codes).toEqual({ enrolled_at: expect.any(String), last_used_at: null, uses_kept_days: 7 }); // entered to enrol, never to sign in
    expect(f.push_codes).toEqual({ enrolled_at: new Date(clock.now()).toISOString(), last_used_at: null, uses_kept_days: 7, device_name: null });
    expect(f.push_approval).toBeNull();
    expect(f.passkeys).toEqual([{ name: 'Amina laptop', created_at: expect.any(String), last_used_at: null, synced: expect.any(Boolean), suspended: false }]);
    expect(f.security_questions).toEqual({ count: 3, set_at: expect.any(String), questions: pool.slice(0, 3).map((q) => q.text) });

    // Threat: nothing secret in the serialized answer, whatever its form.
    const db = t.s.database.db;
    const stored = [
      ...(await db.selectFrom('mfa_factors').select('secret_enc').where('user_id', '=', user.id).execute()).map((r) => r.secret_enc),
      ...(await db.selectFrom('mfa_backup_codes').select('code_hash').where('user_id', '=', user.id).execute()).map((r) => r.code_hash),
      ...(await db.selectFrom('user_security_answers').select('answer_hash').where('user_id', '=', user.id).execute()).map((r) => r.answer_hash),
      ...(await db.selectFrom('mfa_otp_codes').select('code_hash').where('user_id', '=', user.id).execute()).map((r) => r.code_hash),
      ...(await db.selectFrom('passkeys').select(['public_key', 'credential_id']).where('user_id', '=', user.id).execute()).flatMap((r) => [r.public_key, r.credential_id]),
    ].filter((v): v is string => v !== null);
    expect(stored.length).toBeGreaterThan(15); // the TOTP secret, 10 backup-code hashes, 3 answer hashes, the codes' hashes, the passkey
    for (const secret of [setup.secret, setup.otpauth_uri, ...backupCodes, ...codes, ...ANSWERS, ...stored]) expect(res.body, secret).not.toContain(secret);
    expect(res.body).not.toMatch(/\$2[aby]\$/); // no bcrypt hash of any kind
  });

  it('a code\'s use is known while the code is kept: once the clean-up deleted it, "last used" is null and the factor is still listed', async () => {
    const email = 'kept.codes@bank.example';
    const user = await seedUser(t.s, 'kept.codes', { email });
    const token = (await signIn(t.app, 'kept.codes')).access_token;
    await enrolOtp(token, 'email', email);
    await post('/api/v1/auth/2fa/request', { method: 'email' }, token);
    await post('/api/v1/auth/2fa/verify', { code: latestCode(email) }, token);
    const usedAt = new Date(clock.now()).toISOString();
    const before = await factorsOf(user.uuid);
    expect(before.json<{ factors: { email_codes: unknown } }>().factors.email_codes).toEqual({ enrolled_at: usedAt, last_used_at: usedAt, uses_kept_days: 7 });

    // Past the code's validity and the week it is kept after it: the clean-up job deletes it.
    clock.advance(t.s.config.mfa.otpValiditySec * 1000 + OTP_CODES_KEPT_MS + 60_000);
    await t.scheduler.runNow('one-time code clean-up');
    expect(await t.s.database.db.selectFrom('mfa_otp_codes').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
    adminToken = (await signIn(t.app, 'factors.admin')).access_token; // the week outlived the first one
    const after = await factorsOf(user.uuid);
    expect(after.statusCode, after.body).toBe(200);
    const body = after.json<{ enrolled: string[]; factors: { email_codes: unknown } }>();
    expect(body.enrolled).toEqual(['email']);
    expect(body.factors.email_codes).toEqual({ enrolled_at: usedAt, last_used_at: null, uses_kept_days: 7 });
  });

  it('a caller without users.read: 403 PERMISSION_DENIED', async () => {
    const target = await seedUser(t.s, 'factors.target');
    await seedUser(t.s, 'factors.nosy');
    const nosy = (await signIn(t.app, 'factors.nosy')).access_token;
    expectError(await factorsOf(target.uuid, nosy), 403, 'PERMISSION_DENIED');
  });

  it('an unknown uuid: 404 USER_NOT_FOUND; an integer id: 422 VALIDATION_ERROR naming the uuid', async () => {
    expectError(await factorsOf('0190f1c2-7a3b-7c4d-8e5f-6a7b8c9d0e1f'), 404, 'USER_NOT_FOUND');
    const body = expectError(await factorsOf('42'), 422, 'VALIDATION_ERROR');
    expect(JSON.stringify(body)).toContain('uuid');
  });

  it('without a session: 401 TOKEN_MISSING', async () => {
    const user = await seedUser(t.s, 'factors.anon');
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/admin/users/${user.uuid}/factors` }), 401, 'TOKEN_MISSING');
  });
});
