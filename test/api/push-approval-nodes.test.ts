/**
 * The long poll of push approval across nodes, on PostgreSQL: two nodes, two connection pools on
 * one database, each hearing the other through LISTEN/NOTIFY. A page held on node A is answered
 * as soon as the phone's answer lands on node B, the expiry job of either node expires it, or B
 * removes the factor with the phone's device token; two nodes running the expiry at once announce
 * each expiry once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTwoNodes, type TwoNodes } from '../harness/app.js';
import { startFakeFcm, type FakeFcm } from '../harness/fcm.js';
import { bearer, expectError, withoutRiskResponses } from '../harness/fixtures.js';
import { approvalKit } from '../harness/push-approval.js';

describe('push approval across two nodes', () => {
  let fcm: FakeFcm;
  let nodes: TwoNodes;
  const onA = approvalKit(() => nodes.a);
  const onB = approvalKit(() => nodes.b);

  beforeAll(async () => {
    fcm = await startFakeFcm();
    nodes = await createTwoNodes({ env: { ...fcm.env, TWO_FACTOR_TOKEN_EXPIRE_MINUTES: '15' } });
    await withoutRiskResponses(nodes.a.s);
  });
  afterAll(async () => {
    await nodes?.close();
    await fcm?.close();
  });

  const heldOnA = (requestId: string) => nodes.a.s.pushApproval.waiters.until(() => nodes.a.s.pushApproval.waiters.holding(requestId) === 1);

  it('done-when: a completion held on node A answers with the tokens when the phone\'s approval lands on node B', async () => {
    const u = await onA.enrolled('nodes.approve');
    const token = await onA.passwordStep(u);
    const sent = await onA.ask(token);
    const page = onA.complete(token, sent.request_id, { wait_seconds: 25 });
    await heldOnA(sent.request_id);
    expect((await onB.answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    const res = await page;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user_profile: { mfa_completed: true } });
    expect(nodes.b.s.pushApproval.waiters.size).toBe(0); // B held nothing: it only announced
  });

  it('node B\'s expiry job wakes the page held on A (410); both nodes expiring at once announce it once', async () => {
    const u = await onA.enrolled('nodes.expiry');
    const token = await onA.passwordStep(u);
    const sent = await onA.ask(token);
    const page = onA.complete(token, sent.request_id, { wait_seconds: 25 });
    await heldOnA(sent.request_id);
    nodes.a.clock.advance(300_000); // one clock for both nodes
    const now = new Date(nodes.a.clock.now());
    // The job's run without its advisory lock: a burst of runs on both nodes at once.
    const runs = await Promise.all([nodes.b.s.pushApproval.expire(now), nodes.a.s.pushApproval.expire(now), nodes.b.s.pushApproval.expire(now), nodes.a.s.pushApproval.expire(now)]);
    expectError(await page, 410, 'PUSH_APPROVAL_EXPIRED');
    expect(runs.reduce((a, b) => a + b, 0)).toBe(1); // the only pending request in this database
    const events = await nodes.a.s.database.db.selectFrom('realtime_events').select('data').where('user_id', '=', u.user.id).where('type', '=', 'second_factor.expired').execute();
    expect(events.map((e) => e.data)).toEqual([{ method: 'push_approval', request_id: sent.request_id, purpose: 'sign_in' }]);
  });

  it('the phone\'s device token deleted on node B (after a step-up) wakes the page held on A: 403 factor_removed', async () => {
    const u = await onA.enrolled('nodes.removed');
    const up = await onB.askStepUp(u.access);
    await onB.answer(u, up.request_id, 'approve', up.number);
    expect((await onB.completeStepUp(u.access, up.request_id)).statusCode).toBe(200);
    const token = await onA.passwordStep(u);
    const sent = await onA.ask(token);
    const page = onA.complete(token, sent.request_id, { wait_seconds: 25 });
    await heldOnA(sent.request_id);
    const deleted = await nodes.b.app.inject({ method: 'DELETE', url: `/api/v1/notifications/devices/${u.deviceId}`, headers: bearer(u.access) });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(expectError(await page, 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'factor_removed' });
  });
});
