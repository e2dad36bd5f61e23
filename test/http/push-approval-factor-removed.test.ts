/**
 * "A lost phone approves nothing, and the page waiting on it learns so at once" (both databases:
 * the page is woken through the bus, by NOTIFY on PostgreSQL and in process on PGlite): a sign-in
 * completion held by the long poll (`wait_seconds`) answers 403 PUSH_APPROVAL_DENIED
 * (`factor_removed`) as soon as an approved MFA reset, or a completed account recovery, removes the
 * push-approval factor, not when its wait ends. The tests await the held page (a signal), then the
 * change, then the bus notice that wakes it (`push-approval.settled`: nothing else announces these
 * requests, so without it the page would answer only when its wait ends), then the page's answer:
 * no sleep, no timing threshold.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MFA_RESET_PROOF_PURPOSE } from '../../src/mfa/challenge.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { startFakeFcm, type FakeFcm } from '../harness/fcm.js';
import { bearer, expectError, seedUser, signIn, withoutRiskResponses } from '../harness/fixtures.js';
import { approvalKit, type Enrolled } from '../harness/push-approval.js';

let fcm: FakeFcm;
let t: TestApp;
let root: string;
const { post, enrolled, passwordStep, ask, complete } = approvalKit(() => t);

beforeAll(async () => {
  fcm = await startFakeFcm();
  t = await createTestApp({ env: { ...fcm.env, TWO_FACTOR_TOKEN_EXPIRE_MINUTES: '15' } });
  await withoutRiskResponses(t.s);
  await seedUser(t.s, 'removed.root', { roles: ['admin'] });
  root = (await signIn(t.app, 'removed.root')).access_token;
});
afterAll(async () => {
  await t?.close();
  await fcm?.close();
});

const waiters = () => t.s.pushApproval.waiters;

/** Resolves when the bus announces `requestId` settled: what wakes a held page on every node (without it the page answers only when its wait ends). */
function announced(requestId: string): Promise<void> {
  return new Promise((resolve) => t.s.bus.subscribe((e) => {
    if (e.type === 'push-approval.settled' && e.requestIds.includes(requestId)) resolve();
  }));
}

/** A sign-in of `u` waiting for the phone: its completion is sent with `wait_seconds: 25` and held (awaited as a signal). */
async function heldSignIn(u: Enrolled): Promise<{ page: ReturnType<typeof complete>; requestId: string; woken: Promise<void> }> {
  const token = await passwordStep(u);
  const sent = await ask(token);
  const woken = announced(sent.request_id);
  const page = complete(token, sent.request_id, { wait_seconds: 25 });
  await waiters().until(() => waiters().holding(sent.request_id) === 1);
  return { page, requestId: sent.request_id, woken };
}

describe('a page waiting on a push approval whose factor goes', () => {
  it('removed-factor-wakes-waiter: an approved MFA reset answers the held completion 403 PUSH_APPROVAL_DENIED (factor_removed) at once', async () => {
    const u = await enrolled('removed.reset');
    const { page, requestId, woken } = await heldSignIn(u);

    const proof = (await t.s.tokens.issue('reset', { user_id: u.user.uuid, purpose: MFA_RESET_PROOF_PURPOSE })).token;
    const opened = await post('/api/v1/auth/reset/mfa', { reason: 'I lost the phone that approves my sign-ins.', proof_token: proof });
    expect(opened.statusCode, opened.body).toBe(201);
    const approved = await post('/api/v1/auth/reset/mfa/admin/approve', { request_id: opened.json<{ request_id: string }>().request_id }, bearer(root));
    expect(approved.statusCode, approved.body).toBe(200);

    await woken; // the held page is told, not left to its 25 seconds
    expect(expectError(await page, 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'factor_removed' });
    expect(waiters().holding(requestId)).toBe(0);
    expect(await t.s.factors.active(u.user.id)).toEqual([]);
  });

  it('removed-factor-wakes-waiter: a completed account recovery answers the held completion 403 PUSH_APPROVAL_DENIED (factor_removed) at once', async () => {
    const u = await enrolled('removed.recovery');
    const { page, requestId, woken } = await heldSignIn(u);

    // A verified `mfa` recovery whose cooling-off ends now (the proofs and the wait are the recovery suites' subject).
    const now = new Date(t.clock.now());
    await t.s.database.db.insertInto('recovery_workflows').values({
      handle_hash: randomUUID(), kind: 'mfa', state: 'waiting', user_id: u.user.id, decoy: false, account_hash: randomUUID(), holds_slot: false,
      login_key: `u:${u.user.id}`, subject_masked: 'r***', created_at: now, expires_at: now, verified_at: now, completed_at: null, ended_at: null,
      reference: null, initiated_by: null, waiting_until: now, cooling_off_hours: 24, alternatives: null,
    }).execute();
    expect(await t.s.recovery.completeDue()).toBe(1);

    await woken; // the held page is told, not left to its 25 seconds
    expect(expectError(await page, 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'factor_removed' });
    expect(waiters().holding(requestId)).toBe(0);
    await t.s.recovery.settled();
  });
});
