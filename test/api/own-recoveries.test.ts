/**
 * A signed-in person's own recoveries: `GET /api/v1/auth/recoveries` (their workflows, their
 * second-factor reset requests, a recovery lock) and `POST /api/v1/auth/recoveries/{reference}/cancel`
 * (ending one of their own active workflows, optionally reported as not theirs). Someone who
 * knows the password starts a lost-phone recovery, gets a branch approval and reaches the
 * cooling-off; the owner, signed in, sees it and stops it. Threats, each named, with exact statuses
 * and codes: another person's reference is 404 like one nobody has (no enumeration), a finished
 * one is the existing 409 RECOVERY_STALE.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { answerWithoutRequestId } from '../harness/request-id.js';
import { HOUR, ok, recovery } from '../harness/recovery.js';

let t: TestApp;
let officer: string;
let n = 0;
const clock = new ManualClock(Date.UTC(2026, 2, 4, 9, 0, 0));

const rc = recovery(() => t);
const { initiate, verify, status, approve } = rc;
const list = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/recoveries', headers: bearer(token) });
const cancelOwn = (reference: string, token: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: `/api/v1/auth/recoveries/${encodeURIComponent(reference)}/cancel`, headers: bearer(token), ...(payload ? { payload } : {}) });

interface Own { reference: string; lost: string; state: string; started_at_branch: boolean; cancellable: boolean; ended_at: string | null; waiting_until: string | null }
interface OwnList { recoveries: Own[]; factor_resets: Array<Record<string, unknown>>; recovery_locked_until: string | null }

async function customer(): Promise<{ username: string; id: number; uuid: string; token: string }> {
  const user = await seedUser(t.s, `own.recovery.${++n}`, { email: `own.${n}@bank.example` });
  return { username: user.username, id: user.id, uuid: user.uuid, token: (await signIn(t.app, user.username)).access_token };
}

async function eventsFor(reference: string, event: string): Promise<Array<{ details: Record<string, unknown> }>> {
  const wf = await t.s.db.selectFrom('recovery_workflows').select('id').where('reference', '=', reference).executeTakeFirstOrThrow();
  return await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', event).where(sql<boolean>`details->>'workflow_id' = ${wf.id}`).execute() as Array<{ details: Record<string, unknown> }>;
}

beforeAll(async () => {
  t = await createTestApp({ clock });
  await rc.branchOfficer('own.officer');
});
// The suites move the clock: the officer signs in again, as after a break.
beforeEach(async () => {
  officer = (await signIn(t.app, 'own.officer')).access_token;
});
afterAll(async () => t?.close());

describe('your own recoveries, signed in', () => {
  it('lists your workflows (newest first, a branch\'s marked), your reset requests and no lock; never a handle', async () => {
    const me = await customer();
    const selfStarted = ok(await initiate(me.username, 'password'), 202);
    clock.advance(60_000);
    const atBranch = ok(await initiate(me.username, 'device', bearer(officer)), 202);
    await t.s.db.insertInto('mfa_reset_requests').values({
      user_id: me.id, status: 'rejected', reason: 'I lost my phone.', proof: 'password_and_security_questions',
      requested_at: new Date(clock.now() - HOUR), expires_at: new Date(clock.now() + 71 * HOUR), decided_at: new Date(clock.now()), decided_by: null, decision_note: 'Could not confirm.', completed_at: null,
    }).execute();
    const res = list(me.token);
    const body = ok(await res) as unknown as OwnList;
    expect((await res).body).not.toMatch(/rcv_|rcx_/);
    expect(body.recoveries).toEqual([
      expect.objectContaining({ reference: atBranch.reference, lost: 'device', state: 'initiated', started_at_branch: true, cancellable: true, ended_at: null }),
      expect.objectContaining({ lost: 'password', state: 'initiated', started_at_branch: false, cancellable: true }),
    ]);
    expect(body.recoveries[1]!.reference).toMatch(/^[2-9A-HJKMNP-Z]{8}$/);
    expect(body.factor_resets).toEqual([expect.objectContaining({ status: 'rejected', reason: 'I lost my phone.', decision_note: 'Could not confirm.', decided_at: expect.any(String) })]);
    expect(body.recovery_locked_until).toBeNull();

    // Past its time it shows as expired (nothing written), and it can no longer be cancelled.
    clock.advance(31 * 60_000);
    const later = ok(await list((await signIn(t.app, me.username)).access_token)) as unknown as OwnList;
    expect(later.recoveries.map((r) => [r.state, r.cancellable])).toEqual([['expired', false], ['expired', false]]);
    expect(ok(await status(selfStarted.recovery_id!)).state).toBe('expired');
  });

  it('a lost-phone recovery someone else pushed to its cooling-off: the owner, signed in, cancels it as not theirs; recovery is locked and the next attempt leads nowhere', async () => {
    const me = await customer();
    // Someone with the password starts it, and talks a branch into approving.
    const started = ok(await initiate(me.username, 'mfa'), 202);
    ok(await approve(started.reference!, officer));
    expect(ok(await verify(started.recovery_id!, { proof: 'password', password: STRONG_PASSWORD })).state).toBe('waiting');

    const seen = (ok(await list(me.token)) as unknown as OwnList).recoveries[0]!;
    expect(seen).toMatchObject({ reference: started.reference, lost: 'mfa', state: 'waiting', cancellable: true, waiting_until: expect.any(String) });

    const cancelled = ok(await cancelOwn(started.reference!.toLowerCase(), me.token, { not_me: true }));
    expect(cancelled).toMatchObject({ recovery: { reference: started.reference, state: 'cancelled', cancellable: false, ended_at: expect.any(String) }, reported: true, recovery_locked_until: expect.any(String) });
    expect(ok(await status(started.recovery_id!)).state).toBe('cancelled');
    expect((await eventsFor(started.reference!, 'RECOVERY_CANCELLED'))[0]!.details).toMatchObject({ by: 'owner_signed_in', reported_not_me: true, session_id: expect.any(String) });
    expect(await eventsFor(started.reference!, 'RECOVERY_REPORTED_NOT_ME')).toHaveLength(1);
    expect((ok(await list(me.token)) as unknown as OwnList).recovery_locked_until).toBe(cancelled.recovery_locked_until);

    // Locked: a new recovery answers alike but is a decoy, which never completes.
    const again = ok(await initiate(me.username, 'mfa'), 202);
    expect((await rc.workflow(again.recovery_id!)).decoy).toBe(true);
  });

  it('a recovery you started and no longer need: cancelled without a report or a lock (the body may be left out)', async () => {
    const me = await customer();
    const started = ok(await initiate(me.username, 'password'), 202);
    const reference = (ok(await list(me.token)) as unknown as OwnList).recoveries[0]!.reference;
    const cancelled = ok(await cancelOwn(reference, me.token));
    expect(cancelled).toMatchObject({ recovery: { state: 'cancelled' }, reported: false, recovery_locked_until: null });
    expect(ok(await status(started.recovery_id!)).state).toBe('cancelled');
    expect(await eventsFor(reference, 'RECOVERY_REPORTED_NOT_ME')).toEqual([]);
    expect((await rc.workflow(ok(await initiate(me.username, 'password'), 202).recovery_id!)).decoy).toBe(false);
  });
});

describe('threats', () => {
  it('threat: cancelling another person\'s recovery by its reference: 404 RECOVERY_NOT_FOUND, the same body as a reference nobody has; theirs goes on', async () => {
    const me = await customer();
    const other = await customer();
    const theirs = ok(await initiate(other.username, 'mfa'), 202);
    const bodies = [];
    for (const ref of [theirs.reference!, 'ZZZZ2222', 'not-a-ref']) {
      const res = await cancelOwn(ref, me.token, { not_me: true });
      expectError(res, 404, 'RECOVERY_NOT_FOUND');
      bodies.push(answerWithoutRequestId(res));
    }
    for (const b of bodies) expect(b).toEqual(bodies[0]);
    expect(ok(await status(theirs.recovery_id!)).state).toBe('initiated');
    expect((ok(await list(me.token)) as unknown as OwnList).recoveries).toEqual([]);
    expect(await t.s.db.selectFrom('recovery_locks').select('user_id').where('user_id', 'in', [me.id, other.id]).execute()).toEqual([]);
  });

  it('threat: cancelling a recovery that has ended: 409 RECOVERY_STALE with its state', async () => {
    const me = await customer();
    const started = ok(await initiate(me.username, 'mfa'), 202);
    ok(await cancelOwn(started.reference!, me.token));
    expect(expectError(await cancelOwn(started.reference!, me.token), 409, 'RECOVERY_STALE').details).toMatchObject({ state: 'cancelled' });
    const lapsing = ok(await initiate(me.username, 'device'), 202);
    clock.advance(31 * 60_000);
    expect(expectError(await cancelOwn(lapsing.reference!, (await signIn(t.app, me.username)).access_token), 409, 'RECOVERY_STALE').details).toMatchObject({ state: 'expired' });
  });

  it('threat: without a session (401 TOKEN_MISSING), and with a malformed reference (422 VALIDATION_ERROR)', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/recoveries' }), 401, 'TOKEN_MISSING');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/recoveries/K7QM4XPD/cancel' }), 401, 'TOKEN_MISSING');
    const me = await customer();
    expectError(await cancelOwn('K7QM4XPD', me.token, { not_me: 'yes' }), 422, 'VALIDATION_ERROR');
    expectError(await cancelOwn('K7QM\u00004XPD', me.token), 422, 'VALIDATION_ERROR');
  });
});
