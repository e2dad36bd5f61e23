/**
 * Passkeys over HTTP with a software authenticator (test/harness/webauthn.ts): registration,
 * listing and renaming, passwordless sign-in through the one pipeline (two factors by itself), a
 * passkey as the second factor after a password, single-use challenges (a replay, a parallel
 * burst that opens one session), a cloned authenticator's counter, a wrong origin, an unknown
 * credential answered as a wrong password, deletion behind a step-up, an administrator's deletion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setSecurityLock } from '../../src/risk/responses/lock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { HOUR, ok, recovery } from '../harness/recovery.js';
import { withoutRequestId } from '../harness/request-id.js';
import { SoftAuthenticator } from '../harness/webauthn.js';

const ORIGIN = 'https://app.bank.example';
const ANDROID = `android:apk-key-hash:${'A'.repeat(43)}`;
const RP_ID = 'bank.example';

type Json = Record<string, unknown>;
interface Options { challenge_id: string; options: { challenge: string; rp: { id: string }; user: { id: string }; rpId?: string; allowCredentials?: { id: string }[]; excludeCredentials?: { id: string }[] } }

let t: TestApp;
let seq = 0;

beforeAll(async () => {
  t = await createTestApp({ env: { WEBAUTHN_RP_ID: RP_ID, WEBAUTHN_RP_NAME: 'Example Bank', WEBAUTHN_ORIGINS: `${ORIGIN},${ANDROID}` } });
});
afterAll(async () => t?.close());

const r = recovery(() => t);
const post = (url: string, payload: Json, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload, headers });

/** A new customer signed in with the password, and their first passkey registered. */
async function withPasskey(auth = new SoftAuthenticator(), roles: string[] = ['customer']) {
  const username = `passkey.user${++seq}`;
  const user = await seedUser(t.s, username, { roles });
  const session = await signIn(t.app, username);
  const options = await post('/api/v1/passkeys/registration/options', { current_password: STRONG_PASSWORD }, bearer(session.access_token));
  expect(options.statusCode, options.body).toBe(200);
  const o = options.json<Options>();
  const res = await post('/api/v1/passkeys/registration/verify', { challenge_id: o.challenge_id, name: 'My phone', response: auth.register(o.options, { origin: ORIGIN }) }, bearer(session.access_token));
  expect(res.statusCode, res.body).toBe(200);
  return { user, username, session, auth, passkey: res.json<{ id: string; name: string }>() };
}

async function signinOptions(): Promise<Options> {
  const res = await post('/api/v1/auth/passkey/options', {});
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Options>();
}

const passkeyLogin = (challengeId: string, response: Json) => post('/api/v1/auth/passkey/login', { challenge_id: challengeId, response });

async function activeSessions(userId: number): Promise<number> {
  const row = await t.s.database.db.selectFrom('sessions').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).where('is_active', '=', true).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Steps the session up with the passkey. */
async function stepUp(token: string, auth: SoftAuthenticator): Promise<void> {
  const o = (await post('/api/v1/auth/passkey/step-up/options', {}, bearer(token))).json<Options>();
  const res = await post('/api/v1/auth/passkey/step-up/verify', { challenge_id: o.challenge_id, response: auth.assert(o.options, { origin: ORIGIN }) }, bearer(token));
  expect(res.statusCode, res.body).toBe(200);
}

