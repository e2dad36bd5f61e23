/**
 * Push approval under concurrency (both databases; PostgreSQL is where transactions interleave,
 * PGlite runs one at a time): the locks the request, the device token's removal, the enrolment's
 * confirmation and the completion take, and in which order. The threats: a burst of requests
 * racing the phone's device token being deleted deadlocks (a 500) instead of answering; a
 * confirmation landing between the removal's step-up check and the removal strips the new phone
 * without a step-up; a sign-in completes with an approval whose factor was removed while it ran.
 * A held transaction stands for the other side; on PostgreSQL the test waits until the request
 * under test is blocked on it (pg_locks), a signal, not a sleep.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removePushApprovalFactor } from '../../src/push-approval/store.js';
import type { Db } from '../../src/platform/db/database.js';
import { dbKind, type TestApp } from '../harness/app.js';
import type { FakeFcm } from '../harness/fcm.js';
import { bearer, expectError } from '../harness/fixtures.js';
import { approvalKit, newPhone, startApprovalApp, type Enrolled } from '../harness/push-approval.js';

let fcm: FakeFcm;
let t: TestApp;
const { post, register, enrolled, passwordStep, ask, answer, complete, count, steppedUp } = approvalKit(() => t);

beforeAll(async () => ({ t, fcm } = await startApprovalApp({ env: { PUSH_APPROVAL_ATTESTATION: 'optional', PUSH_APPROVAL_MAX_PER_HOUR: '100' } })));
afterAll(async () => {
  await t?.close();
  await fcm?.close();
});

const db = (): Db => t.s.database.db;

/**
 * Runs `hold` in a transaction kept open until `blocked` (the request under test) waits on one of
 * its locks (PostgreSQL), or has answered without waiting; then commits. On PGlite the request
 * simply runs after the commit (one connection).
 */
async function whileHeld<T>(hold: (trx: Db) => Promise<void>, blocked: () => Promise<T>): Promise<T> {
  let holding!: () => void;
  let release!: () => void;
  const held = new Promise<void>((r) => { holding = r; });
  const released = new Promise<void>((r) => { release = r; });
  const trx = db().transaction().execute(async (x) => {
    await hold(x);
    holding();
    await released;
  });
  await held;
  let done = false;
  const result = blocked().finally(() => { done = true; });
  if (dbKind() === 'postgres') {
    const waiting = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM pg_locks WHERE NOT granted`.execute(db())).rows[0]!.n);
    while (!done && (await waiting()) === 0) await new Promise((r) => setImmediate(r));
  }
  release();
  await trx;
  return result;
}

const del = (access: string, id: string) => t.app.inject({ method: 'DELETE', url: `/api/v1/notifications/devices/${id}`, headers: bearer(access) });

describe('lock order', () => {
  it('threat: a burst of requests racing the deletion of the phone\'s device token never deadlocks (no 500): each request is sent or 503, the deletion succeeds', async () => {
    for (let round = 0; round < 6; round++) {
      const u = await enrolled(`races.burst${round}`);
      await steppedUp(u.access);
      const tokens = await Promise.all(Array.from({ length: 5 }, () => passwordStep(u)));
      await ask(tokens[0]!); // a pending request the burst supersedes
      const [deleted, ...asked] = await Promise.all([
        del(u.access, u.deviceId),
        ...tokens.slice(1).map((token) => post('/api/v1/auth/push-approval/request', { two_factor_token: token })),
      ]);
      expect(deleted!.statusCode, deleted!.body).toBe(200);
      for (const r of asked) {
        expect([200, 503], r.body).toContain(r.statusCode);
        if (r.statusCode === 503) expectError(r, 503, 'PUSH_APPROVAL_UNAVAILABLE');
      }
      expect(await t.s.factors.active(u.user.id)).toEqual([]);
      expect(await count('push_approval_requests', u.user.id, { state: 'pending' })).toBe(0);
    }
  });
});

describe('the step-up check of a removal sees the enrolment it races', () => {
  it('threat: a confirmation that makes the new phone\'s token the enrolled one while its deletion is checked: the deletion needs a step-up (403 STEP_UP_REQUIRED), the factor stays', async () => {
    const u = await enrolled('races.confirm');
    const next = newPhone();
    const nextDevice = await register(u.access, next);
    await steppedUp(u.access);
    const setup = await post('/api/v1/2fa/push-approval/setup', { device_id: nextDevice, public_key: next.publicKey }, bearer(u.access));
    expect(setup.statusCode, setup.body).toBe(200);
    t.clock.advance(11 * 60_000); // the step-up is stale: only a token that is not the phone's may go without one
    const key = await db().selectFrom('push_approval_keys').select(['id', 'pending_device_token_id']).where('user_id', '=', u.user.id).executeTakeFirstOrThrow();
    // The confirmation's swap, committed while the deletion is under way (it locks the user's row first, as the confirmation does).
    const res = await whileHeld(async (trx) => {
      await trx.selectFrom('users').select('id').where('id', '=', u.user.id).forNoKeyUpdate().execute();
      await trx.updateTable('push_approval_keys').set({ device_token_id: key.pending_device_token_id!, public_key: next.publicKey, pending_device_token_id: null, pending_public_key: null, enrol_challenge: null, enrol_expires_at: null })
        .where('id', '=', key.id).execute();
    }, () => del(u.access, nextDevice));
    expectError(res, 403, 'STEP_UP_REQUIRED');
    expect(await t.s.factors.active(u.user.id)).toEqual(['push_approval']);
    expect(await db().selectFrom('push_approval_keys').select('device_token_id').where('user_id', '=', u.user.id).executeTakeFirstOrThrow()).toEqual({ device_token_id: key.pending_device_token_id });
  });
});

describe('an approval is spent before the sign-in finishes', () => {
  it('threat: the factor removed while the completion runs: the approval is not spent, the sign-in answers 403 PUSH_APPROVAL_DENIED (factor_removed), no session', async () => {
    const u: Enrolled = await enrolled('races.removed');
    const token = await passwordStep(u);
    const sent = await ask(token);
    expect((await answer(u, sent.request_id, 'approve', sent.number)).statusCode).toBe(200);
    const sessions = await count('sessions', u.user.id);
    const res = await whileHeld(async (trx) => {
      await removePushApprovalFactor(trx, u.user.id, new Date(t.clock.now()));
    }, () => complete(token, sent.request_id));
    expect(expectError(res, 403, 'PUSH_APPROVAL_DENIED').details).toMatchObject({ reason: 'factor_removed' });
    expect(await count('sessions', u.user.id)).toBe(sessions);
  });
});
