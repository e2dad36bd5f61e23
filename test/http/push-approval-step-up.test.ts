/**
 * Push approval, part 2, over HTTP (both databases, a frozen clock, the local FCM fake): a
 * signed-in session steps up by push approval (a push-only user moves to a new phone that way),
 * bound to the session that asked, with the sign-in's fatigue rules; and the enrolled phone's
 * device token going (deleted, turned off, registered by another account) takes the factor with
 * it, while the push provider reporting it dead and the device limit do not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness/app.js';
import type { FakeFcm } from '../harness/fcm.js';
import { auditTotal, bearer, expectError, login, seedUser, signIn } from '../harness/fixtures.js';
import { approvalKit, newPhone, startApprovalApp, wrongOf, type Enrolled } from '../harness/push-approval.js';

let fcm: FakeFcm;
let t: TestApp;
const { post, register, enrolPhone, enrolled, passwordStep, ask, askStepUp, answer, complete, completeStepUp, count, failures } = approvalKit(() => t);

beforeAll(async () => ({ t, fcm } = await startApprovalApp()));
afterAll(async () => {
  await t?.close();
  await fcm?.close();
});

/** Another session of `u`, opened by a sign-in the phone approves: its access token. */
async function anotherSession(u: Enrolled): Promise<string> {
  const token = await passwordStep(u);
  const sent = await ask(token);
  expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
  const done = await complete(token, sent.request_id);
  expect(done.statusCode, done.body).toBe(200);
  return done.json<{ access_token: string }>().access_token;
}

/** A step-up by push approval in the session of `access`, approved by `u`'s phone. */
async function stepUp(u: Enrolled, access: string): Promise<void> {
  const sent = await askStepUp(access);
  expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
  const res = await completeStepUp(access, sent.request_id);
  expect(res.statusCode, res.body).toBe(200);
}

const device = (access: string, id: string) => t.app.inject({ method: 'GET', url: `/api/v1/notifications/devices/${id}`, headers: bearer(access) });