describe('registration and the owner\'s list', () => {
  it('registers a discoverable passkey with user verification, lists it without its key, renames it, and activates the passkey factor', async () => {
    const username = `passkey.reg${++seq}`;
    const user = await seedUser(t.s, username);
    const session = await signIn(t.app, username);
    expectError(await post('/api/v1/passkeys/registration/options', {}, bearer(session.access_token)), 422, 'VALIDATION_ERROR');
    const o = (await post('/api/v1/passkeys/registration/options', { current_password: STRONG_PASSWORD }, bearer(session.access_token))).json<Options & { options: Json }>();
    expect(o.options).toMatchObject({ rp: { id: RP_ID, name: 'Example Bank' }, authenticatorSelection: { residentKey: 'required', userVerification: 'required' }, attestation: 'none', excludeCredentials: [] });
    const auth = new SoftAuthenticator();
    const res = await post('/api/v1/passkeys/registration/verify', { challenge_id: o.challenge_id, name: 'Pixel 8', response: auth.register(o.options, { origin: ORIGIN }) }, bearer(session.access_token));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Pixel 8', device_type: 'multiDevice', backed_up: true, last_used_at: null, transports: ['internal', 'hybrid'] });

    const list = await t.app.inject({ method: 'GET', url: '/api/v1/passkeys', headers: bearer(session.access_token) });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.body).not.toContain(auth.id);
    const [row] = list.json<{ passkeys: Array<Json & { id: string }> }>().passkeys;
    expect(Object.keys(row!).sort()).toEqual(['aaguid', 'backed_up', 'created_at', 'device_type', 'id', 'last_used_at', 'name', 'suspended_at', 'transports']);
    const renamed = await t.app.inject({ method: 'PATCH', url: `/api/v1/passkeys/${row!.id}`, payload: { name: 'Work phone' }, headers: bearer(session.access_token) });
    expect(renamed.json(), renamed.body).toMatchObject({ id: row!.id, name: 'Work phone' });
    expect(await auditTotal(t.s, user.uuid, 'PASSKEY_REGISTERED')).toBe(1);
    expect(await t.s.factors.active(user.id)).toEqual(['passkey']);
    // The same challenge again (after the step-up a second passkey needs): spent.
    await stepUp(session.access_token, auth);
    expectError(await post('/api/v1/passkeys/registration/verify', { challenge_id: o.challenge_id, name: 'Again', response: new SoftAuthenticator().register(o.options, { origin: ORIGIN }) }, bearer(session.access_token)), 400, 'PASSKEY_CHALLENGE_INVALID');
  });

  it('a registration answered from another origin is refused', async () => {
    const username = `passkey.phish${++seq}`;
    await seedUser(t.s, username);
    const session = await signIn(t.app, username);
    const o = (await post('/api/v1/passkeys/registration/options', { current_password: STRONG_PASSWORD }, bearer(session.access_token))).json<Options>();
    const res = await post('/api/v1/passkeys/registration/verify', { challenge_id: o.challenge_id, name: 'Phished', response: new SoftAuthenticator().register(o.options, { origin: 'https://bank-example.evil' }) }, bearer(session.access_token));
    expect(expectError(res, 400, 'PASSKEY_REGISTRATION_FAILED').details).toMatchObject({ reason: 'origin' });
  });

  it('a second passkey needs a step-up with the first, and is excluded from then on', async () => {
    const { session, auth } = await withPasskey();
    expectError(await post('/api/v1/passkeys/registration/options', {}, bearer(session.access_token)), 403, 'STEP_UP_REQUIRED');
    await stepUp(session.access_token, auth);
    const o = (await post('/api/v1/passkeys/registration/options', {}, bearer(session.access_token))).json<Options>();
    expect(o.options.excludeCredentials?.map((c) => c.id)).toEqual([auth.id]);
    const res = await post('/api/v1/passkeys/registration/verify', { challenge_id: o.challenge_id, name: 'Laptop', response: new SoftAuthenticator(false).register(o.options, { origin: ORIGIN }) }, bearer(session.access_token));
    expect(res.json(), res.body).toMatchObject({ name: 'Laptop', device_type: 'singleDevice', backed_up: false });
  });
});

