/**
 * The rate limits of push approval (both databases: the counters are rows every node shares; the
 * default limits set explicitly, since the harness lifts them; the clock frozen 10 s into a
 * minute). The page waiting for the phone polls in its own group (`push_approval_wait`), the
 * phone's answer in another (`push_approval_answer`), the request stays a second-factor call
 * (`second_factor`). The threats: a page polling every 2 s used up the account's second-factor
 * budget in 20 s and then the phone's answer was refused; someone with the password asking again
 * and again kept the owner from answering (or reporting fraud).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { TestApp } from '../harness/app.js';
import type { FakeFcm } from '../harness/fcm.js';
import { expectError } from '../harness/fixtures.js';
import { approvalKit, startApprovalApp } from '../harness/push-approval.js';

const MINUTE = 60_000;
let fcm: FakeFcm;
let t: TestApp;
const { post, enrolled, passwordStep, ask, answer, complete } = approvalKit(() => t);

beforeAll(async () => ({ t, fcm } = await startApprovalApp({
  clock: new ManualClock(Date.UTC(2026, 11, 6, 9, 0, 10)),
  env: {
    PUSH_APPROVAL_ATTESTATION: 'optional',
    RATE_LIMIT_SECOND_FACTOR_IP: '30/1m', RATE_LIMIT_SECOND_FACTOR_ACCOUNT: '10/1m',
    RATE_LIMIT_PUSH_APPROVAL_WAIT_IP: '600/1m', RATE_LIMIT_PUSH_APPROVAL_WAIT_ACCOUNT: '60/1m',
    RATE_LIMIT_PUSH_APPROVAL_ANSWER_IP: '600/1m', RATE_LIMIT_PUSH_APPROVAL_ANSWER_ACCOUNT: '20/1m',
  },
})));
afterAll(async () => {
  await t?.close();
  await fcm?.close();
});

/** Each test starts 10 s into a fresh minute: every window has 50 s left. */
function nextMinute(): void {
  t.clock.set((Math.floor(t.clock.now() / MINUTE) + 1) * MINUTE + 10_000);
}

describe('push approval\'s rate limits', () => {
  it('threat: a page polling every 2 s does not use up the phone\'s answer: 40 polls in a minute (past second_factor\'s 10) all answer 409 PUSH_APPROVAL_PENDING, then the phone approves and the page signs in', async () => {
    const u = await enrolled('limits.poll');
    nextMinute();
    const token = await passwordStep(u);
    const sent = await ask(token);
    for (let i = 0; i < 40; i++) expectError(await complete(token, sent.request_id), 409, 'PUSH_APPROVAL_PENDING');
    const ok = await answer(u, sent.request_id, 'approve', sent.number);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.headers['ratelimit-limit']).toBe('20'); // the answer's own bucket
    const done = await complete(token, sent.request_id);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.headers).toMatchObject({ 'ratelimit-limit': '60', 'ratelimit-remaining': '19' }); // 41 polls counted, one per call
  });

  it('the waiting page\'s own limit: past 60 polls a minute per account, 429 RATE_LIMITED with Retry-After; the phone still answers', async () => {
    const u = await enrolled('limits.flood');
    nextMinute();
    const token = await passwordStep(u);
    const sent = await ask(token);
    for (let i = 0; i < 60; i++) expectError(await complete(token, sent.request_id), 409, 'PUSH_APPROVAL_PENDING');
    const refused = await complete(token, sent.request_id);
    expectError(refused, 429, 'RATE_LIMITED');
    expect(refused.headers['retry-after']).toBe('50');
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    nextMinute();
    expect((await complete(token, sent.request_id)).statusCode).toBe(200);
  });

  it('threat: someone with the password asking again and again cannot keep the owner from answering: past second_factor\'s 10 a minute the asking is 429 RATE_LIMITED, the phone\'s fraud report is taken', async () => {
    const u = await enrolled('limits.asker');
    nextMinute();
    const token = await passwordStep(u);
    const sent = await ask(token);
    for (let i = 0; i < 9; i++) expect((await post('/api/v1/auth/push-approval/request', { two_factor_token: token })).statusCode).toBe(200); // the same request again
    expectError(await post('/api/v1/auth/push-approval/request', { two_factor_token: token }), 429, 'RATE_LIMITED');
    const reported = await answer(u, sent.request_id, 'deny', undefined, { report_fraud: true });
    expect(reported.statusCode, reported.body).toBe(200);
    expect(reported.json()).toMatchObject({ state: 'denied', deny_reason: 'fraud_reported' });
  });
});