describe('step-up by push approval', () => {
  it('a push-only user moves to a new phone: the new phone signs in, steps up with the old one, and enrols', async () => {
    const u = await enrolled('approval.move');
    const newAccess = await anotherSession(u);
    const next = newPhone();
    const nextDevice = await register(newAccess, next);
    // Without a step-up, the only factor cannot be replaced; the refusal names the push-approval step-up.
    const refused = expectError(await post('/api/v1/2fa/push-approval/setup', { device_id: nextDevice, public_key: next.publicKey }, bearer(newAccess)), 403, 'STEP_UP_REQUIRED');
    expect(refused.details).toMatchObject({ enrolled: ['push_approval'], step_up: [{ method: 'push_approval', routes: ['POST /api/v1/auth/push-approval/step-up/request', 'POST /api/v1/auth/push-approval/step-up/complete'] }] });
    expect(String(expectError(await post('/api/v1/2fa/push-approval/setup', { device_id: nextDevice, public_key: next.publicKey }, bearer(newAccess)), 403, 'STEP_UP_REQUIRED').message)).toContain('push-approval/step-up/request');

    const sent = await askStepUp(newAccess);
    expect(sent.expires_in).toBe(300);
    await t.s.pushOutbox.drain();
    const pushed = fcm.sent.filter((m) => m.token === u.phone.token).at(-1)!;
    expect(pushed.data).toEqual({ type: 'push_approval', request_id: sent.request_id });
    expect(`${pushed.notification.title} ${pushed.notification.body}`).not.toMatch(/\d/);
    const view = await t.app.inject({ method: 'GET', url: `/api/v1/push-approval/requests/${sent.request_id}`, headers: bearer(u.access) });
    expect(view.json()).toMatchObject({ purpose: 'step_up', state: 'pending', device: { browser: 'Firefox' } });
    expectError(await completeStepUp(newAccess, sent.request_id), 409, 'PUSH_APPROVAL_PENDING');
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    const up = await completeStepUp(newAccess, sent.request_id);
    expect(up.statusCode, up.body).toBe(200);
    expect(up.json()).toMatchObject({ verified: true, method: 'push_approval' });
    expect(await auditTotal(t.s, u.user.uuid, 'MFA_STEP_UP')).toBe(1);

    await enrolPhone(newAccess, u.user.uuid, next, nextDevice);
    // The new phone approves; the old one no longer can. The old phone's token is no longer the
    // approving one: deleting it needs no step-up and leaves the factor.
    const moved: Enrolled = { ...u, access: newAccess, phone: next, deviceId: nextDevice };
    const later = await ask(await passwordStep(u));
    expectError(await answer(moved, later.request_id, 'approve', later.number, {}, u.phone.key), 401, 'PUSH_APPROVAL_SIGNATURE_INVALID');
    expect((await answer(moved, later.request_id, 'approve', later.number)).statusCode).toBe(200);
    t.clock.advance(11 * 60_000);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/notifications/devices/${u.deviceId}`, headers: bearer(newAccess) })).statusCode).toBe(200);
    expect(await t.s.factors.active(u.user.id)).toEqual(['push_approval']);
  });

  it('threat: a step-up request of session A cannot be completed by session B of the same user (404 PUSH_APPROVAL_NOT_FOUND)', async () => {
    const u = await enrolled('approval.bound');
    const sessionB = await anotherSession(u);
    const sent = await askStepUp(u.access);
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    expectError(await completeStepUp(sessionB, sent.request_id), 404, 'PUSH_APPROVAL_NOT_FOUND');
    expectError(await completeStepUp(sessionB, sent.request_id, { wait_seconds: 5 }), 404, 'PUSH_APPROVAL_NOT_FOUND');
    // Nor can a sign-in's 2FA token complete it.
    expectError(await complete(await passwordStep(u), sent.request_id), 404, 'PUSH_APPROVAL_NOT_FOUND');
    expect(await auditTotal(t.s, u.user.uuid, 'MFA_STEP_UP')).toBe(0);
    expect((await completeStepUp(u.access, sent.request_id)).statusCode).toBe(200);
  });

  it('threat: an approved step-up is used once: a parallel burst of 6 completions records one step-up (409 PUSH_APPROVAL_USED)', async () => {
    const u = await enrolled('approval.once');
    const sent = await askStepUp(u.access);
    await answer(u, sent.request_id, 'approve', sent.number);
    const all = await Promise.all(Array.from({ length: 6 }, () => completeStepUp(u.access, sent.request_id)));
    expect(all.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    for (const r of all.filter((x) => x.statusCode === 409)) expectError(r, 409, 'PUSH_APPROVAL_USED');
    expect(await auditTotal(t.s, u.user.uuid, 'MFA_STEP_UP')).toBe(1);
  });

  it('threat: the fatigue rules hold: a step-up supersedes a pending sign-in request, a wrong number counts a failure and ends this session\'s push step-up', async () => {
    const u = await enrolled('approval.fatigue');
    const token = await passwordStep(u);
    const signInRequest = await ask(token);
    const sent = await askStepUp(u.access);
    expect(await askStepUp(u.access)).toMatchObject({ request_id: sent.request_id, number: sent.number }); // asked again: the same one, nothing sent
    expect(expectError(await complete(token, signInRequest.request_id), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'superseded' });
    expect(await count('push_approval_requests', u.user.id, { state: 'pending' })).toBe(1);
    expect((await answer(u, sent.request_id, 'approve', wrongOf(sent.number))).json()).toMatchObject({ state: 'denied', deny_reason: 'wrong_number' });
    expect(await failures(u.user.id)).toBe(1);
    expect(expectError(await completeStepUp(u.access, sent.request_id), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'wrong_number' });
    expect(expectError(await post('/api/v1/auth/push-approval/step-up/request', {}, bearer(u.access)), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'wrong_number' });
    expect(await count('push_approval_requests', u.user.id)).toBe(2);
  });

  it('threat: the hourly limit counts sign-ins and step-ups together (429 PUSH_APPROVAL_TOO_MANY); while the second factor is locked, 429 MFA_LOCKED', async () => {
    const u = await enrolled('approval.limit');
    for (let i = 0; i < 4; i++) await ask(await passwordStep(u));
    const sent = await askStepUp(u.access);
    await answer(u, sent.request_id, 'approve', sent.number);
    expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: await passwordStep(u) }), 429, 'PUSH_APPROVAL_TOO_MANY');
    expectError(await post('/api/v1/auth/push-approval/step-up/request', {}, bearer(u.access)), 429, 'PUSH_APPROVAL_TOO_MANY');
    await t.s.database.db.insertInto('mfa_attempts').values({ user_id: u.user.id, factor: 'second_factor', failed_count: 5, window_started_at: new Date(t.clock.now()), locked_until: new Date(t.clock.now() + 15 * 60_000) }).execute();
    expectError(await completeStepUp(u.access, sent.request_id), 429, 'MFA_LOCKED');
    expectError(await post('/api/v1/auth/push-approval/step-up/request', {}, bearer(u.access)), 429, 'MFA_LOCKED');
  });

  it('threat: a step-up the phone reports as fraud ends the session that asked: its next request answers 401 SESSION_INVALID, its refresh token is revoked, the phone\'s session lives on', async () => {
    const u = await enrolled('approval.fraud');
    const intruder = await anotherSession(u);
    const sent = await askStepUp(intruder);
    expect((await answer(u, sent.request_id, 'deny', undefined, { report_fraud: true })).json()).toMatchObject({ state: 'denied', deny_reason: 'fraud_reported' });
    expectError(await completeStepUp(intruder, sent.request_id), 401, 'SESSION_INVALID');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/notifications/devices', headers: bearer(intruder) }), 401, 'SESSION_INVALID');
    const { session_id } = JSON.parse(Buffer.from(intruder.split('.')[1]!, 'base64url').toString()) as { session_id: string };
    expect(await t.s.database.db.selectFrom('sessions').select(['is_active', 'end_reason']).where('session_id', '=', session_id).executeTakeFirstOrThrow()).toEqual({ is_active: false, end_reason: 'fraud_reported' });
    expect(await t.s.database.db.selectFrom('refresh_families').select('revoke_reason').where('session_id', '=', session_id).execute()).toEqual([{ revoke_reason: 'session_fraud_reported' }]);
    const failed = (await t.s.audit.query({ userId: u.user.uuid, eventType: 'MFA_FAILED', limit: 5, offset: 0 })).entries;
    expect(failed.map((e) => e.details)).toEqual([expect.objectContaining({ reason: 'fraud_reported', purpose: 'stepup', session_ended: true })]);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/push-approval/requests/${sent.request_id}`, headers: bearer(u.access) })).statusCode).toBe(200);
  });

  it('an account without the factor cannot ask (400 MFA_METHOD_UNAVAILABLE)', async () => {
    await seedUser(t.s, 'approval.none');
    const access = (await signIn(t.app, 'approval.none')).access_token;
    expectError(await post('/api/v1/auth/push-approval/step-up/request', {}, bearer(access)), 400, 'MFA_METHOD_UNAVAILABLE');
  });
});