describe('passwordless sign-in', () => {
  it('signs in with the passkey alone: mfa_completed, audited with mfa_method passkey, counter and last use recorded', async () => {
    const { user, auth } = await withPasskey();
    const o = await signinOptions();
    expect(o.options).toMatchObject({ rpId: RP_ID, allowCredentials: [], userVerification: 'required' });
    const res = await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ token_type: 'bearer', user_profile: { mfa_completed: true } });
    const logins = (await t.s.audit.query({ userId: user.uuid, eventType: 'USER_LOGIN', limit: 10, offset: 0 })).entries;
    expect(logins.filter((e) => e.mfa_method === 'passkey').map((e) => (e.details as { method: string }).method)).toEqual(['passkey']);
    const row = await t.s.database.db.selectFrom('passkeys').select(['sign_count', 'last_used_at']).where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(Number(row.sign_count)).toBe(auth.counter);
    expect(new Date(row.last_used_at!).getTime()).toBe(t.clock.now());
  });

  it('a replayed answer is refused: its challenge was spent', async () => {
    const { auth } = await withPasskey();
    const o = await signinOptions();
    const answer = auth.assert(o.options, { origin: ORIGIN });
    expect((await passkeyLogin(o.challenge_id, answer)).statusCode).toBe(200);
    expectError(await passkeyLogin(o.challenge_id, answer), 401, 'INVALID_CREDENTIALS');
  });

  it('a parallel burst of one answer signs in once', async () => {
    const { user, auth } = await withPasskey();
    const before = await activeSessions(user.id);
    const o = await signinOptions();
    const answer = auth.assert(o.options, { origin: ORIGIN });
    const results = await Promise.all(Array.from({ length: 8 }, () => passkeyLogin(o.challenge_id, answer)));
    expect(results.filter((r) => r.statusCode === 200), results.map((r) => r.body).join('\n')).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expect([401, 429], r.body).toContain(r.statusCode);
    expect(await activeSessions(user.id)).toBe(before + 1);
    expect(await auditTotal(t.s, user.uuid, 'PASSKEY_CLONE_DETECTED')).toBe(0);
  });

  it('a counter that went back (a cloned authenticator) is refused and audited, the stored counter untouched', async () => {
    const { user, auth } = await withPasskey();
    const first = await signinOptions();
    expect((await passkeyLogin(first.challenge_id, auth.assert(first.options, { origin: ORIGIN, counter: 10 }))).statusCode).toBe(200);
    const o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN, counter: 7 })), 401, 'INVALID_CREDENTIALS');
    expect(await auditTotal(t.s, user.uuid, 'PASSKEY_CLONE_DETECTED')).toBe(1);
    const row = await t.s.database.db.selectFrom('passkeys').select('sign_count').where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(Number(row.sign_count)).toBe(10);
  });

  it('threat: after a clone is detected, the copy with the higher counter still signs in: the passkey is suspended, 401 INVALID_CREDENTIALS for every copy, shown suspended, alerted once', async () => {
    const { user, session, auth, passkey } = await withPasskey();
    const first = await signinOptions();
    expect((await passkeyLogin(first.challenge_id, auth.assert(first.options, { origin: ORIGIN, counter: 10 }))).statusCode).toBe(200);
    let o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN, counter: 7 })), 401, 'INVALID_CREDENTIALS');
    // The other copy, counting higher: refused as well, and so is a second factor with it.
    o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN, counter: 50 })), 401, 'INVALID_CREDENTIALS');
    const row = await t.s.database.db.selectFrom('passkeys').select(['sign_count', 'suspended_at']).where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(Number(row.sign_count)).toBe(10);
    expect(new Date(row.suspended_at!).getTime()).toBe(t.clock.now());
    const shown = await t.app.inject({ method: 'GET', url: '/api/v1/passkeys', headers: bearer(session.access_token) });
    expect(shown.json<{ passkeys: Json[] }>().passkeys).toEqual([expect.objectContaining({ id: passkey.id, suspended_at: new Date(t.clock.now()).toISOString() })]);
    const byAdmin = await t.app.inject({ method: 'GET', url: `/api/v1/admin/users/${user.uuid}/passkeys`, headers: bearer(await admin()) });
    expect(byAdmin.json<{ passkeys: Json[] }>().passkeys).toEqual([expect.objectContaining({ id: passkey.id, suspended_at: new Date(t.clock.now()).toISOString() })]);
    // Another clone answer: audited again, one alert for the passkey.
    o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN, counter: 3 })), 401, 'INVALID_CREDENTIALS');
    const alerts = await t.s.database.db.selectFrom('security_alerts').select(['rule', 'severity', 'dedupe_key']).where('user_uuid', '=', user.uuid).execute();
    expect(alerts).toEqual([{ rule: 'passkey_clone', severity: 'high', dedupe_key: `passkey_clone:${passkey.id}` }]);
    const challenge = expectError(await login(t.app, (await t.s.users.findById(user.id))!.username), 401, '2FA_REQUIRED').details as { two_factor_token: string };
    const second = (await post('/api/v1/auth/passkey/2fa/options', { two_factor_token: challenge.two_factor_token })).json<Options>();
    expect(second.options.allowCredentials).toEqual([]);
  });

  it('an answer made on another origin, or without user verification, is refused', async () => {
    const { auth } = await withPasskey();
    let o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: 'https://bank-example.evil' })), 401, 'INVALID_CREDENTIALS');
    o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN, userVerified: false })), 401, 'INVALID_CREDENTIALS');
    o = await signinOptions();
    expect((await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN }))).statusCode).toBe(200);
  });

  it('an unknown passkey gets the same 401 body as a wrong password', async () => {
    const { username } = await withPasskey();
    const o = await signinOptions();
    const unknown = expectError(await passkeyLogin(o.challenge_id, new SoftAuthenticator().assert(o.options, { origin: ORIGIN })), 401, 'INVALID_CREDENTIALS');
    const wrong = expectError(await login(t.app, username, WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expect({ ...unknown, details: withoutRequestId(unknown.details) }).toEqual({ ...wrong, details: withoutRequestId(wrong.details) });
  });
});

