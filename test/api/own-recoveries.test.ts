/**
 * A signed-in person's own recoveries: `GET /api/v1/auth/recoveries` (their workflows, their
 * second-factor reset requests, a recovery lock) and `POST /api/v1/auth/recoveries/{reference}/cancel`
 * (ending one of their own active workflows, optionally reported as not theirs). Someone who
 * knows the password starts a lost-phone recovery, gets a branch approval and reaches the
 * cooling-off; the owner, signed in, sees it and stops it. Threats, each named, with exact statuses
 * and codes: another person's reference is 404 like one nobody has (no enumeration), a finished
 * one is the existing 409 RECOVERY_STALE; a session (which may be a thief's, on a lost phone still
 * signed in) never locks recovery with `not_me`, cannot cancel a workflow a branch started after
 * checking an identity document, nor a decoy (400 RECOVERY_INVALID_STATE: no notice, no report,
 * no lock). Notices come over real SMTP; the service's log is captured for the bank's warn line.
 */
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { answerWithoutRequestId } from '../harness/request-id.js';
import { HOUR, ok, recovery } from '../harness/recovery.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

const CANCEL_URL = 'https://auth.bank.example/recovery/cancel';

let t: TestApp;
let smtp: TestSmtp;
const logged: string[] = [];
let officer: string;
let n = 0;
const clock = new ManualClock(Date.UTC(2026, 2, 4, 9, 0, 0));

const rc = recovery(() => t);
const { initiate, verify, status, approve } = rc;
const list = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/recoveries', headers: bearer(token) });
const cancelOwn = (reference: string, token: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: `/api/v1/auth/recoveries/${encodeURIComponent(reference)}/cancel`, headers: bearer(token), ...(payload ? { payload } : {}) });

interface Own { reference: string; lost: string; state: string; started_at_branch: boolean; blocked: boolean; cancellable: boolean; ended_at: string | null; waiting_until: string | null }
interface OwnList { recoveries: Own[]; factor_resets: Array<Record<string, unknown>>; recovery_locked_until: string | null }

async function customer(): Promise<{ username: string; id: number; uuid: string; email: string; token: string }> {
  const email = `own.${++n}@bank.example`;
  const user = await seedUser(t.s, `own.recovery.${n}`, { email });
  return { username: user.username, id: user.id, uuid: user.uuid, email, token: (await signIn(t.app, user.username)).access_token };
}

/** Every mail sent to `address`, once background deliveries are done. */
async function mailsTo(address: string): Promise<string[]> {
  await t.s.recovery.settled();
  return smtp.to(address).map((m) => m.subject);
}

const lockOf = async (userId: number) => t.s.db.selectFrom('recovery_locks').select('locked_until').where('user_id', '=', userId).executeTakeFirst();

async function eventsFor(reference: string, event: string): Promise<Array<{ details: Record<string, unknown> }>> {
  const wf = await t.s.db.selectFrom('recovery_workflows').select('id').where('reference', '=', reference).executeTakeFirstOrThrow();
  return await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', event).where(sql<boolean>`details->>'workflow_id' = ${wf.id}`).execute() as Array<{ details: Record<string, unknown> }>;
}

