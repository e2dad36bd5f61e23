/**
 * Account recovery (issue 27), threats, on both databases. Each is named after the attack and
 * asserts the exact status and error code; work done is counted (attempt columns, audit rows,
 * bcrypt comparisons, codes sent), never timed; the clock is frozen. Codes come from the
 * development outbox (no SMTP or SMS gateway configured).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { enrolTotp } from '../harness/authenticator.js';
import { watchComparisons } from '../harness/comparisons.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';
import { MINUTE, ok, recovery, shape, wrongFor, type Body } from '../harness/recovery.js';
import { newReference } from '../../src/recovery/reference.js';
import { RecoveryStore } from '../../src/recovery/store.js';

let t: TestApp;
const r = recovery(() => t);
const { initiate, verify, status, cancel, start, codeTo, workflow, proofRow, audited, withAnswers } = r;

afterEach(() => vi.restoreAllMocks());

/** `n` bare decoy workflows of one made-up account (a code proof each), straight through the store, and a send of a budget of `max`. */
async function bareWorkflows(n: number, max: number) {
  const store = new RecoveryStore();
  const now = new Date(t.clock.now());
  const accountHash = `bare-${randomUUID()}`;
  const ids = await t.s.database.db.transaction().execute(async (trx) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = (await store.insert(trx, {
        handleHash: `${accountHash}-${i}`, kind: 'password', userId: null, decoy: true, accountHash, loginKey: 'n:bare', subjectMasked: 'b***', now,
        expiresAt: new Date(now.getTime() + 30 * MINUTE), reference: newReference(), initiatedBy: null, alternatives: [['email_code', 'sms_code']],
      }, false))!;
      await store.insertProofs(trx, id, ['email_code', 'sms_code'], {});
      out.push(id);
    }
    return out;
  });
  const send = { now, resendSec: 60, maxSends: max, codeExpiresAt: new Date(now.getTime() + 5 * MINUTE), destination: 'x', since: new Date(now.getTime() - 60 * MINUTE) };
  return { accountHash, ids, send };
}

beforeAll(async () => {
  t = await createTestApp({ clock: new ManualClock(Date.UTC(2026, 2, 3, 9, 0, 0)) });
});
afterAll(async () => t?.close());