/** A new administrator's session (the clock moves in some tests: a session is not kept). */
async function admin(): Promise<string> {
  const username = `passkey.admin.p${++seq}`;
  await seedUser(t.s, username, { roles: ['admin'] });
  return (await signIn(t.app, username)).access_token;
}

async function accessPolicy(channel: string, role: string, rules: Json): Promise<string> {
  const res = await post('/api/v1/admin/access-policies', { name: `passkeys ${channel} ${role} ${++seq}`, channel, role, rules }, bearer(await admin()));
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ policy: { id: string } }>().policy.id;
}

describe('the channel\'s accepted second factors (second_factor_methods)', () => {
  it('threat: a passwordless passkey sign-in bypasses a policy accepting only totp: 403 POLICY_RESTRICTED, rule factor, audited', async () => {
    const { user, auth } = await withPasskey(new SoftAuthenticator(), ['operator']);
    const policyId = await accessPolicy('web', 'operator', { second_factor_methods: ['totp'] });
    try {
      const o = await signinOptions();
      const refused = expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN })), 403, 'POLICY_RESTRICTED');
      expect(refused.details).toMatchObject({ rule: 'factor' });
      const violation = (await t.s.audit.query({ userId: user.uuid, eventType: 'POLICY_VIOLATION', limit: 1, offset: 0 })).entries[0];
      expect(violation?.details).toMatchObject({ rule: 'factor', policy_id: policyId });
      expect(await activeSessions(user.id)).toBe(1); // the registration's password session only
    } finally {
      await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${policyId}`, headers: bearer(await admin()) });
    }
  });

  it('a policy may name passkey: a passwordless sign-in on that channel is accepted', async () => {
    const { auth } = await withPasskey(new SoftAuthenticator(), ['staff']);
    const policyId = await accessPolicy('web', 'staff', { second_factor_methods: ['passkey'] });
    try {
      const o = await signinOptions();
      const res = await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN }));
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${policyId}`, headers: bearer(await admin()) });
    }
  });
});