beforeAll(async () => {
  smtp = await startSmtp();
  const sink = new Writable({ write(chunk, _e, done) { logged.push(String(chunk)); done(); } });
  t = await createTestApp({
    clock, log: pino({ level: 'info' }, sink),
    env: { SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', RECOVERY_CANCEL_URL: CANCEL_URL },
  });
  await rc.branchOfficer('own.officer');
});
// The suites move the clock: the officer signs in again, as after a break.
beforeEach(async () => {
  officer = (await signIn(t.app, 'own.officer')).access_token;
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('your own recoveries, signed in', () => {
  it('lists your workflows (newest first, a branch\'s marked and not cancellable), your reset requests and no lock; never a handle', async () => {
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
      expect.objectContaining({ reference: atBranch.reference, lost: 'device', state: 'initiated', started_at_branch: true, blocked: false, cancellable: false, ended_at: null }),
      expect.objectContaining({ lost: 'password', state: 'initiated', started_at_branch: false, blocked: false, cancellable: true }),
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

  it('a lost-phone recovery someone else pushed to its cooling-off: the owner, signed in, cancels it as not theirs; it is reported, every contact told, and recovery is not locked', async () => {
    const me = await customer();
    // Someone with the password starts it, and talks a branch into approving.
    const started = ok(await initiate(me.username, 'mfa'), 202);
    ok(await approve(started.reference!, officer));
    expect(ok(await verify(started.recovery_id!, { proof: 'password', password: STRONG_PASSWORD })).state).toBe('waiting');

    const seen = (ok(await list(me.token)) as unknown as OwnList).recoveries[0]!;
    expect(seen).toMatchObject({ reference: started.reference, lost: 'mfa', state: 'waiting', started_at_branch: false, blocked: false, cancellable: true, waiting_until: expect.any(String) });

    const cancelled = ok(await cancelOwn(started.reference!.toLowerCase(), me.token, { not_me: true }));
    expect(cancelled).toMatchObject({ recovery: { reference: started.reference, state: 'cancelled', cancellable: false, ended_at: expect.any(String) }, reported: true, recovery_locked_until: null });
    expect(ok(await status(started.recovery_id!)).state).toBe('cancelled');
    expect((await eventsFor(started.reference!, 'RECOVERY_CANCELLED'))[0]!.details).toMatchObject({ by: 'owner_signed_in', reported_not_me: true, session_id: expect.any(String) });
    expect((await eventsFor(started.reference!, 'RECOVERY_REPORTED_NOT_ME')).map((e) => e.details))
      .toEqual([expect.objectContaining({ by: 'owner_signed_in', cancelled: true, locked: false, recovery_locked_until: null, session_id: expect.any(String) })]);
    expect(logged.some((l) => l.includes('"level":40') && l.includes(me.uuid) && l.includes('reported as not the owner\'s (signed in)'))).toBe(true);
    expect((await mailsTo(me.email)).at(-1)).toBe('The recovery of your account was stopped');
    // The email says what happened (stopped while signed in) and promises no lock, which was not set.
    const stopped = smtp.to(me.email).at(-1)!.text;
    expect(stopped).toContain('was stopped from a signed-in session');
    expect(stopped).not.toMatch(/recovery is locked/);
  });

  it('a recovery you started and no longer need: cancelled without a report or a lock (the body may be left out)', async () => {
    const me = await customer();
    const started = ok(await initiate(me.username, 'password'), 202);
    const reference = (ok(await list(me.token)) as unknown as OwnList).recoveries[0]!.reference;
    const cancelled = ok(await cancelOwn(reference, me.token));
    expect(cancelled).toMatchObject({ recovery: { state: 'cancelled', blocked: false }, reported: false, recovery_locked_until: null });
    expect(ok(await status(started.recovery_id!)).state).toBe('cancelled');
    expect(await eventsFor(reference, 'RECOVERY_REPORTED_NOT_ME')).toEqual([]);
    expect((await rc.workflow(ok(await initiate(me.username, 'password'), 202).recovery_id!)).decoy).toBe(false);
  });
});

describe('threats', () => {
  it('threat: a burst of cancels of one recovery (a double tap, two devices): one 200, the rest 409 RECOVERY_STALE; one audit entry, one report, one notice', async () => {
    const me = await customer();
    ok(await initiate(me.username, 'password'), 202);
    const reference = (ok(await list(me.token)) as unknown as OwnList).recoveries[0]!.reference;
    const before = (await mailsTo(me.email)).length;
    const answers = await Promise.all(Array.from({ length: 8 }, () => cancelOwn(reference, me.token, { not_me: true })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    for (const refused of answers.filter((a) => a.statusCode === 409)) expect(refused.json()).toMatchObject({ status_code: 409, error_code: 'RECOVERY_STALE' });
    expect(await eventsFor(reference, 'RECOVERY_CANCELLED')).toHaveLength(1);
    expect(await eventsFor(reference, 'RECOVERY_REPORTED_NOT_ME')).toHaveLength(1);
    expect((await mailsTo(me.email)).slice(before)).toEqual(['The recovery of your account was stopped']);
  });

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

  it('threat: a thief holding a lost phone\'s session cancels the owner\'s recovery with not_me to lock them out: recovery is not locked (no recovery_locks row; the next initiate, the owner\'s own, is real)', async () => {
    const me = await customer();
    ok(await initiate(me.username, 'password'), 202);
    const latest = async () => (ok(await list(me.token)) as unknown as OwnList).recoveries.find((r) => r.cancellable)!.reference; // the clock is frozen: the two share a start
    const done = ok(await cancelOwn(await latest(), me.token, { not_me: true }));
    expect(done).toMatchObject({ reported: true, recovery_locked_until: null });
    expect(await lockOf(me.id)).toBeUndefined();
    expect((ok(await list(me.token)) as unknown as OwnList).recovery_locked_until).toBeNull();
    const again = ok(await initiate(me.username, 'password'), 202);
    expect((await rc.workflow(again.recovery_id!)).decoy).toBe(false);
    // Again and again: still no lock, and a branch can still start one for the owner.
    ok(await cancelOwn(await latest(), me.token, { not_me: true }));
    const atBranch = ok(await initiate(me.username, 'device', bearer(officer)), 202);
    expect((await rc.workflow(atBranch.recovery_id!)).decoy).toBe(false);
    expect(await lockOf(me.id)).toBeUndefined();
  });

  it('threat: a session cancels a recovery a branch started after checking the owner\'s identity document: 400 RECOVERY_INVALID_STATE (started_at_branch); it goes on, nobody is told, nothing is audited', async () => {
    const me = await customer();
    const atBranch = ok(await initiate(me.username, 'mfa', bearer(officer)), 202);
    const mails = (await mailsTo(me.email)).length;
    for (const payload of [{ not_me: true }, undefined]) {
      expect(expectError(await cancelOwn(atBranch.reference!, me.token, payload), 400, 'RECOVERY_INVALID_STATE').details).toMatchObject({ state: 'initiated', reason: 'started_at_branch' });
    }
    expect(ok(await status(atBranch.recovery_id!)).state).toBe('initiated');
    expect(await eventsFor(atBranch.reference!, 'RECOVERY_CANCELLED')).toEqual([]);
    expect(await eventsFor(atBranch.reference!, 'RECOVERY_REPORTED_NOT_ME')).toEqual([]);
    expect(await mailsTo(me.email)).toHaveLength(mails);
    expect(await lockOf(me.id)).toBeUndefined();
  });

  it('threat: a session cancels a decoy started while recovery was locked: 400 RECOVERY_INVALID_STATE (blocked); no notice, no report, no new lock', async () => {
    const me = await customer();
    // The owner locks recovery with the "this was not me" link of the first notice.
    ok(await initiate(me.username, 'mfa'), 202);
    await t.s.recovery.settled();
    const link = smtp.to(me.email).map((m) => /#(rcx_[A-Za-z0-9_-]{43})/.exec(m.text)).find((m) => m !== null)!;
    ok(await rc.cancelWith(link[1]!));
    const lock = (await lockOf(me.id))!;
    expect(lock).toBeDefined();

    clock.advance(60_000); // a lock renewed now would end later than this one
    const decoy = ok(await initiate(me.username, 'mfa'), 202);
    expect((await rc.workflow(decoy.recovery_id!)).decoy).toBe(true);
    const token = (await signIn(t.app, me.username)).access_token;
    const listed = ok(await list(token)) as unknown as OwnList;
    expect(listed.recoveries[0]).toMatchObject({ reference: decoy.reference, state: 'initiated', blocked: true, cancellable: false });
    expect(listed.recovery_locked_until).toBe(new Date(lock.locked_until).toISOString());

    const mails = (await mailsTo(me.email)).length;
    expect(expectError(await cancelOwn(decoy.reference!, token, { not_me: true }), 400, 'RECOVERY_INVALID_STATE').details).toMatchObject({ state: 'initiated', reason: 'blocked' });
    expect(await mailsTo(me.email)).toHaveLength(mails);
    expect(await eventsFor(decoy.reference!, 'RECOVERY_REPORTED_NOT_ME')).toEqual([]);
    expect(await eventsFor(decoy.reference!, 'RECOVERY_CANCELLED')).toEqual([]);
    expect(new Date((await lockOf(me.id))!.locked_until).getTime()).toBe(new Date(lock.locked_until).getTime());
    expect(ok(await status(decoy.recovery_id!)).state).toBe('initiated');
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
