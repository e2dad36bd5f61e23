/**
 * Account recovery, phase 2 (issue 27): the cooling-off of a recovered second factor, on both
 * databases. A customer who lost their phone proves who they are with a branch's approval and
 * the password; the workflow waits 24 hours (72 for staff) while every contact is told, then
 * completes: every possession factor (here the SMS codes of the lost phone) removed, every session ended, and the next sign-in goes
 * to the forced enrolment (customers must hold a second factor here: MFA_REQUIRED_ROLES). The
 * clock is frozen and moved by hand; background deliveries are awaited, never slept on.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { HOUR, ok, recovery } from '../harness/recovery.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

let t: TestApp;
let smtp: TestSmtp;
let officer: string;
const r = recovery(() => t);
const { post, initiate, verify, status, withAnswers, eventsOf } = r;

/** A customer whose sign-in needs a second factor: codes by SMS to the phone, enrolled through the forced enrolment. */
async function customerWithFactors(username: string, email: string, phone: string) {
  const user = await seedUser(t.s, username, { email, phone });
  const setup = expectError(await login(t.app, username), 403, 'MFA_SETUP_INCOMPLETE').details as { two_factor_token: string };
  ok(await post('/api/v1/2fa/otp/setup', { method: 'sms', two_factor_token: setup.two_factor_token }));
  const code = t.s.otp.outbox.latest(phone)!.code; // sign-in's enrolment code: sent before the answer
  const signed = ok(await post('/api/v1/2fa/otp/verify', { method: 'sms', code, two_factor_token: setup.two_factor_token })) as unknown as { sign_in: { access_token: string; refresh_token: string } };
  return { user, session: signed.sign_in };
}