describe('the channel of a passwordless sign-in', () => {
  it('threat: a passkey sign-in from the Android app is taken as web, escaping the mobile channel\'s policy: 403 POLICY_RESTRICTED, rule channel', async () => {
    const { auth } = await withPasskey(new SoftAuthenticator(), ['agent']);
    const policyId = await accessPolicy('mobile', 'agent', { allow_channel: false });
    try {
      let o = await signinOptions();
      const refused = expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ANDROID })), 403, 'POLICY_RESTRICTED');
      expect(refused.details).toMatchObject({ rule: 'channel' });
      o = await signinOptions();
      const web = await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN }));
      expect(web.statusCode, web.body).toBe(200);
      expect(web.json()).toMatchObject({ user_profile: { channel: 'web' } });
    } finally {
      await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${policyId}`, headers: bearer(await admin()) });
    }
  });

  it('a sign-in from the Android app opens a mobile session', async () => {
    const { auth } = await withPasskey();
    const o = await signinOptions();
    const res = await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ANDROID }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user_profile: { channel: 'mobile', mfa_completed: true } });
  });
});

describe('recovery takes the passkeys', () => {
  it('threat: a passkey survives the lost-device recovery: deleted with the factor once the cooling-off ends, audited PASSKEY_DELETED, then 401 INVALID_CREDENTIALS', async () => {
    const { user, username, auth, passkey } = await withPasskey();
    const started = ok(await r.initiate(username, 'device'), 202);
    ok(await r.approve(started.reference!, await admin(), { document_type: 'national_id', document_number_last4: '0042' }));
    expect(ok(await r.verify(started.recovery_id!, { proof: 'password', password: STRONG_PASSWORD })).state).toBe('waiting');
    t.clock.advance(24 * HOUR);
    expect(await t.scheduler.runNow('account recovery completion')).toBe(true);
    expect(await t.s.database.db.selectFrom('passkeys').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
    expect(await t.s.factors.active(user.id)).toEqual([]);
    const entry = (await t.s.audit.query({ userId: user.uuid, eventType: 'PASSKEY_DELETED', limit: 1, offset: 0 })).entries[0];
    expect(entry?.details).toMatchObject({ reason: 'device_recovery', passkey_ids: [passkey.id], passkeys_left: 0 });
    const o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN })), 401, 'INVALID_CREDENTIALS');
  });

  it('threat: a passkey an intruder registered survives the recovery that lifts a "this was not me" lock: deleted with the new password, audited, then 401 INVALID_CREDENTIALS', async () => {
    const { user, auth, passkey } = await withPasskey();
    await setSecurityLock(t.s.database.db, user.id, new Date(t.clock.now()));
    // The reset token a completed password recovery hands out (`recovered`).
    const reset = (await t.s.tokens.issue('reset', { user_id: user.uuid, purpose: 'password_change', recovered: true })).token;
    const res = await post('/api/v1/auth/reset/password', { reset_token: reset, new_password: 'Kp3#wZm8!tRq5&' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await auditTotal(t.s, user.uuid, 'ACCOUNT_SECURITY_UNLOCKED')).toBe(1);
    expect(await t.s.database.db.selectFrom('passkeys').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
    expect(await t.s.factors.active(user.id)).toEqual([]);
    const entry = (await t.s.audit.query({ userId: user.uuid, eventType: 'PASSKEY_DELETED', limit: 1, offset: 0 })).entries[0];
    expect(entry?.details).toMatchObject({ reason: 'security_lock_lifted', passkey_ids: [passkey.id], passkeys_left: 0 });
    const o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN })), 401, 'INVALID_CREDENTIALS');
  });
});

describe('as the second factor', () => {
  it('after the password, 2FA_REQUIRED offers passkey, and the passkey finishes the sign-in', async () => {
    const { username, auth } = await withPasskey();
    const challenge = expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { two_factor_token: string; methods: string[] };
    expect(challenge.methods).toContain('passkey');
    const o = (await post('/api/v1/auth/passkey/2fa/options', { two_factor_token: challenge.two_factor_token })).json<Options>();
    expect(o.options.allowCredentials?.map((c) => c.id)).toEqual([auth.id]);
    // A sign-in challenge (not bound to this 2FA token) does not do.
    const other = await signinOptions();
    expectError(await post('/api/v1/auth/passkey/2fa/verify', { two_factor_token: challenge.two_factor_token, challenge_id: other.challenge_id, response: auth.assert(other.options, { origin: ORIGIN }) }), 400, 'PASSKEY_CHALLENGE_INVALID');
    const res = await post('/api/v1/auth/passkey/2fa/verify', { two_factor_token: challenge.two_factor_token, challenge_id: o.challenge_id, response: auth.assert(o.options, { origin: ORIGIN }) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user_profile: { username, mfa_completed: true } });
  });
});

describe('deletion', () => {
  it('the owner deletes one only after a step-up; the last one takes the factor with it', async () => {
    const { user, session, auth, passkey } = await withPasskey();
    const del = () => t.app.inject({ method: 'DELETE', url: `/api/v1/passkeys/${passkey.id}`, headers: bearer(session.access_token) });
    expectError(await del(), 403, 'STEP_UP_REQUIRED');
    await stepUp(session.access_token, auth);
    const res = await del();
    expect(res.json(), res.body).toEqual({ deleted: true, passkeys_left: 0 });
    expect(await t.s.factors.active(user.id)).toEqual([]);
    expect(await auditTotal(t.s, user.uuid, 'PASSKEY_DELETED')).toBe(1);
    const o = await signinOptions();
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN })), 401, 'INVALID_CREDENTIALS');
  });

  it('an administrator lists and deletes a user\'s passkey (audited with the administrator)', async () => {
    const { user, passkey } = await withPasskey();
    await seedUser(t.s, `passkey.admin${++seq}`, { roles: ['admin'] });
    const adminSession = await signIn(t.app, `passkey.admin${seq}`);
    const list = await t.app.inject({ method: 'GET', url: `/api/v1/admin/users/${user.uuid}/passkeys`, headers: bearer(adminSession.access_token) });
    expect(list.json<{ passkeys: Json[] }>().passkeys.map((p) => p.id)).toEqual([passkey.id]);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${user.uuid}/passkeys/${passkey.id}`, headers: bearer(adminSession.access_token) });
    expect(res.json(), res.body).toEqual({ deleted: true, passkeys_left: 0 });
    const entry = (await t.s.audit.query({ userId: user.uuid, eventType: 'PASSKEY_DELETED', limit: 1, offset: 0 })).entries[0];
    expect(entry?.details).toMatchObject({ passkey_id: passkey.id, admin_username: `passkey.admin${seq}` });
    const customer = await signIn(t.app, `passkey.admin${seq}`);
    expect(customer.access_token).toBeTruthy();
  });
});

