/**
 * "The web page continues at once" (both databases, a frozen clock, the local FCM fake): a
 * completion sent with `wait_seconds` is held until the phone answers, the request expires or the
 * client goes away, woken by the signal the answer raises (never a sleep: the tests await the
 * held page, then the phone's answer); the hold is bounded per node. The expiry job marks the
 * requests past their 5 minutes `expired` once and publishes `second_factor.expired`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness/app.js';
import type { FakeFcm } from '../harness/fcm.js';
import { bearer, expectError } from '../harness/fixtures.js';
import { EXPIRE_JOB as EXPIRY_JOB } from '../../src/push-approval/module.js';
import { approvalKit, startApprovalApp } from '../harness/push-approval.js';

let fcm: FakeFcm;
let t: TestApp;
const { post, enrolled, passwordStep, ask, askStepUp, answer, complete, completeStepUp, count } = approvalKit(() => t);

beforeAll(async () => ({ t, fcm } = await startApprovalApp()));
afterAll(async () => {
  await t?.close();
  await fcm?.close();
});

const waiters = () => t.s.pushApproval.waiters;
/** Resolves once `n` pages are held on the request (a signal, not a sleep). */
const held = (requestId: string, n = 1) => waiters().until(() => waiters().holding(requestId) === n);

describe('the long poll of complete', () => {
  it('done-when: a held completion answers with the tokens as soon as the phone approves', async () => {
    const u = await enrolled('wait.signin');
    const token = await passwordStep(u);
    const sent = await ask(token);
    const page = complete(token, sent.request_id, { wait_seconds: 25 });
    await held(sent.request_id);
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    const res = await page;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ token_type: 'bearer', user_profile: { mfa_completed: true } });
    expect(waiters().size).toBe(0);
  });

  it('a held step-up completion answers as soon as the phone approves', async () => {
    const u = await enrolled('wait.stepup');
    const sent = await askStepUp(u.access);
    const page = completeStepUp(u.access, sent.request_id, { wait_seconds: 25 });
    await held(sent.request_id);
    await answer(u, sent.request_id, 'approve', sent.number);
    const res = await page;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ verified: true, method: 'push_approval' });
  });

  it('a held completion answers 403 PUSH_APPROVAL_DENIED as soon as the phone denies, or a newer sign-in supersedes it', async () => {
    const u = await enrolled('wait.denied');
    const token = await passwordStep(u);
    const sent = await ask(token);
    const page = complete(token, sent.request_id, { wait_seconds: 25 });
    await held(sent.request_id);
    await answer(u, sent.request_id, 'deny');
    expect(expectError(await page, 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'denied' });

    const again = await ask(token);
    const second = complete(token, again.request_id, { wait_seconds: 25 });
    await held(again.request_id);
    await ask(await passwordStep(u)); // another sign-in: supersedes it
    expect(expectError(await second, 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'superseded' });
  });

  it('a completion already settled, or sent without wait_seconds, answers at once; wait_seconds is 0 to 25', async () => {
    const u = await enrolled('wait.none');
    const token = await passwordStep(u);
    const sent = await ask(token);
    const pending = expectError(await complete(token, sent.request_id, { wait_seconds: 0 }), 409, 'PUSH_APPROVAL_PENDING');
    expect(pending.details).toMatchObject({ retry_after_seconds: 2 });
    expectError(await complete(token, sent.request_id, { wait_seconds: 26 }), 422, 'VALIDATION_ERROR');
    expectError(await complete(token, sent.request_id, { wait_seconds: -1 }), 422, 'VALIDATION_ERROR');
    expectError(await complete(token, sent.request_id, { wait_seconds: 2.5 }), 422, 'VALIDATION_ERROR');
    await answer(u, sent.request_id, 'approve', sent.number);
    expect((await complete(token, sent.request_id, { wait_seconds: 25 })).statusCode).toBe(200);
    expect(waiters().size).toBe(0);
  });

  it('threat: held pages are bounded per node: past the bound a completion answers 409 PUSH_APPROVAL_PENDING at once', async () => {
    const u = await enrolled('wait.bound');
    const token = await passwordStep(u);
    const sent = await ask(token);
    const max = waiters().max;
    waiters().max = 0;
    try {
      const res = await complete(token, sent.request_id, { wait_seconds: 25 });
      expectError(res, 409, 'PUSH_APPROVAL_PENDING');
      expect(res.headers['retry-after']).toBe('2');
    } finally {
      waiters().max = max;
    }
    // Two per request: a third is answered at once.
    const pages = [complete(token, sent.request_id, { wait_seconds: 25 }), complete(token, sent.request_id, { wait_seconds: 25 })];
    await held(sent.request_id, 2);
    expectError(await complete(token, sent.request_id, { wait_seconds: 25 }), 409, 'PUSH_APPROVAL_PENDING');
    await answer(u, sent.request_id, 'deny');
    for (const p of pages) expectError(await p, 403, 'PUSH_APPROVAL_DENIED');
  });

  it('a client that goes away releases its place', async () => {
    const u = await enrolled('wait.gone');
    const token = await passwordStep(u);
    const sent = await ask(token);
    if (!t.app.server.listening) await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const body = JSON.stringify({ two_factor_token: token, request_id: sent.request_id, wait_seconds: 25 });
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/auth/push-approval/complete', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
    req.on('error', () => undefined);
    req.end(body);
    await held(sent.request_id);
    req.destroy();
    await held(sent.request_id, 0);
    expect(waiters().size).toBe(0);
  });
});