async function liveSessions(userId: number): Promise<number> {
  const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM sessions WHERE user_id = ${userId} AND is_active`.execute(t.s.database.db);
  return r.rows[0]!.n;
}

beforeAll(async () => {
  smtp = await startSmtp();
  t = await createTestApp({
    env: { SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', MFA_REQUIRED_ROLES: 'customer' },
    clock: new ManualClock(Date.UTC(2026, 2, 5, 9, 0, 0)),
  });
  officer = (await r.branchOfficer('officer.c')).token;
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('a lost phone: branch approval, password, cooling-off, completion', () => {
  it('waits 24 hours with every contact told, then removes the factors, ends every session, and the next sign-in enrols again', async () => {
    const { user, session } = await customerWithFactors('wanjiku.phone', 'wanjiku@bank.example', '+254700200001');
    expect(await t.s.factors.active(user.id)).toEqual(['sms']);
    await withAnswers('wanjiku.phone', ['Simba', 'Nakuru', 'Green']); // knowledge: kept

    const started = ok(await initiate('wanjiku.phone', 'mfa'), 202);
    const id = started.recovery_id as string;
    ok(await post(`/api/v1/admin/recoveries/${started.reference!}/approve`, { document_type: 'passport', document_number_last4: 'K771' }, bearer(officer)));
    const waiting = ok(await verify(id, { proof: 'password', password: STRONG_PASSWORD }));
    const until = new Date(t.clock.now() + 24 * HOUR).toISOString();
    expect(waiting).toMatchObject({ state: 'waiting', waiting_until: until, expires_at: until, proofs: { needed: 0 } });
    expect((await post('/api/v1/auth/validate', {}, bearer(session.access_token))).statusCode).toBe(200); // nothing ends yet
    await t.s.recovery.settled();
    const notice = smtp.to('wanjiku@bank.example').at(-1)!;
    expect(notice.subject).toBe('Your account will be recovered unless you stop it');
    expect(notice.text).toContain(`${until.slice(0, 10)} ${until.slice(11, 16)} (UTC)`);

    // Nothing changes during the cooling-off: the factors stay and the session lives.
    t.clock.advance(24 * HOUR - 60_000);
    expect(await t.scheduler.runNow('account recovery completion')).toBe(true);
    expect(ok(await status(id)).state).toBe('waiting');
    expect(await t.s.factors.active(user.id)).toEqual(['sms']);
    expect(await liveSessions(user.id)).toBe(1);

    t.clock.advance(60_000);
    expect(await t.scheduler.runNow('account recovery completion')).toBe(true);
    const done = ok(await status(id));
    expect(done).toMatchObject({ state: 'completed', completed_at: new Date(t.clock.now()).toISOString() });
    expect(done.waiting_until).toBeUndefined();
    expect(await t.s.factors.active(user.id)).toEqual([]);
    const backup = await sql<{ n: number }>`SELECT count(*)::int AS n FROM mfa_backup_codes WHERE user_id = ${user.id}`.execute(t.s.database.db);
    expect(backup.rows[0]!.n).toBe(0);
    const answers = await sql<{ n: number }>`SELECT count(*)::int AS n FROM user_security_answers WHERE user_id = ${user.id}`.execute(t.s.database.db);
    expect(answers.rows[0]!.n).toBe(3);
    expect(await liveSessions(user.id)).toBe(0);
    expectError(await post('/api/v1/auth/refresh', { refresh_token: session.refresh_token }), 401, 'TOKEN_REVOKED');
    expectError(await login(t.app, 'wanjiku.phone'), 403, 'MFA_SETUP_INCOMPLETE');

    await t.s.recovery.settled();
    expect(smtp.to('wanjiku@bank.example').at(-1)!.subject).toBe('Your account has been recovered');
    expect(await eventsOf(user.uuid)).toEqual([
      'RECOVERY_INITIATED', 'RECOVERY_PROOF_PASSED', 'RECOVERY_BRANCH_APPROVED', 'RECOVERY_PROOF_PASSED', 'RECOVERY_VERIFIED', 'RECOVERY_WAITING', 'RECOVERY_COMPLETED',
    ].sort());
    // The job found nothing more to do: it completes once.
    expect(await t.s.recovery.completeDue()).toBe(0);
  });

  it('threat: a staff account is not recovered self-service: its lost factors need a branch\'s approval, then it waits RECOVERY_COOLING_OFF_HOURS_STAFF (72), and a status call past it completes the workflow without the job', async () => {
    const staff = await seedUser(t.s, 'njeri.staff', { email: 'njeri@bank.example', roles: ['staff'] });
    const answers = await withAnswers('njeri.staff', ['Tembo', 'Eldoret', 'Red']);
    const id = ok(await initiate('njeri.staff', 'mfa'), 202).recovery_id as string;
    ok(await verify(id, { proof: 'email_code' }));
    ok(await verify(id, { proof: 'email_code', code: await r.mailedCode(smtp, 'njeri@bank.example') }));
    ok(await verify(id, { proof: 'password', password: STRONG_PASSWORD }));
    const asked = ok(await verify(id, { proof: 'security_questions' })).questions as Array<{ id: string }>;
    // Staff: the code, the password and the answers are not enough; only a branch's approval verifies.
    const selfService = ok(await verify(id, { proof: 'security_questions', answers: asked.map((q) => ({ question_id: q.id, answer: answers.get(q.id)! })) }));
    expect(selfService.state).toBe('verifying');
    const reference = ok(await status(id)).reference as string;
    const officerNow = (await signIn(t.app, 'officer.c')).access_token; // the earlier test moved the clock past the first token
    const approved = await post(`/api/v1/admin/recoveries/${reference}/approve`, { document_type: 'national_id', document_number_last4: '4821' }, bearer(officerNow));
    expect(approved.statusCode, approved.body).toBe(200);
    const waiting = ok(await status(id));
    expect(waiting).toMatchObject({ state: 'waiting', waiting_until: new Date(t.clock.now() + 72 * HOUR).toISOString() });
    const wf = await t.s.database.db.selectFrom('recovery_workflows').select('cooling_off_hours').where('user_id', '=', staff.id).where('decoy', '=', false).executeTakeFirstOrThrow();
    expect(wf.cooling_off_hours).toBe(72);
    t.clock.advance(72 * HOUR);
    expect(ok(await status(id)).state).toBe('completed');
  });
});