describe('challenges', () => {
  it('expire after 5 minutes and the clean-up job deletes them', async () => {
    const { auth } = await withPasskey();
    const o = await signinOptions();
    t.clock.advance(5 * 60_000 + 1);
    expectError(await passkeyLogin(o.challenge_id, auth.assert(o.options, { origin: ORIGIN })), 401, 'INVALID_CREDENTIALS');
    await t.scheduler.runNow('passkey challenge clean-up');
    const left = await t.s.database.db.selectFrom('webauthn_challenges').select('id').where('id', '=', o.challenge_id).executeTakeFirst();
    expect(left).toBeUndefined();
  });
});

describe('set up as the first factor (403 MFA_SETUP_INCOMPLETE)', () => {
  interface SetUp { two_factor_token: string; setup_methods: string[] }

  /** A new operator whom a web policy requires to hold a factor: the password step stops at MFA_SETUP_INCOMPLETE. */
  async function mustSetUp(rules: Json = { require_second_factor: true }) {
    const username = `passkey.setup${++seq}`;
    const user = await seedUser(t.s, username, { roles: ['operator'] });
    const policyId = await accessPolicy('web', 'operator', rules);
    const setup = expectError(await login(t.app, username), 403, 'MFA_SETUP_INCOMPLETE').details as unknown as SetUp;
    return { user, username, policyId, setup };
  }
  const dropPolicy = async (policyId: string) => t.app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${policyId}`, headers: bearer(await admin()) });
  const setupOptions = async (token: string): Promise<Options> => {
    const res = await post('/api/v1/passkeys/registration/options', { two_factor_token: token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Options>();
  };

  it('offers passkey; the set-up token registers one and the sign-in finishes (mfa_completed); the passkey then signs in, and the password asks for it', async () => {
    const { user, username, policyId, setup } = await mustSetUp();
    try {
      expect(setup.setup_methods).toContain('passkey');
      const auth = new SoftAuthenticator();
      const o = await setupOptions(setup.two_factor_token);
      expect(o.options.user).toMatchObject({ name: username });
      const res = await post('/api/v1/passkeys/registration/verify', { two_factor_token: setup.two_factor_token, challenge_id: o.challenge_id, name: 'Pixel 8', response: auth.register(o.options, { origin: ORIGIN }) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ name: 'Pixel 8', sign_in: { token_type: 'bearer', user_profile: { username, mfa_completed: true } } });
      expect(await t.s.factors.active(user.id)).toEqual(['passkey']);
      expect(await activeSessions(user.id)).toBe(1);
      const entry = (await t.s.audit.query({ userId: user.uuid, eventType: 'USER_LOGIN', limit: 1, offset: 0 })).entries[0];
      expect(entry?.mfa_method).toBe('passkey');
      // The token finished its sign-in: it is spent.
      expectError(await post('/api/v1/passkeys/registration/options', { two_factor_token: setup.two_factor_token }), 401, 'TOKEN_REVOKED');
      const signin = await signinOptions();
      const alone = await passkeyLogin(signin.challenge_id, auth.assert(signin.options, { origin: ORIGIN }));
      expect(alone.json(), alone.body).toMatchObject({ user_profile: { username, mfa_completed: true } });
      const challenge = expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { methods: string[] };
      expect(challenge.methods).toEqual(['passkey']);
    } finally {
      await dropPolicy(policyId);
    }
  });

  it('threat: a burst of registrations with one set-up token adds a passkey each and opens a session each: one passkey, one session, the others 401 TOKEN_REVOKED', async () => {
    const { user, policyId, setup } = await mustSetUp();
    try {
      const token = setup.two_factor_token;
      const answers = [];
      for (let i = 0; i < 6; i++) {
        const o = await setupOptions(token);
        answers.push({ two_factor_token: token, challenge_id: o.challenge_id, name: `Phone ${i}`, response: new SoftAuthenticator().register(o.options, { origin: ORIGIN }) });
      }
      const results = await Promise.all(answers.map((a) => post('/api/v1/passkeys/registration/verify', a)));
      expect(results.filter((r) => r.statusCode === 200), results.map((r) => r.body).join('\n')).toHaveLength(1);
      for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 401, 'TOKEN_REVOKED');
      expect(await t.s.database.db.selectFrom('passkeys').select('id').where('user_id', '=', user.id).execute()).toHaveLength(1);
      expect(await activeSessions(user.id)).toBe(1);
      expect(await auditTotal(t.s, user.uuid, 'PASSKEY_REGISTERED')).toBe(1);
    } finally {
      await dropPolicy(policyId);
    }
  });

  it('threat: the sign-in token of 2FA_REQUIRED (the password alone) adds a passkey to an account that has a factor: 401 TOKEN_INVALID', async () => {
    const { username } = await withPasskey();
    const challenge = expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { two_factor_token: string };
    expectError(await post('/api/v1/passkeys/registration/options', { two_factor_token: challenge.two_factor_token }), 401, 'TOKEN_INVALID');
    const o = await post('/api/v1/passkeys/registration/options', {});
    expectError(o, 401, 'TOKEN_MISSING');
  });

  it('threat: a set-up token of a channel that accepts only totp registers a passkey: 400 MFA_METHOD_UNAVAILABLE, nothing stored', async () => {
    const { user, policyId, setup } = await mustSetUp({ second_factor_methods: ['totp'] });
    try {
      expect(setup.setup_methods).toEqual(['totp']);
      expectError(await post('/api/v1/passkeys/registration/options', { two_factor_token: setup.two_factor_token }), 400, 'MFA_METHOD_UNAVAILABLE');
      expect(await t.s.database.db.selectFrom('webauthn_challenges').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
    } finally {
      await dropPolicy(policyId);
    }
  });
});