describe('account recovery threats', () => {
  it('threat: enumeration: unknown, disabled and real accounts answer alike at every step, and a decoy never completes, even with a right authenticator code', async () => {
    await seedUser(t.s, 'eve.real', { email: 'eve@bank.example', phone: '+254700200001' });
    await seedUser(t.s, 'dan.disabled', { email: 'dan@bank.example' });
    const { authenticator } = await enrolTotp(t.app, t.clock, (await signIn(t.app, 'dan.disabled')).access_token);
    await t.s.database.db.updateTable('users').set({ is_active: false }).where('username', '=', 'dan.disabled').execute();

    const names = ['eve.real', 'dan.disabled', 'nobody.here'];
    const started = await Promise.all(names.map((n) => initiate(n)));
    const bodies = started.map((r) => ok(r, 202));
    for (const b of bodies) expect(Object.keys(b).sort()).toEqual(['expires_at', 'lost', 'proofs', 'recovery_id', 'state']);
    expect(shape(bodies[1]!)).toEqual(shape(bodies[0]!));
    expect(shape(bodies[2]!)).toEqual(shape(bodies[0]!));
    const [real, disabled, unknown] = bodies.map((b) => b.recovery_id!);

    const sends = await Promise.all([real, disabled, unknown].map((id) => verify(id!, { proof: 'email_code' })));
    const sent = sends.map((r) => ok(r));
    // Byte for byte the same: a username was typed, so no answer shows a mask of the account's own contacts
    // (a real one's country code or mail domain would tell it from a made-up one).
    for (const b of sent.slice(1)) expect(shape(b)).toEqual(shape(sent[0]!));
    expect(sent.map((b) => b.sent!.destination)).toEqual(['the email address on file', 'the email address on file', 'the email address on file']);
    const sms = await Promise.all([real, disabled, unknown].map((id) => verify(id!, { proof: 'sms_code' })));
    expect(sms.map((r) => ok(r).sent!.destination)).toEqual(['the phone number on file', 'the phone number on file', 'the phone number on file']);
    expect(await r.outboxCount('dan@bank.example')).toBe(0); // nothing to a disabled account
    t.clock.advance(MINUTE);

    const wrong = await Promise.all([real, disabled, unknown].map((id) => verify(id!, { proof: 'email_code', code: '000000' })));
    const details = wrong.map((r) => withoutRequestId(expectError(r, 401, 'RECOVERY_PROOF_INVALID').details));
    expect(details).toEqual([{ attempts_left: 2, state: 'initiated' }, { attempts_left: 2, state: 'initiated' }, { attempts_left: 2, state: 'initiated' }]);

    // By email address: an unknown address shows its own mask, as a real one found by it does.
    const [byEmail, ghost] = await Promise.all([start('eve@bank.example', 'pin'), start('ghost@bank.example', 'pin')]);
    expect(ok(await verify(ghost, { proof: 'email_code' })).sent!.destination).toBe('g***@bank.example');
    expect(ok(await verify(byEmail, { proof: 'email_code' })).sent!.destination).toBe('e***@bank.example');

    // A decoy never passes: the disabled account's right authenticator code is refused.
    const totp = await verify(disabled!, { proof: 'totp', code: authenticator.code(t.clock.now()) });
    expect(withoutRequestId(expectError(totp, 401, 'RECOVERY_PROOF_INVALID').details)).toEqual({ attempts_left: 2, state: 'initiated' });
    // An identifier that names no account is audited masked; a disabled account's workflow names the account (for the
    // fraud team: the caller never sees the audit trail), marked as a decoy.
    expect((await audited(unknown!, 'RECOVERY_INITIATED')).map((r) => [r.user_id, r.username])).toEqual([[null, 'no***']]);
    const dan = (await t.s.users.findByLogin('dan.disabled'))!;
    expect((await audited(disabled!, 'RECOVERY_INITIATED')).map((r) => [r.user_id, r.username, r.details.decoy])).toEqual([[dan.uuid, 'dan.disabled', true]]);
    expect((await audited(disabled!, 'RECOVERY_PROOF_FAILED')).map((r) => r.user_id)).toEqual([dan.uuid, dan.uuid]);
  });

  it('threat: a parallel burst of 20 wrong codes gets 3 comparisons, then the proof is locked', async () => {
    await seedUser(t.s, 'burst.code', { email: 'burst@bank.example' });
    const id = await start('burst.code');
    ok(await verify(id, { proof: 'email_code' }));
    const code = await codeTo('burst@bank.example');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => verify(id, { proof: 'email_code', code: wrongFor(code, i + 1) })));
    const invalid = answers.filter((r) => r.statusCode === 401);
    const locked = answers.filter((r) => r.statusCode === 429);
    expect(invalid).toHaveLength(3);
    expect(locked).toHaveLength(17);
    for (const r of invalid) expectError(r, 401, 'RECOVERY_PROOF_INVALID');
    for (const r of locked) expectError(r, 429, 'RECOVERY_PROOF_LOCKED');
    expect((await proofRow(id, 'email_code')).attempts).toBe(3);
    expect(await audited(id, 'RECOVERY_PROOF_FAILED')).toHaveLength(3);
    expect(await audited(id, 'RECOVERY_PROOF_LOCKED')).toHaveLength(1);
    const wf = await workflow(id);
    const otp = await t.s.database.db.selectFrom('mfa_otp_codes').select('attempts').where('challenge', '=', `recovery:${wf.id}:email_code`).execute();
    expect(otp.map((r) => r.attempts)).toEqual([3]); // the code itself was compared three times
    // Even the right code is refused now; other alternatives remain, so the workflow lives on.
    expectError(await verify(id, { proof: 'email_code', code }), 429, 'RECOVERY_PROOF_LOCKED');
    expect(ok(await status(id))).toMatchObject({ state: 'initiated', proofs: { options: expect.arrayContaining([expect.objectContaining({ proof: 'email_code', attempts_left: 0 })]) } });
  });

  it('threat: a parallel burst of 20 wrong passwords gets 3 bcrypt comparisons', async () => {
    const phone = '+254700200002';
    await seedUser(t.s, 'burst.password', { phone });
    const { access_token } = await signIn(t.app, 'burst.password');
    ok(await r.post('/api/v1/auth/pin', { current_password: STRONG_PASSWORD, new_pin: '2580' }, bearer(access_token)));
    const id = await start(phone, 'pin');
    ok(await verify(id, { proof: 'sms_code' }));
    ok(await verify(id, { proof: 'sms_code', code: await codeTo(phone) }));
    const counted = watchComparisons(t.s.hasher);
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify(id, { proof: 'password', password: WRONG_PASSWORD })));
    expect(answers.filter((r) => r.statusCode === 401).map((r) => (r.json() as { error_code: string }).error_code)).toEqual(['RECOVERY_PROOF_INVALID', 'RECOVERY_PROOF_INVALID', 'RECOVERY_PROOF_INVALID']);
    for (const r of answers.filter((a) => a.statusCode !== 401)) expectError(r, 429, 'RECOVERY_PROOF_LOCKED');
    expect(counted.started).toHaveLength(3);
    expect((await proofRow(id, 'password')).attempts).toBe(3);
    expect(await audited(id, 'RECOVERY_PROOF_FAILED')).toHaveLength(3);
  });

  it('threat: a replayed code is refused: 409 once its proof was given, 409 RECOVERY_STALE once the workflow completed', async () => {
    await seedUser(t.s, 'replay.user', { email: 'replay@bank.example', phone: '+254700200003' });
    const id = await start('replay.user');
    ok(await verify(id, { proof: 'email_code' }));
    const code = await codeTo('replay@bank.example');
    ok(await verify(id, { proof: 'email_code', code }));
    expect(withoutRequestId(expectError(await verify(id, { proof: 'email_code', code }), 409, 'RECOVERY_PROOF_ALREADY_GIVEN').details)).toEqual({ proof: 'email_code' });
    expectError(await verify(id, { proof: 'email_code' }), 409, 'RECOVERY_PROOF_ALREADY_GIVEN'); // no new code for a given proof
    ok(await verify(id, { proof: 'sms_code' }));
    const sms = await codeTo('+254700200003');
    expect(ok(await verify(id, { proof: 'sms_code', code: sms })).state).toBe('completed');
    expect(withoutRequestId(expectError(await verify(id, { proof: 'sms_code', code: sms }), 409, 'RECOVERY_STALE').details)).toEqual({ state: 'completed' });
  });

  it('threat: an expired code is refused (401 RECOVERY_CODE_EXPIRED, no attempt spent); a new one works', async () => {
    await seedUser(t.s, 'late.user', { email: 'late@bank.example' });
    const id = await start('late.user');
    ok(await verify(id, { proof: 'email_code' }));
    const code = await codeTo('late@bank.example');
    t.clock.advance(5 * MINUTE + 1000);
    expectError(await verify(id, { proof: 'email_code', code }), 401, 'RECOVERY_CODE_EXPIRED');
    expect((await proofRow(id, 'email_code')).attempts).toBe(0);
    ok(await verify(id, { proof: 'email_code' }));
    const fresh = await codeTo('late@bank.example');
    expectError(await verify(id, { proof: 'email_code', code }), 401, 'RECOVERY_PROOF_INVALID'); // the old code is replaced
    expect(ok(await verify(id, { proof: 'email_code', code: fresh })).state).toBe('verifying');
  });

  it('threat: a code asked for again too soon, or too often, is refused with Retry-After', async () => {
    await seedUser(t.s, 'spam.user', { email: 'spam@bank.example' });
    const id = await start('spam.user');
    ok(await verify(id, { proof: 'email_code' }));
    const soon = expectError(await verify(id, { proof: 'email_code' }), 429, 'OTP_RESEND_THROTTLED');
    expect(withoutRequestId(soon.details)).toEqual({ retry_after_seconds: 60 });
    for (let i = 0; i < 4; i++) {
      t.clock.advance(MINUTE);
      ok(await verify(id, { proof: 'email_code' }));
    }
    t.clock.advance(MINUTE);
    expectError(await verify(id, { proof: 'email_code' }), 429, 'OTP_SEND_LIMIT');
    expect(await r.outboxCount('spam@bank.example')).toBe(5);
  });

  it('threat: a stale recovery_id: after cancel and after completion every step is 409 RECOVERY_STALE; cancel after completion too', async () => {
    await seedUser(t.s, 'stale.user', { email: 'stale@bank.example', phone: '+254700200004' });
    const cancelled = await start('stale.user');
    expect(ok(await cancel(cancelled)).state).toBe('cancelled');
    expect(withoutRequestId(expectError(await verify(cancelled, { proof: 'email_code' }), 409, 'RECOVERY_STALE').details)).toEqual({ state: 'cancelled' });
    expectError(await cancel(cancelled), 409, 'RECOVERY_STALE');
    expect(ok(await status(cancelled)).state).toBe('cancelled');
    expect(await audited(cancelled, 'RECOVERY_CANCELLED')).toHaveLength(1);

    const id = await start('stale.user');
    ok(await verify(id, { proof: 'email_code' }));
    ok(await verify(id, { proof: 'email_code', code: await codeTo('stale@bank.example') }));
    ok(await verify(id, { proof: 'sms_code' }));
    expect(ok(await verify(id, { proof: 'sms_code', code: await codeTo('+254700200004') })).reset_token).toEqual(expect.any(String));
    expect(withoutRequestId(expectError(await cancel(id), 409, 'RECOVERY_STALE').details)).toEqual({ state: 'completed' });
    expectError(await verify(id, { proof: 'email_code' }), 409, 'RECOVERY_STALE');
    expect(ok(await status(id))).toMatchObject({ state: 'completed' });
  });

  it('threat: a stranger who starts first never keeps the owner out: a new initiate replaces the open workflow (audited), and the codes come from the account\'s budget, not the workflow\'s', async () => {
    await seedUser(t.s, 'race.user', { email: 'race@bank.example' });
    // Two at once: whichever way the database orders them, one workflow ends up open and holding the account's slot;
    // the other was replaced by it (or, when both raced past the replacement, is a decoy that answers alike).
    const [a, b] = await Promise.all([initiate('race.user'), initiate('RACE.USER')]);
    const ids = [ok(a, 202), ok(b, 202)].map((x) => x.recovery_id!);
    expect(shape(a.json() as Body)).toEqual(shape(b.json() as Body));
    const rows = await Promise.all(ids.map(workflow));
    const open = rows.filter((r) => r.holds_slot && r.state === 'initiated');
    expect(open).toHaveLength(1);
    const other = rows.find((r) => r !== open[0])!;
    expect(other.decoy || other.state === 'cancelled').toBe(true);

    // The stranger's workflow, then the owner's: the owner's replaces it, and the stranger's is stale.
    const stranger = await start('race@bank.example');
    ok(await verify(stranger, { proof: 'email_code' }));
    const owner = await start('race.user');
    expect(await workflow(stranger)).toMatchObject({ state: 'cancelled', holds_slot: true });
    expect(await audited(stranger, 'RECOVERY_CANCELLED')).toEqual([expect.objectContaining({ details: expect.objectContaining({ by: 'superseded' }) })]);
    expectError(await verify(stranger, { proof: 'email_code', code: await codeTo('race@bank.example') }), 409, 'RECOVERY_STALE');
    t.clock.advance(MINUTE);
    ok(await verify(owner, { proof: 'email_code' }));
    expect(ok(await verify(owner, { proof: 'email_code', code: await codeTo('race@bank.example') })).state).toBe('verifying');
  });

  it('threat: a SIM swap and a mailbox are not the keys of the bank: staff and administrators are not recovered self-service (answers alike, nothing sent, never completes; audited with the account)', async () => {
    const boss = await seedUser(t.s, 'boss.admin', { roles: ['admin'], email: 'boss@bank.example', phone: '+254700200077' });
    await seedUser(t.s, 'plain.customer', { email: 'plain@bank.example', phone: '+254700200078' });
    const [adminWf, customerWf] = await Promise.all([start('boss.admin'), start('plain.customer')]);
    const [a, c] = await Promise.all([verify(adminWf, { proof: 'email_code' }), verify(customerWf, { proof: 'email_code' })]);
    expect(shape(ok(a))).toEqual(shape(ok(c)));
    expect(await r.outboxCount('boss@bank.example')).toBe(0);
    // Even the codes a thief might have read elsewhere get nowhere.
    expectError(await verify(adminWf, { proof: 'email_code', code: '123456' }), 401, 'RECOVERY_PROOF_INVALID');
    expect(ok(await status(adminWf))).toMatchObject({ state: 'initiated', proofs: { given: [] } });
    expect((await workflow(adminWf)).decoy).toBe(true);
    expect((await audited(adminWf, 'RECOVERY_INITIATED')).map((r) => r.user_id)).toEqual([boss.uuid]);
  });

  it('threat: two right answers at once record the proof once: one moves the workflow, the other is 409 RECOVERY_PROOF_ALREADY_GIVEN', async () => {
    await seedUser(t.s, 'twin.right', { email: 'twin.right@bank.example' });
    const id = await start('twin.right', 'mfa'); // password + email code + security answers
    ok(await verify(id, { proof: 'email_code' }));
    ok(await verify(id, { proof: 'email_code', code: await codeTo('twin.right@bank.example') }));
    const both = await Promise.all([verify(id, { proof: 'password', password: STRONG_PASSWORD }), verify(id, { proof: 'password', password: STRONG_PASSWORD })]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expectError(both.find((r) => r.statusCode === 409)!, 409, 'RECOVERY_PROOF_ALREADY_GIVEN');
    expect((await audited(id, 'RECOVERY_PROOF_PASSED')).map((r) => r.details.proof).sort()).toEqual(['email_code', 'password']);
  });

  it('threat: a code asked for a workflow cancelled a moment before is not sent (409 RECOVERY_STALE)', async () => {
    await seedUser(t.s, 'send.after.cancel', { email: 'send.after.cancel@bank.example' });
    const id = await start('send.after.cancel');
    const sentBefore = await r.outboxCount('send.after.cancel@bank.example');
    // The cancel lands between the route's read of the workflow and the send's reservation.
    const wf = await workflow(id);
    await t.s.database.db.updateTable('recovery_workflows').set({ state: 'cancelled', ended_at: new Date(t.clock.now()) }).where('id', '=', wf.id).execute();
    const store = new RecoveryStore();
    expect(await store.reserveSend(t.s.database.db, wf.id, 'email_code', { now: new Date(t.clock.now()), resendSec: 60, maxSends: 5, codeExpiresAt: new Date(t.clock.now() + 300_000), destination: 'x' })).toBe(false);
    expectError(await verify(id, { proof: 'email_code' }), 409, 'RECOVERY_STALE');
    expect(await r.outboxCount('send.after.cancel@bank.example')).toBe(sentBefore);
  });

  it('an authenticator code, and then a backup code, each with an emailed code, recover a password (the factors\' own secrets, consumed as at sign-in)', async () => {
    await seedUser(t.s, 'has.totp', { email: 'has.totp@bank.example' });
    const { authenticator, backupCodes } = await enrolTotp(t.app, t.clock, (await signIn(t.app, 'has.totp')).access_token);
    // totp + email_code
    const first = await start('has.totp');
    ok(await verify(first, { proof: 'email_code' }));
    ok(await verify(first, { proof: 'email_code', code: await codeTo('has.totp@bank.example') }));
    const done = ok(await verify(first, { proof: 'totp', code: authenticator.code(t.clock.now()) }));
    expect(done).toMatchObject({ state: 'completed', proofs: { given: ['email_code', 'totp'] } });
    expect(done.reset_token).toEqual(expect.any(String));
    // backup_code + email_code; the backup code is spent: the same one again gets nowhere
    t.clock.advance(2 * MINUTE);
    const second = await start('has.totp');
    ok(await verify(second, { proof: 'email_code' }));
    ok(await verify(second, { proof: 'email_code', code: await codeTo('has.totp@bank.example') }));
    expect(ok(await verify(second, { proof: 'backup_code', code: backupCodes[0]! }))).toMatchObject({ state: 'completed' });
    t.clock.advance(2 * MINUTE);
    const third = await start('has.totp');
    ok(await verify(third, { proof: 'email_code' }));
    ok(await verify(third, { proof: 'email_code', code: await codeTo('has.totp@bank.example') }));
    expectError(await verify(third, { proof: 'backup_code', code: backupCodes[0]! }), 401, 'RECOVERY_PROOF_INVALID');
  });

  it('threat: code bombing: starting again and again sends no more than OTP_MAX_SENDS codes of a kind an hour to one account', async () => {
    await seedUser(t.s, 'bomb.target', { email: 'bomb@bank.example' });
    const sentTo = (): Promise<number> => r.outboxCount('bomb@bank.example');
    const before = await sentTo();
    const answers: number[] = [];
    for (let i = 0; i < 8; i++) {
      const id = await start(i % 2 === 0 ? 'bomb.target' : 'bomb@bank.example');
      answers.push((await verify(id, { proof: 'email_code' })).statusCode);
      await cancel(id);
    }
    expect(answers).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect((await sentTo()) - before).toBe(5);
    const refused = await verify(await start('bomb.target'), { proof: 'email_code' });
    expectError(refused, 429, 'OTP_SEND_LIMIT');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // An hour on, the budget is back.
    t.clock.advance(61 * MINUTE);
    ok(await verify(await start('bomb.target'), { proof: 'email_code' }));
  });

  it('threat: code bombing in parallel: bursts of code requests over the account\'s password, PIN and second-factor workflows send at most OTP_MAX_SENDS codes an hour (counted in the outbox and the code rows)', async () => {
    const email = 'parallel.bomb@bank.example';
    const user = await seedUser(t.s, 'parallel.bomb', { email });
    ok(await r.post('/api/v1/auth/pin', { current_password: STRONG_PASSWORD, new_pin: '2580' }, bearer((await signIn(t.app, 'parallel.bomb')).access_token)));
    const ids = await Promise.all(['password', 'pin', 'mfa'].map((lost) => start('parallel.bomb', lost)));
    for (const id of ids) expect((await workflow(id)).decoy).toBe(false); // three real workflows of one account, each with an emailed code
    const burst = async (): Promise<Array<[number, string | undefined]>> => {
      const answers = await Promise.all(ids.flatMap((id) => Array.from({ length: 4 }, () => verify(id, { proof: 'email_code' }))));
      return answers.map((a) => [a.statusCode, a.statusCode === 200 ? undefined : (a.json() as { error_code: string }).error_code]);
    };
    const sent = (answers: Array<[number, string | undefined]>): number => answers.filter(([st]) => st === 200).length;
    const first = await burst();
    t.clock.advance(MINUTE + 1000); // past every workflow's resend interval
    const second = await burst();
    t.clock.advance(MINUTE + 1000);
    const third = await burst();
    expect([sent(first), sent(second), sent(third)]).toEqual([3, 2, 0]);
    for (const [st, code] of [...first, ...second, ...third].filter(([c]) => c !== 200)) {
      expect(st).toBe(429);
      expect(['OTP_RESEND_THROTTLED', 'OTP_SEND_LIMIT']).toContain(code);
    }
    expect(third.map(([, code]) => code)).toEqual(Array.from({ length: 12 }, () => 'OTP_SEND_LIMIT'));
    expect(await r.outboxCount(email)).toBe(5);
    const rows = await t.s.database.db.selectFrom('mfa_otp_codes').select('id').where('user_id', '=', user.id).where('purpose', '=', 'recovery').execute();
    expect(rows).toHaveLength(5);
  });

  it('threat: code bombing in parallel, at the reservation itself: 8 workflows of one account reserving a code at once get the budget (2 here) through', async () => {
    const { accountHash, ids, send } = await bareWorkflows(8, 2);
    const outcomes = await Promise.all(ids.map((id) => new RecoveryStore().reserveAccountSend(t.s.database.db, accountHash, id, 'email_code', send)));
    expect(outcomes.filter((o) => o === 'reserved')).toHaveLength(2);
    expect(outcomes.filter((o) => o === 'budget_spent')).toHaveLength(6);
    expect(await new RecoveryStore().accountSends(t.s.database.db, accountHash, 'email_code', send.since)).toBe(2);
  });

  it('threat: two nodes reserving at once: a reservation reads the account\'s budget only once another one under way (holding the account\'s lock) has committed', async () => {
    const { accountHash, ids, send } = await bareWorkflows(2, 2);
    const store = new RecoveryStore();
    const db = t.s.database.db;
    let pending: Promise<string> | undefined;
    await db.transaction().execute(async (trx) => {
      // Another node's reservation, under way: it holds the account's lock and spends the whole budget before it commits.
      await store.lockBudget(trx, accountHash, 'email_code');
      await trx.updateTable('recovery_proofs').set({ sends: 2, last_sent_at: send.now }).where('workflow_id', '=', ids[0]!).where('proof', '=', 'email_code').execute();
      pending = store.reserveAccountSend(db, accountHash, ids[1]!, 'email_code', send);
      await new Promise((resolve) => setTimeout(resolve, 100)); // room for the other reservation to read the budget, were it not waiting (not a timing assertion)
    });
    expect(await pending).toBe('budget_spent');
  });

  it('threat: timing tells a made-up account from a real one: a decoy\'s code request runs the same statements (a code row under its challenge, nothing can match it) and delivers nothing', async () => {
    await seedUser(t.s, 'trace.real', { email: 'trace.real@bank.example' });
    const [real, decoy] = await Promise.all([start('trace.real@bank.example'), start('trace.ghost@bank.example')]);
    expect([(await workflow(real)).decoy, (await workflow(decoy)).decoy]).toEqual([false, true]);
    const db = t.s.database.db;
    const trace = async (id: string) => {
      const wf = await workflow(id);
      const codes = await db.selectFrom('mfa_otp_codes').select(['user_id', 'purpose', 'method', 'delivery_status', 'superseded_at', 'consumed_at'])
        .where('challenge', '=', `recovery:${wf.id}:email_code`).orderBy('created_at').execute();
      return { codes, sends: (await proofRow(id, 'email_code')).sends, audited: (await audited(id, 'RECOVERY_CODE_SENT')).length };
    };
    for (const id of [real, decoy]) ok(await verify(id, { proof: 'email_code' }));
    t.clock.advance(MINUTE);
    for (const id of [real, decoy]) ok(await verify(id, { proof: 'email_code' })); // a second code supersedes the first, alike
    const [a, b] = [await trace(real), await trace(decoy)];
    // The same rows in the same tables: two codes (the first superseded), two sends, two audit rows.
    expect({ ...b, codes: b.codes.map((c) => ({ ...c, user_id: 'x', delivery_status: 'x' })) }).toEqual({ ...a, codes: a.codes.map((c) => ({ ...c, user_id: 'x', delivery_status: 'x' })) });
    expect(a.codes).toHaveLength(2);
    expect(a.codes.map((c) => c.superseded_at === null)).toEqual([false, true]);
    // What differs is what nobody sees: the decoy's rows name no account and stay queued, for nothing is delivered.
    expect(b.codes.map((c) => [c.user_id, c.delivery_status])).toEqual([[null, 'queued'], [null, 'queued']]);
    expect(a.codes.map((c) => c.delivery_status)).toEqual(['sent', 'sent']);
    expect(await r.outboxCount('trace.ghost@bank.example')).toBe(0);
    // And nothing can match the decoy's code: a guess is compared and refused, its attempt spent.
    expectError(await verify(decoy, { proof: 'email_code', code: '000000' }), 401, 'RECOVERY_PROOF_INVALID');
    const live = await db.selectFrom('mfa_otp_codes').select('attempts').where('challenge', '=', `recovery:${(await workflow(decoy)).id}:email_code`).where('superseded_at', 'is', null).executeTakeFirstOrThrow();
    expect(live.attempts).toBe(1);
  });

  it('threat: a SIM-swapped phone alone never reaches verified; and lost factors do not take the phone at all', async () => {
    const phone = '+254700200005';
    await seedUser(t.s, 'sim.victim', { email: 'victim@bank.example', phone });
    await withAnswers('sim.victim', ['Simba', 'Mrs Wanjiru', 'Kisumu']);
    const id = await start(phone);
    ok(await verify(id, { proof: 'sms_code' }));
    const half = ok(await verify(id, { proof: 'sms_code', code: await codeTo(phone) }));
    expect(half).toMatchObject({ state: 'verifying', proofs: { given: ['sms_code'], needed: 1 } });
    expect(half.reset_token).toBeUndefined();
    const asked = ok(await verify(id, { proof: 'security_questions' })).questions as Array<{ id: string }>;
    for (let i = 0; i < 3; i++) {
      const res = await verify(id, { proof: 'security_questions', answers: asked.map((q) => ({ question_id: q.id, answer: `guess ${i}` })) });
      expectError(res, 401, 'RECOVERY_PROOF_INVALID');
    }
    const after = ok(await status(id));
    expect(after.state).toBe('verifying');
    expect(after.reset_token).toBeUndefined();
    expectError(await verify(id, { proof: 'security_questions' }), 429, 'RECOVERY_PROOF_LOCKED');

    const mfa = await start(phone, 'mfa');
    expect(withoutRequestId(expectError(await verify(mfa, { proof: 'sms_code' }), 400, 'RECOVERY_PROOF_NOT_OFFERED').details)).toEqual({ proof: 'sms_code', options: ['password', 'email_code', 'security_questions', 'branch_approval'] });
  });

  it('threat: cancelling and starting again buys no more security-answer guesses (the account\'s counter outlives the workflow)', async () => {
    await seedUser(t.s, 'restart.user', { email: 'restart@bank.example' });
    const answers = await withAnswers('restart.user', ['Tembo', 'Mombasa', 'Blue']);
    const first = await start('restart.user');
    ok(await verify(first, { proof: 'email_code' }));
    ok(await verify(first, { proof: 'email_code', code: await codeTo('restart@bank.example') }));
    const asked = ok(await verify(first, { proof: 'security_questions' })).questions as Array<{ id: string }>;
    for (let i = 0; i < 3; i++) expectError(await verify(first, { proof: 'security_questions', answers: asked.map((q) => ({ question_id: q.id, answer: `guess ${i}` })) }), 401, 'RECOVERY_PROOF_INVALID');
    ok(await cancel(first));

    const second = await start('restart.user');
    ok(await verify(second, { proof: 'email_code' }));
    ok(await verify(second, { proof: 'email_code', code: await codeTo('restart@bank.example') }));
    expect(ok(await verify(second, { proof: 'security_questions' })).questions).toEqual(asked); // no shopping for other questions
    const right = asked.map((q) => ({ question_id: q.id, answer: answers.get(q.id)! }));
    const refused = expectError(await verify(second, { proof: 'security_questions', answers: right }), 429, 'RECOVERY_PROOF_LOCKED');
    expect(withoutRequestId(refused.details)).toEqual({ proof: 'security_questions', attempts_left: 3, retry_after_seconds: 30 * 60 });
    // Once the counter's lock ends (SECURITY_QUESTION_LOCKOUT_MINUTES), the owner gets through.
    t.clock.advance(30 * MINUTE);
    const third = await start('restart.user');
    ok(await verify(third, { proof: 'email_code' }));
    ok(await verify(third, { proof: 'email_code', code: await codeTo('restart@bank.example') }));
    ok(await verify(third, { proof: 'security_questions' }));
    expect(ok(await verify(third, { proof: 'security_questions', answers: right })).state).toBe('completed');
  });

  it('threat: a proof outside the matrix is 400 RECOVERY_PROOF_NOT_OFFERED; one the customer cannot give is 422', async () => {
    const id = await start('whoever.user', 'mfa');
    expectError(await verify(id, { proof: 'totp', code: '123456' }), 400, 'RECOVERY_PROOF_NOT_OFFERED');
    expectError(await verify(id, { proof: 'pin', pin: '2580' }), 400, 'RECOVERY_PROOF_NOT_OFFERED');
    expectError(await verify(id, { proof: 'branch_approval' }), 422, 'VALIDATION_ERROR');
    expectError(await verify(id, { proof: 'password' }), 422, 'VALIDATION_ERROR');
    expectError(await verify(id, { proof: 'email_code', password: 'x' }), 422, 'VALIDATION_ERROR');
  });

  it('threat: a forged recovery_id is 404 RECOVERY_NOT_FOUND on every route; a malformed one is 422', async () => {
    const forged = `rcv_${Buffer.alloc(32, 7).toString('base64url')}`;
    for (const res of [await status(forged), await verify(forged, { proof: 'email_code' }), await cancel(forged)]) expectError(res, 404, 'RECOVERY_NOT_FOUND');
    expectError(await status('rcv_short'), 422, 'VALIDATION_ERROR');
  });

  it.each([
    ['SQL', '\' OR 1=1 --', 202],
    ['LDAP filter', '*)(uid=*))(|(uid=*', 202],
    ['NUL', 'adm\u0000in', 422],
    ['very long', 'a'.repeat(10_000), 422],
    ['unicode', 'Ａｍｉｎａ\u200b', 202],
    ['phone-like junk', '+0000000', 202],
  ])('threat: a hostile identifier (%s) is answered, never a 500', async (_name, identifier, expected) => {
    const res = await initiate(identifier as string);
    expect(res.statusCode, res.body).toBe(expected);
    if (expected === 422) expectError(res, 422, 'VALIDATION_ERROR');
    else expect((await workflow((res.json() as Body).recovery_id!)).decoy).toBe(true);
  });

  it('threat: wrong answers count toward the route group\'s rate limit too (per recovery_id): 429 RATE_LIMITED', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_RECOVERY_ACCOUNT: '3/15m' }, clock: new ManualClock(Date.UTC(2026, 2, 4, 9, 0, 0)) });
    try {
      const id = ok(await initiate('rate.someone', 'password', {}, limited.app), 202).recovery_id!;
      ok(await verify(id, { proof: 'email_code' }, limited.app));
      expectError(await verify(id, { proof: 'email_code', code: '000000' }, limited.app), 401, 'RECOVERY_PROOF_INVALID');
      expectError(await verify(id, { proof: 'email_code', code: '000001' }, limited.app), 401, 'RECOVERY_PROOF_INVALID');
      const limitedRes = await verify(id, { proof: 'email_code', code: '000002' }, limited.app);
      expectError(limitedRes, 429, 'RATE_LIMITED');
      expect(Number(limitedRes.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});
