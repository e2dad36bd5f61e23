/**
 * Push approval over HTTP (both databases, a frozen clock, the local FCM fake): the phone enrols a
 * software P-256 key (as Android Keystore or the Secure Enclave would hold it); a sign-in asks the
 * phone, which sees three numbers and approves with the one the page shows; the page completes
 * the sign-in. The threats: a wrong number or a denial does not sign in; a parallel burst of
 * answers counts one, and of completions opens one session; another key's signature and an access
 * token without the key cannot approve; an expired request is refused; the hourly limit; a fraud
 * report raises a security alert. From the security review: one pending request per account
 * (parallel sign-ins supersede), no answer while the second factor is locked and no clearing of
 * its count before the sign-in completes, a wrong number ends the token's push approval, the
 * fraud report is signed, an MFA reset denies an unspent approval, replacing the key needs a
 * step-up and keeps the working key until confirmed, a key whose device is gone or not the
 * user's is no factor, and a fraud report pauses the account's push approval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerMessage, enrolMessage } from '../../src/push-approval/crypto.js';
import { setSecurityLock } from '../../src/risk/responses/lock.js';
import type { TestApp } from '../harness/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import type { FakeFcm } from '../harness/fcm.js';
import { auditTotal, bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { approvalKit, newPhone, signWith, startApprovalApp, wrongOf, type Sent } from '../harness/push-approval.js';

type Json = Record<string, unknown>;

let fcm: FakeFcm;
let t: TestApp;
// Optional attestation (the default outside production), said here: a phone sending none enrols.
beforeAll(async () => ({ t, fcm } = await startApprovalApp({ env: { PUSH_APPROVAL_ATTESTATION: 'optional' } })));
afterAll(async () => {
  await t?.close();
  await fcm?.close();
});

const { post, register, enrolled, passwordStep, ask, answer, complete, count, failures, steppedUp } = approvalKit(() => t);

describe('enrolment and a sign-in approved on the phone', () => {
  it('enrolment: the password for a first factor, the challenge signed by the key given at setup (another key\'s signature refused, 401), no attestation needed in optional mode (stored as none)', async () => {
    const username = 'approval.enrol';
    const user = await seedUser(t.s, username);
    const access = (await signIn(t.app, username)).access_token;
    const phone = newPhone();
    const deviceId = await register(access, phone);
    expectError(await post('/api/v1/2fa/push-approval/setup', { device_id: deviceId, public_key: phone.publicKey }, bearer(access)), 422, 'VALIDATION_ERROR');
    const setup = await post('/api/v1/2fa/push-approval/setup', { device_id: deviceId, public_key: phone.publicKey, current_password: STRONG_PASSWORD }, bearer(access));
    expect(setup.statusCode, setup.body).toBe(200);
    const { challenge, ...rest } = setup.json<{ challenge: string; expires_in: number; attestation: string }>();
    expect(rest).toEqual({ expires_in: 300, attestation: 'optional' });
    expectError(await post('/api/v1/2fa/push-approval/confirm', { signature: signWith(newPhone().key, enrolMessage(user.uuid, challenge)) }, bearer(access)), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    expect(await auditTotal(t.s, user.uuid, 'MFA_FAILED')).toBe(1);
    // The key sent again must be the setup's.
    expect(expectError(await post('/api/v1/2fa/push-approval/confirm', { signature: signWith(phone.key, enrolMessage(user.uuid, challenge)), public_key: newPhone().publicKey }, bearer(access)), 422, 'VALIDATION_ERROR').details)
      .toMatchObject({ fields: [{ field: 'public_key' }] });
    const confirm = await post('/api/v1/2fa/push-approval/confirm', { signature: signWith(phone.key, enrolMessage(user.uuid, challenge)), public_key: phone.publicKey }, bearer(access));
    expect(confirm.statusCode, confirm.body).toBe(200);
    expect(confirm.json()).toEqual({ enrolled: true, method: 'push_approval', attestation: 'none' });
    const key = await t.s.database.db.selectFrom('push_approval_keys').select(['public_key', 'attestation']).where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(key).toEqual({ public_key: phone.publicKey, attestation: null });
    const enrolledEvent = (await t.s.audit.query({ userId: user.uuid, eventType: 'MFA_ENROLLED', limit: 5, offset: 0 })).entries;
    expect(enrolledEvent.map((e) => e.details)).toEqual([{ attestation: 'none' }]);
  });

  it('the phone sees three numbers, approves with the one shown, and the page completes the sign-in (mfa_completed, audited with mfa_method push_approval)', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    expect(sent.expires_in).toBe(300);
    expect(sent.number).toBeGreaterThanOrEqual(10);
    expect(sent.number).toBeLessThanOrEqual(99);
    // Asking again while pending answers the same request and sends nothing more.
    expect(await ask(token)).toMatchObject({ request_id: sent.request_id, number: sent.number });
    await t.s.pushOutbox.drain();
    const pushes = fcm.sent.filter((m) => m.token === u.phone.token);
    expect(pushes).toHaveLength(1);
    expect(pushes[0]!.data).toEqual({ type: 'push_approval', request_id: sent.request_id });
    expect(`${pushes[0]!.notification.title} ${pushes[0]!.notification.body}`).not.toMatch(/\d/); // no number, no code

    expectError(await complete(token, sent.request_id), 409, 'PUSH_APPROVAL_PENDING');
    const pending = await complete(token, sent.request_id);
    expect(pending.headers['retry-after']).toBe('2');

    const view = await t.app.inject({ method: 'GET', url: `/api/v1/push-approval/requests/${sent.request_id}`, headers: bearer(u.access) });
    expect(view.statusCode, view.body).toBe(200);
    const v = view.json<{ choices: number[] } & Json>();
    expect(v).toMatchObject({ device: { browser: 'Firefox', system: 'Windows' }, channel: 'web', state: 'pending' });
    expect(v.choices).toHaveLength(3);
    expect(new Set(v.choices).size).toBe(3);
    expect(v.choices).toContain(sent.number);
    expect(v).not.toHaveProperty('number');

    const ok = await answer(u, sent.request_id, 'approve', sent.number);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({ id: sent.request_id, state: 'approved', deny_reason: null });
    const done = await complete(token, sent.request_id);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ token_type: 'bearer', user_profile: { mfa_completed: true } });
    // The 2FA token is spent: once.
    expectError(await complete(token, sent.request_id), 401, 'TOKEN_REVOKED');
    const logins = (await t.s.audit.query({ userId: u.user.uuid, eventType: 'USER_LOGIN', limit: 10, offset: 0 })).entries;
    expect(logins.filter((e) => e.mfa_method === 'push_approval')).toHaveLength(1);
    // The user's open pages and apps heard of the request once, and of the approval.
    const events = await t.s.database.db.selectFrom('realtime_events').select(['type', 'data']).where('user_id', '=', u.user.id).orderBy('id').execute();
    expect(events.map((e) => e.type)).toEqual(['second_factor.requested', 'second_factor.approved']);
    expect(events[1]!.data).toEqual({ method: 'push_approval', request_id: sent.request_id });
  });

  it('a request of another 2FA token is not found', async () => {
    const u = await enrolled();
    const first = await ask(await passwordStep(u));
    expectError(await complete(await passwordStep(u), first.request_id), 404, 'PUSH_APPROVAL_NOT_FOUND');
  });
});

describe('what does not sign in', () => {
  it('a wrong number denies the sign-in and counts as a failed second factor', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    const res = await answer(u, sent.request_id, 'approve', wrongOf(sent.number));
    expect(res.json()).toEqual({ id: sent.request_id, state: 'denied', deny_reason: 'wrong_number' });
    expect(expectError(await complete(token, sent.request_id), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'wrong_number' });
    expect(await failures(u.user.id)).toBe(1);
    expect(await auditTotal(t.s, u.user.uuid, 'MFA_FAILED')).toBe(1);
    // A second answer does not change it.
    expectError(await answer(u, sent.request_id, 'approve', sent.number), 409, 'PUSH_APPROVAL_ANSWERED');
  });

  it('a denial does not sign in; with report_fraud it raises a high security alert', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    expectError(await answer(u, sent.request_id, 'approve'), 422, 'VALIDATION_ERROR');
    const res = await answer(u, sent.request_id, 'deny', undefined, { report_fraud: true });
    expect(res.json()).toEqual({ id: sent.request_id, state: 'denied', deny_reason: 'fraud_reported' });
    const denied = await t.s.database.db.selectFrom('realtime_events').select('data').where('user_id', '=', u.user.id).where('type', '=', 'second_factor.denied').execute();
    expect(denied.map((e) => e.data)).toEqual([{ method: 'push_approval', request_id: sent.request_id, reason: 'fraud_reported' }]);
    expectError(await complete(token, sent.request_id), 403, 'PUSH_APPROVAL_DENIED');
    const alerts = await t.s.database.db.selectFrom('security_alerts').select(['rule', 'severity']).where('user_uuid', '=', u.user.uuid).execute();
    expect(alerts).toEqual([{ rule: 'push_approval_fraud', severity: 'high' }]);
    // That 2FA token asks the phone no more.
    expect(expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: token }), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'fraud_reported' });
    expect(await t.s.database.db.selectFrom('security_alerts').select('id').where('user_uuid', '=', u.user.uuid).execute()).toHaveLength(1);
  });

  it('a plain denial lets a new request of the same 2FA token follow, with a new request', async () => {
    const u = await enrolled();
    const other = await passwordStep(u);
    const first = await ask(other);
    expect((await answer(u, first.request_id, 'deny')).json()).toMatchObject({ state: 'denied', deny_reason: 'denied' });
    const again = await ask(other);
    expect(again.request_id).not.toBe(first.request_id);
  });

  it('another key\'s signature, or an access token alone, cannot approve', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    expectError(await answer(u, sent.request_id, 'approve', sent.number, {}, newPhone().key), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    expectError(await post(`/api/v1/push-approval/requests/${sent.request_id}/answer`, { decision: 'approve', choice: sent.number, signature: 'MEUCIQD' }, bearer(u.access)), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    // A signature over another request's answer does not carry over.
    const forged = signWith(u.phone.key, answerMessage(u.user.uuid, '00000000-0000-4000-8000-000000000000', 'approve', sent.number));
    expectError(await post(`/api/v1/push-approval/requests/${sent.request_id}/answer`, { decision: 'approve', choice: sent.number, signature: forged }, bearer(u.access)), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    // Another account's session cannot see or answer it.
    const other = await enrolled();
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/push-approval/requests/${sent.request_id}`, headers: bearer(other.access) }), 404, 'PUSH_APPROVAL_NOT_FOUND');
    expectError(await complete(token, sent.request_id), 409, 'PUSH_APPROVAL_PENDING');
    expect(await count('push_approval_requests', u.user.id, { state: 'pending' })).toBe(1);
  });

  it('an expired request is refused, on the phone and on the page', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    t.clock.advance(300_000);
    const view = await t.app.inject({ method: 'GET', url: `/api/v1/push-approval/requests/${sent.request_id}`, headers: bearer(u.access) });
    expect(view.json()).toMatchObject({ state: 'expired' });
    expectError(await answer(u, sent.request_id, 'approve', sent.number), 410, 'PUSH_APPROVAL_EXPIRED');
    expectError(await complete(token, sent.request_id), 410, 'PUSH_APPROVAL_EXPIRED');
  });
});

describe('bursts and limits', () => {
  it('wrong numbers count toward MFA_MAX_FAILURES (5): then requests and completions answer 429 MFA_LOCKED', async () => {
    const u = await enrolled();
    let last: { token: string; sent: Sent } | undefined;
    for (let i = 0; i < 5; i++) {
      const token = await passwordStep(u);
      const sent = await ask(token);
      expect((await answer(u, sent.request_id, 'approve', wrongOf(sent.number))).json()).toMatchObject({ deny_reason: 'wrong_number' });
      last = { token, sent };
    }
    expect(await auditTotal(t.s, u.user.uuid, 'MFA_LOCKED')).toBe(1);
    // The password step still asks for the second factor; the phone is not asked.
    expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: await passwordStep(u) }), 429, 'MFA_LOCKED');
    expect(await count('push_approval_requests', u.user.id)).toBe(5);
    expectError(await complete(last!.token, last!.sent.request_id), 429, 'MFA_LOCKED');
  });


  it('a parallel burst of 8 approvals counts one; a burst of 8 completions opens one session', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    const answers = await Promise.all(Array.from({ length: 8 }, () => answer(u, sent.request_id, 'approve', sent.number)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    expect(await count('push_approval_requests', u.user.id, { state: 'approved' })).toBe(1);
    const verified = (await t.s.audit.query({ userId: u.user.uuid, eventType: 'MFA_VERIFIED', limit: 20, offset: 0 })).entries;
    expect(verified.filter((e) => (e.details as { step?: string }).step === 'phone_approved')).toHaveLength(1);
    const before = await count('sessions', u.user.id);
    const completions = await Promise.all(Array.from({ length: 8 }, () => complete(token, sent.request_id)));
    expect(completions.filter((r) => r.statusCode === 200)).toHaveLength(1);
    // The others find the approval spent (409) or, once the sign-in finished, the 2FA token spent (401).
    const others = completions.filter((r) => r.statusCode !== 200).map((r) => `${r.statusCode} ${r.json<{ error_code: string }>().error_code}`);
    expect(others).toHaveLength(7);
    for (const o of others) expect(['409 PUSH_APPROVAL_USED', '401 TOKEN_REVOKED']).toContain(o);
    expect(await count('sessions', u.user.id)).toBe(before + 1);
  });

  it('at most PUSH_APPROVAL_MAX_PER_HOUR (5) requests an hour per account, then 429 with Retry-After', async () => {
    const u = await enrolled();
    for (let i = 0; i < 5; i++) await ask(await passwordStep(u));
    const token = await passwordStep(u);
    const refused = await post('/api/v1/auth/push-approval/request', { two_factor_token: token });
    expectError(refused, 429, 'PUSH_APPROVAL_TOO_MANY');
    expect(Number(refused.headers['retry-after'])).toBe(3600);
    expect(await count('push_approval_requests', u.user.id)).toBe(5);
    t.clock.advance(3_600_000);
    await ask(await passwordStep(u));
  });
});

describe('a lost or intruder\'s phone', () => {
  it('threat: the recovery that lifts a "this was not me" lock removes the push-approval key and factor, and denies the pending request', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    await setSecurityLock(t.s.database.db, u.user.id, new Date(t.clock.now()));
    const reset = (await t.s.tokens.issue('reset', { user_id: u.user.uuid, purpose: 'password_change', recovered: true })).token;
    const res = await post('/api/v1/auth/reset/password', { reset_token: reset, new_password: 'Kp3#wZm8!tRq5&' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await t.s.factors.active(u.user.id)).toEqual([]);
    expect(await t.s.database.db.selectFrom('push_approval_keys').select('id').where('user_id', '=', u.user.id).execute()).toEqual([]);
    expect(await auditTotal(t.s, u.user.uuid, 'PUSH_APPROVAL_REMOVED')).toBe(1);
    // The phone's session ended with the password change; with a new one, the old key approves nothing.
    const fresh = { ...u, access: (await signIn(t.app, u.username, 'Kp3#wZm8!tRq5&')).access_token };
    expectError(await answer(fresh, sent.request_id, 'approve', sent.number), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    expect(await count('push_approval_requests', u.user.id, { state: 'pending' })).toBe(0);
  });
});

describe('a phone that can no longer be reached', () => {
  it('once the enrolled phone\'s token is inactive, push_approval is no longer offered, and a request of an earlier token answers 503', async () => {
    const u = await enrolled();
    const earlier = await passwordStep(u);
    await t.s.database.db.updateTable('device_tokens').set({ is_active: false }).where('user_id', '=', u.user.id).execute();
    const res = await login(t.app, u.username);
    expect(JSON.stringify((res.json() as { details?: unknown }).details ?? {})).not.toContain('push_approval');
    expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: earlier }), 503, 'PUSH_APPROVAL_UNAVAILABLE');
    expect(await count('push_approval_requests', u.user.id)).toBe(0);
  });
});

describe('enrolling when the account has another factor', () => {
  it('needs a recent step-up with it, not the password', async () => {
    await seedUser(t.s, 'approval.totp');
    const access = (await signIn(t.app, 'approval.totp')).access_token;
    const { authenticator } = await enrolTotp(t.app, t.clock, access);
    t.clock.advance(11 * 60_000); // past the enrolment's own step-up
    const phone = newPhone();
    const body = { device_id: await register(access, phone), public_key: phone.publicKey, current_password: STRONG_PASSWORD };
    expectError(await post('/api/v1/2fa/push-approval/setup', body, bearer(access)), 403, 'STEP_UP_REQUIRED');
    const up = await post('/api/v1/auth/totp/verify', { code: authenticator.code(t.clock.now()) }, bearer(access));
    expect(up.statusCode, up.body).toBe(200);
    expect((await post('/api/v1/2fa/push-approval/setup', body, bearer(access))).statusCode).toBe(200);
  });
});

describe('threats from the security review', () => {
  it('threat: parallel sign-ins cannot turn number matching into a guess: one pending request per account, a new one supersedes the older (no second push for it)', async () => {
    const u = await enrolled();
    const tokens = [await passwordStep(u), await passwordStep(u), await passwordStep(u)];
    const sent: Sent[] = [];
    for (const tk of tokens) sent.push(await ask(tk));
    expect(await count('push_approval_requests', u.user.id, { state: 'pending' })).toBe(1);
    expect(await count('push_approval_requests', u.user.id, { deny_reason: 'superseded' })).toBe(2);
    for (const i of [0, 1]) {
      expect(expectError(await complete(tokens[i]!, sent[i]!.request_id), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'superseded' });
      expectError(await answer(u, sent[i]!.request_id, 'approve', sent[i]!.number), 409, 'PUSH_APPROVAL_ANSWERED');
    }
    const queued = await t.s.database.db.selectFrom('push_messages').select('data').where('user_id', '=', u.user.id).orderBy('id').execute();
    expect(queued.map((m) => (m.data as { request_id?: string }).request_id)).toEqual(sent.map((x) => x.request_id)); // one push each, none again
    const denied = await t.s.database.db.selectFrom('realtime_events').select('data').where('user_id', '=', u.user.id).where('type', '=', 'second_factor.denied').orderBy('id').execute();
    expect(denied.map((e) => e.data)).toEqual([0, 1].map((i) => ({ method: 'push_approval', request_id: sent[i]!.request_id, reason: 'superseded' })));
    // The latest is the one the phone can approve.
    expect((await answer(u, sent[2]!.request_id, 'approve', sent[2]!.number)).statusCode).toBe(200);
    expect((await complete(tokens[2]!, sent[2]!.request_id)).statusCode).toBe(200);
  });

  it('threat: a wrong number ends that 2FA token\'s push approval: asking again is 403 PUSH_APPROVAL_DENIED (wrong_number), nothing sent', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    await answer(u, sent.request_id, 'approve', wrongOf(sent.number));
    const again = expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: token }), 403, 'PUSH_APPROVAL_DENIED');
    expect(again.details).toMatchObject({ reason: 'wrong_number' });
    expect(await count('push_approval_requests', u.user.id)).toBe(1);
  });

  it('threat: while the second factor is locked the phone\'s answer is refused (429 MFA_LOCKED, even the right number), and an approval does not clear the failures until the sign-in completes', async () => {
    const u = await enrolled();
    const first = await ask(await passwordStep(u));
    await answer(u, first.request_id, 'approve', wrongOf(first.number));
    expect(await failures(u.user.id)).toBe(1);
    const token = await passwordStep(u);
    const sent = await ask(token);
    // Approved on the phone: the count stays until the page completes the sign-in.
    expect((await answer(u, sent.request_id, 'approve', sent.number)).json()).toMatchObject({ state: 'approved' });
    expect(await failures(u.user.id)).toBe(1);
    expect((await complete(token, sent.request_id)).statusCode).toBe(200);
    expect(await failures(u.user.id)).toBeUndefined();
    // Locked: a pending request cannot be approved.
    const locked = await passwordStep(u);
    const pending = await ask(locked);
    await t.s.database.db.insertInto('mfa_attempts').values({ user_id: u.user.id, factor: 'second_factor', failed_count: 5, window_started_at: new Date(t.clock.now()), locked_until: new Date(t.clock.now() + 15 * 60_000) }).execute();
    expectError(await answer(u, pending.request_id, 'approve', pending.number), 429, 'MFA_LOCKED');
    expect(await count('push_approval_requests', u.user.id, { state: 'pending' })).toBe(1);
    expect(await failures(u.user.id)).toBe(5);
  });

  it('threat: a signed plain denial cannot be turned into a fraud report, nor a fraud report into a plain denial (the decision is signed)', async () => {
    const u = await enrolled();
    const sent = await ask(await passwordStep(u));
    expectError(await answer(u, sent.request_id, 'deny', undefined, { report_fraud: true }, u.phone.key, 'deny'), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    expectError(await answer(u, sent.request_id, 'deny', undefined, {}, u.phone.key, 'deny_fraud'), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    expect(await count('push_approval_requests', u.user.id, { state: 'pending' })).toBe(1);
  });

  it('threat: an approval cannot outlive the factor: an MFA reset removes the key and denies an approved request whose 2FA token was not spent (403 factor_removed)', async () => {
    const u = await enrolled();
    const token = await passwordStep(u);
    const sent = await ask(token);
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    await t.s.database.db.transaction().execute((trx) => t.s.factors.removeAll(trx, u.user.id, new Date(t.clock.now())));
    expect(await t.s.database.db.selectFrom('push_approval_keys').select('id').where('user_id', '=', u.user.id).execute()).toEqual([]);
    expect(expectError(await complete(token, sent.request_id), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'factor_removed' });
  });

  it('threat: a stolen session and the password cannot replace the only factor (403 STEP_UP_REQUIRED); a setup never confirmed leaves the working key approving', async () => {
    const u = await enrolled();
    const device = (await t.s.database.db.selectFrom('push_approval_keys as k').innerJoin('device_tokens as d', 'd.id', 'k.device_token_id').select('d.uuid').where('k.user_id', '=', u.user.id).executeTakeFirstOrThrow()).uuid;
    const thief = newPhone();
    const body = { device_id: device, public_key: thief.publicKey, current_password: STRONG_PASSWORD };
    expectError(await post('/api/v1/2fa/push-approval/setup', body, bearer(u.access)), 403, 'STEP_UP_REQUIRED');
    expectError(await post('/api/v1/2fa/push-approval/confirm', { signature: signWith(thief.key, 'x') }, bearer(u.access)), 403, 'STEP_UP_REQUIRED');
    // With a step-up, a new phone's setup waits: the working key still approves until it is confirmed.
    await steppedUp(u.access);
    const next = newPhone();
    const setup = await post('/api/v1/2fa/push-approval/setup', { device_id: device, public_key: next.publicKey }, bearer(u.access));
    expect(setup.statusCode, setup.body).toBe(200);
    expect(await t.s.factors.active(u.user.id)).toEqual(['push_approval']);
    const token = await passwordStep(u);
    const sent = await ask(token);
    expectError(await answer(u, sent.request_id, 'approve', sent.number, {}, next.key), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    // Confirmed: the new key replaces the old one.
    const { challenge } = setup.json<{ challenge: string }>();
    expect((await post('/api/v1/2fa/push-approval/confirm', { signature: signWith(next.key, enrolMessage(u.user.uuid, challenge)) }, bearer(u.access))).statusCode).toBe(200);
    const later = await ask(await passwordStep(u));
    expectError(await answer(u, later.request_id, 'approve', later.number), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    expect((await answer(u, later.request_id, 'approve', later.number, {}, next.key)).statusCode).toBe(200);
  });

  it('threat: a key bound to a device that is not the user\'s, or deleted with its device, is no factor: not offered, and a request answers 503', async () => {
    const u = await enrolled();
    const other = await enrolled();
    const earlier = await passwordStep(u);
    const theirs = (await t.s.database.db.selectFrom('push_approval_keys').select('device_token_id').where('user_id', '=', other.user.id).executeTakeFirstOrThrow()).device_token_id;
    await t.s.database.db.updateTable('push_approval_keys').set({ device_token_id: theirs }).where('user_id', '=', u.user.id).execute();
    expect(JSON.stringify((await login(t.app, u.username)).json())).not.toContain('push_approval');
    expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: earlier }), 503, 'PUSH_APPROVAL_UNAVAILABLE');
    // The other user's device deleted: their key goes with it (ON DELETE CASCADE), and their push approval is no longer offered.
    const otherEarlier = await passwordStep(other);
    await t.s.database.db.deleteFrom('device_tokens').where('id', '=', theirs).execute();
    expect(JSON.stringify((await login(t.app, other.username)).json())).not.toContain('push_approval');
    expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: otherEarlier }), 503, 'PUSH_APPROVAL_UNAVAILABLE');
    expect(await count('push_approval_requests', u.user.id)).toBe(0);
    expect(await count('push_approval_requests', other.user.id)).toBe(0);
  });

  it('threat: a fraud report stops every sign-in, not one: pending requests are denied and push approval pauses for PUSH_APPROVAL_FRAUD_PAUSE_HOURS (24)', async () => {
    const u = await enrolled();
    const sent = await ask(await passwordStep(u));
    expect((await answer(u, sent.request_id, 'deny', undefined, { report_fraud: true })).json()).toMatchObject({ deny_reason: 'fraud_reported' });
    const paused = await t.s.database.db.selectFrom('push_approval_keys').select('paused_until').where('user_id', '=', u.user.id).executeTakeFirstOrThrow();
    expect(new Date(paused.paused_until!).getTime()).toBe(t.clock.now() + 24 * 3_600_000);
    const next = await passwordStep(u);
    expect(expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: next }), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'fraud_reported' });
    expect(await count('push_approval_requests', u.user.id)).toBe(1);
    t.clock.advance(24 * 3_600_000);
    await ask(await passwordStep(u));
  });

  it('threat: a fraud report denies the account\'s other pending request too (one left over from before the one-per-account rule)', async () => {
    const u = await enrolled();
    const a = await ask(await passwordStep(u));
    const tokenB = await passwordStep(u);
    const b = await ask(tokenB);
    // Put a back to pending, as a request racing the rule could leave it.
    await t.s.database.db.updateTable('push_approval_requests').set({ state: 'pending', deny_reason: null, answered_at: null }).where('id', '=', a.request_id).execute();
    await answer(u, a.request_id, 'deny', undefined, { report_fraud: true });
    expect(expectError(await complete(tokenB, b.request_id), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'fraud_reported' });
    expectError(await answer(u, b.request_id, 'approve', b.number), 409, 'PUSH_APPROVAL_ANSWERED');
  });
});