describe('an approval does not keep', () => {
  it('threat: a step-up completed more than 2 minutes after the phone approved answers 410 PUSH_APPROVAL_EXPIRED (approval_stale) and opens no step-up window; within 2 minutes it does', async () => {
    const u = await enrolled('approval.stale');
    t.clock.advance(11 * 60_000); // past the enrolment's own step-up
    const sent = await askStepUp(u.access);
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    t.clock.advance(2 * 60_000 + 1_000); // the request's 5 minutes still run
    expect(expectError(await completeStepUp(u.access, sent.request_id), 410, 'PUSH_APPROVAL_EXPIRED').details).toMatchObject({ reason: 'approval_stale' });
    expect(await auditTotal(t.s, u.user.uuid, 'MFA_STEP_UP')).toBe(0);
    expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/notifications/devices/${u.deviceId}`, headers: bearer(u.access) }), 403, 'STEP_UP_REQUIRED');

    const again = await askStepUp(u.access);
    expect((await answer(u, again.request_id, 'approve', again.number)).statusCode).toBe(200);
    t.clock.advance(2 * 60_000 - 1_000);
    expect((await completeStepUp(u.access, again.request_id)).statusCode).toBe(200);
  });

  it('threat: a sign-in completed more than 2 minutes after the phone approved answers 410 PUSH_APPROVAL_EXPIRED (approval_stale), no session', async () => {
    const u = await enrolled('approval.stale.signin');
    const token = await passwordStep(u);
    const sent = await ask(token);
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    const sessions = await count('sessions', u.user.id);
    t.clock.advance(2 * 60_000 + 1_000);
    expect(expectError(await complete(token, sent.request_id), 410, 'PUSH_APPROVAL_EXPIRED').details).toMatchObject({ reason: 'approval_stale' });
    expect(await count('sessions', u.user.id)).toBe(sessions);
  });
});

describe('the enrolled phone\'s device token going takes the factor with it', () => {
  it('threat: a stolen session cannot strip the account of its phone: deleting or turning off its token needs a recent step-up (403 STEP_UP_REQUIRED)', async () => {
    const u = await enrolled('approval.strip');
    t.clock.advance(11 * 60_000); // past the enrolment's own step-up
    expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/notifications/devices/${u.deviceId}`, headers: bearer(u.access) }), 403, 'STEP_UP_REQUIRED');
    expectError(await t.app.inject({ method: 'DELETE', url: '/api/v1/notifications/devices', headers: bearer(u.access) }), 403, 'STEP_UP_REQUIRED');
    expectError(await t.app.inject({ method: 'PUT', url: `/api/v1/notifications/devices/${u.deviceId}/deactivate`, headers: bearer(u.access) }), 403, 'STEP_UP_REQUIRED');
    expect(await t.s.factors.active(u.user.id)).toEqual(['push_approval']);
    expect((await device(u.access, u.deviceId)).json()).toMatchObject({ is_active: true });
  });

  it('deleted by its owner after a step-up: the key and factor go (PUSH_APPROVAL_REMOVED), the pending request is denied (factor_removed)', async () => {
    const u = await enrolled('approval.deleted');
    t.clock.advance(11 * 60_000);
    await stepUp(u, u.access);
    const token = await passwordStep(u);
    const sent = await ask(token);
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/notifications/devices/${u.deviceId}`, headers: bearer(u.access) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await t.s.factors.active(u.user.id)).toEqual([]);
    expect(await t.s.database.db.selectFrom('push_approval_keys').select('id').where('user_id', '=', u.user.id).execute()).toEqual([]);
    const removed = (await t.s.audit.query({ userId: u.user.uuid, eventType: 'PUSH_APPROVAL_REMOVED', limit: 5, offset: 0 })).entries;
    expect(removed.map((e) => e.details)).toEqual([{ reason: 'device_deleted', denied_requests: 1 }]);
    expect(expectError(await complete(token, sent.request_id), 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'factor_removed' });
    const denied = await t.s.database.db.selectFrom('realtime_events').select('data').where('user_id', '=', u.user.id).where('type', '=', 'second_factor.denied').execute();
    expect(denied.map((e) => e.data)).toEqual([{ method: 'push_approval', request_id: sent.request_id, reason: 'factor_removed' }]);
    // No factor left: the password alone signs in again (the user's choice, proved by a step-up).
    expect((await login(t.app, u.username)).statusCode).toBe(200);
  });

  it('turned off by its owner after a step-up: the factor goes (device_deactivated)', async () => {
    const u = await enrolled('approval.off');
    await stepUp(u, u.access);
    const res = await t.app.inject({ method: 'PUT', url: `/api/v1/notifications/devices/${u.deviceId}/deactivate`, headers: bearer(u.access) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await t.s.factors.active(u.user.id)).toEqual([]);
    expect((await t.s.audit.query({ userId: u.user.uuid, eventType: 'PUSH_APPROVAL_REMOVED', limit: 5, offset: 0 })).entries.map((e) => e.details)).toEqual([{ reason: 'device_deactivated', denied_requests: 0 }]);
    // Turned on again, it is a device like any other: the factor does not come back by itself.
    expect((await t.app.inject({ method: 'PUT', url: `/api/v1/notifications/devices/${u.deviceId}/activate`, headers: bearer(u.access) })).statusCode).toBe(200);
    expect(await t.s.factors.active(u.user.id)).toEqual([]);
  });

  it('threat: another account registering the phone\'s push token cannot strip the owner\'s factor: it stays (the transfer on the owner\'s trail), the password alone still answers 401 2FA_REQUIRED, with no method and a device recovery named', async () => {
    const u = await enrolled('approval.sold');
    const earlier = await passwordStep(u);
    await seedUser(t.s, 'approval.buyer');
    const buyer = (await signIn(t.app, 'approval.buyer')).access_token;
    const reg = await post('/api/v1/notifications/devices/register', { push_token: u.phone.token, platform: 'mobile' }, bearer(buyer));
    expect(reg.statusCode, reg.body).toBe(200);
    expect(await t.s.factors.active(u.user.id)).toEqual(['push_approval']);
    expect(await auditTotal(t.s, u.user.uuid, 'PUSH_APPROVAL_REMOVED')).toBe(0);
    const moved = (await t.s.audit.query({ userId: u.user.uuid, eventType: 'DEVICE_TOKEN_TRANSFERRED', limit: 5, offset: 0 })).entries;
    expect(moved.map((e) => e.details)).toEqual([expect.objectContaining({ device_token_id: u.deviceId, to_username: 'approval.buyer' })]);
    // Never a password-only sign-in: a second factor is still asked for, none can be used, and the answer names the way out.
    const details = expectError(await login(t.app, u.username), 401, '2FA_REQUIRED').details as Record<string, unknown>;
    expect(details).toMatchObject({ methods: [], recover_path: '/api/v1/auth/reset/initiate', recover_lost: 'device' });
    expect(String(details.recover)).toContain('lost: "device"');
    // The phone is not another account's to push to: a sign-in that asks gets 503, and no request is made.
    expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: earlier }), 503, 'PUSH_APPROVAL_UNAVAILABLE');
    expect(await count('push_approval_requests', u.user.id)).toBe(0);
    // The owner's app registering its token again brings push approval back.
    expect((await post('/api/v1/notifications/devices/register', { push_token: u.phone.token, platform: 'mobile' }, bearer(u.access))).statusCode).toBe(200);
    const sent = await ask(await passwordStep(u));
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
  });

  it('reported dead by the push provider (UNREGISTERED): the token turns off but the factor stays, not offered until the phone is back', async () => {
    const u = await enrolled('approval.dead');
    await t.s.pushOutbox.drain(); // what earlier tests queued goes first
    fcm.fail(u.phone.token, 'UNREGISTERED');
    const token = await passwordStep(u);
    await ask(token);
    expect((await t.s.pushOutbox.drain()).failed).toBe(1);
    fcm.clear();
    expect((await device(u.access, u.deviceId)).json()).toMatchObject({ is_active: false });
    expect(await t.s.factors.active(u.user.id)).toEqual(['push_approval']);
    expect(await auditTotal(t.s, u.user.uuid, 'PUSH_APPROVAL_REMOVED')).toBe(0);
    expect(JSON.stringify(expectError(await login(t.app, u.username), 401, '2FA_REQUIRED').details)).not.toContain('push_approval');
    // The app registers its token again: the phone approves again.
    expect((await post('/api/v1/notifications/devices/register', { push_token: u.phone.token, platform: 'mobile' }, bearer(u.access))).statusCode).toBe(200);
    await passwordStep(u);
  });

  it('threat: the device limit never retires the phone that approves sign-ins', async () => {
    const u = await enrolled('approval.limit.devices');
    for (let i = 0; i < 12; i++) await register(u.access, newPhone());
    expect((await device(u.access, u.deviceId)).json()).toMatchObject({ is_active: true });
    expect(await t.s.factors.active(u.user.id)).toEqual(['push_approval']);
    expect(await auditTotal(t.s, u.user.uuid, 'PUSH_APPROVAL_REMOVED')).toBe(0);
  });
});