describe('the expiry job', () => {
  it('marks a request past its 5 minutes expired once, publishes second_factor.expired, and wakes the held page (410)', async () => {
    const u = await enrolled('wait.expiry');
    const token = await passwordStep(u);
    const sent = await ask(token);
    const page = complete(token, sent.request_id, { wait_seconds: 25 });
    await held(sent.request_id);
    t.clock.advance(299_000);
    await t.scheduler.runNow(EXPIRY_JOB);
    expect(waiters().holding(sent.request_id)).toBe(1); // not yet
    t.clock.advance(1_000);
    await t.scheduler.runNow(EXPIRY_JOB);
    expectError(await page, 410, 'PUSH_APPROVAL_EXPIRED');
    expect(await count('push_approval_requests', u.user.id, { state: 'expired' })).toBe(1);
    await t.scheduler.runNow(EXPIRY_JOB); // nothing more to announce
    const expired = await t.s.database.db.selectFrom('realtime_events').select('data').where('user_id', '=', u.user.id).where('type', '=', 'second_factor.expired').execute();
    expect(expired.map((e) => e.data)).toEqual([{ method: 'push_approval', request_id: sent.request_id, purpose: 'sign_in' }]);
    // The phone and the page are told it expired; asking again sends a new request.
    expectError(await answer(u, sent.request_id, 'approve', sent.number), 410, 'PUSH_APPROVAL_EXPIRED');
    const view = await t.app.inject({ method: 'GET', url: `/api/v1/push-approval/requests/${sent.request_id}`, headers: bearer(u.access) });
    expect(view.json()).toMatchObject({ state: 'expired' });
    expect((await ask(token)).request_id).not.toBe(sent.request_id);
  });

  it('threat: two nodes expiring at once announce a request twice — a burst of four runs marks each of three requests once and writes one second_factor.expired each', async () => {
    const users = await Promise.all(['wait.burst.a', 'wait.burst.b', 'wait.burst.c'].map((name) => enrolled(name)));
    const sent = await Promise.all(users.map(async (u) => ask(await passwordStep(u))));
    t.clock.advance(300_000);
    const now = new Date(t.clock.now());
    // Earlier tests of the suite may have left requests of their own pending: they expire too.
    const due = await t.s.database.db.selectFrom('push_approval_requests').select('id').where('state', '=', 'pending').where('expires_at', '<=', now).execute();
    expect(due.map((r) => r.id)).toEqual(expect.arrayContaining(sent.map((x) => x.request_id)));
    const marked = await Promise.all(Array.from({ length: 4 }, () => t.s.pushApproval.expire(now)));
    expect(marked.reduce((a, b) => a + b, 0)).toBe(due.length);
    const events = await t.s.database.db.selectFrom('realtime_events').select('data').where('type', '=', 'second_factor.expired').execute();
    const announced = events.map((e) => (e.data as { request_id: string }).request_id).filter((id) => due.some((r) => r.id === id));
    expect(announced.sort()).toEqual(due.map((r) => r.id).sort());
  });

  it('a step-up request expires the same way (purpose step_up)', async () => {
    const u = await enrolled('wait.expiry.stepup');
    const sent = await askStepUp(u.access);
    t.clock.advance(300_000);
    await t.scheduler.runNow(EXPIRY_JOB);
    expectError(await completeStepUp(u.access, sent.request_id), 410, 'PUSH_APPROVAL_EXPIRED');
    const expired = await t.s.database.db.selectFrom('realtime_events').select('data').where('user_id', '=', u.user.id).where('type', '=', 'second_factor.expired').execute();
    expect(expired.map((e) => e.data)).toEqual([{ method: 'push_approval', request_id: sent.request_id, purpose: 'step_up' }]);
    expect(await post('/api/v1/auth/push-approval/step-up/request', {}, bearer(u.access)).then((r) => r.statusCode)).toBe(200);
  });
});
