/**
 * Account recovery, phase 1 (issue 27), end to end on both databases: a lost password through
 * a code emailed over real SMTP plus security answers, then the new password; a USSD
 * subscriber's lost PIN through a text-message code plus the password, then the new PIN; lost
 * second factors proved up to `verified` and no further; and the jobs that expire workflows and
 * clean them up. The clock is frozen; background deliveries are awaited, never slept on.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { MINUTE, ok, recovery } from '../harness/recovery.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';

const GATEWAY_KEY = 'ussd-a-key-0123456789abcdef0123456789abcdef';

let t: TestApp;
let smtp: TestSmtp;
const r = recovery(() => t);
const { post, initiate, verify, status, withAnswers, eventsOf } = r;
const mailedCode = (address: string): Promise<string> => r.mailedCode(smtp, address);

beforeAll(async () => {
  smtp = await startSmtp();
  t = await createTestApp({
    env: { SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>', USSD_GATEWAY_KEYS: `ussd-a:${GATEWAY_KEY}` },
    clock: new ManualClock(Date.UTC(2026, 2, 2, 9, 0, 0)),
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('a lost password: an emailed code plus security answers', () => {
  it('hands out a reset token once, ends every session, and the new password signs in', async () => {
    const user = await seedUser(t.s, 'amina.otieno', { email: 'Amina@bank.example' });
    const answers = await withAnswers('amina.otieno', ['Simba', 'Mrs Wanjiru', 'Kisumu']);
    const sessions = [await signIn(t.app, 'amina.otieno'), await signIn(t.app, 'amina.otieno')];

    const started = ok(await initiate('amina.otieno', 'password'), 202);
    const id = started.recovery_id as string;
    expect(id).toMatch(/^rcv_[A-Za-z0-9_-]{43}$/);
    expect(started).toMatchObject({ state: 'initiated', lost: 'password', proofs: { given: [], needed: 2 } });
    expect(started.expires_at).toBe(new Date(t.clock.now() + 30 * MINUTE).toISOString());
    expect(started.proofs.alternatives[1]).toEqual(['email_code', 'security_questions']);
    await t.s.recovery.settled();
    expect(smtp.to('Amina@bank.example').map((m) => m.subject)).toEqual(['Someone started recovering your account']);

    // Knowledge waits for a possession proof.
    expect(expectError(await verify(id, { proof: 'security_questions' }), 400, 'RECOVERY_INVALID_STATE').details).toMatchObject({ reason: 'possession_proof_first' });

    const sent = ok(await verify(id, { proof: 'email_code' }));
    expect(sent.sent).toEqual({ proof: 'email_code', destination: 'the email address on file', expires_in: 300, resend_after: 60 }); // a username was typed: no mask of the account's own
    await t.s.recovery.settled(); // the code is delivered in the background, after the answer
    const mail = smtp.to('Amina@bank.example').at(-1)!;
    expect(mail.subject).toBe('Your account recovery code');
    const half = ok(await verify(id, { proof: 'email_code', code: await mailedCode('Amina@bank.example') }));
    expect(half).toMatchObject({ state: 'verifying', proofs: { given: ['email_code'], needed: 1 } });
    expect(half.reset_token).toBeUndefined();

    const asked = ok(await verify(id, { proof: 'security_questions' })).questions as Array<{ id: string; text: string }>;
    expect(asked).toHaveLength(2);
    expect(ok(await verify(id, { proof: 'security_questions' })).questions).toEqual(asked); // the same questions on every call
    const done = ok(await verify(id, { proof: 'security_questions', answers: asked.map((q) => ({ question_id: q.id, answer: ` ${answers.get(q.id)!.toUpperCase()} ` })) }));
    expect(done).toMatchObject({ state: 'completed', proofs: { given: ['email_code', 'security_questions'], needed: 0 }, reset_with: '/api/v1/auth/reset/password', reset_token_expires_in: 600 });
    expect(typeof done.completed_at).toBe('string');

    // Every session and refresh family of the account ended.
    for (const s of sessions) {
      expectError(await post('/api/v1/auth/validate', {}, bearer(s.access_token)), 401, 'SESSION_INVALID');
      expectError(await post('/api/v1/auth/refresh', { refresh_token: s.refresh_token }), 401, 'TOKEN_REVOKED');
    }
    // The token is handed out once: the status never shows it again.
    const after = ok(await status(id));
    expect(after).toMatchObject({ state: 'completed' });
    expect(after.reset_token).toBeUndefined();

    expect(ok(await post('/api/v1/auth/reset/password', { reset_token: done.reset_token, new_password: OTHER_PASSWORD })).status).toBe('success');
    expectError(await post('/api/v1/auth/reset/password', { reset_token: done.reset_token, new_password: 'Zq8#wLx3!nVb6&' }), 401, 'TOKEN_REVOKED');
    expect((await login(t.app, 'amina.otieno', OTHER_PASSWORD)).statusCode).toBe(200);
    expectError(await login(t.app, 'amina.otieno', STRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');

    await t.s.recovery.settled();
    expect(smtp.to('Amina@bank.example').at(-1)!.subject).toBe('Your account has been recovered');
    expect(await eventsOf(user.uuid)).toEqual([
      'RECOVERY_INITIATED', 'RECOVERY_CODE_SENT', 'RECOVERY_PROOF_PASSED', 'RECOVERY_PROOF_PASSED', 'RECOVERY_VERIFIED', 'RECOVERY_COMPLETED',
    ].sort());
    const trail = JSON.stringify(await t.s.database.db.selectFrom('audit_log').select(['username', 'details']).where('user_id', '=', user.uuid).execute());
    const code = /^Code: (\d{6})$/m.exec(mail.text)![1]!;
    for (const secret of [id, code, 'simba', 'wanjiru', 'kisumu', done.reset_token as string]) expect(trail.toLowerCase()).not.toContain(secret.toLowerCase());
    // Only keyed hashes are stored: neither the handle nor the contact in clear.
    const stored = JSON.stringify(await t.s.database.db.selectFrom('recovery_workflows').selectAll().where('user_id', '=', user.id).execute());
    expect(stored).not.toContain(id);
    expect(stored.toLowerCase()).not.toContain('amina@bank.example');
  });
});

describe('a USSD subscriber\'s lost PIN: a text-message code plus the password', () => {
  it('hands out a PIN reset token, and the new PIN signs in over USSD', async () => {
    const phone = '+254700100011';
    await seedUser(t.s, 'baraka.ussd', { phone });
    const { access_token } = await signIn(t.app, 'baraka.ussd');
    ok(await post('/api/v1/auth/pin', { current_password: STRONG_PASSWORD, new_pin: '2580' }, bearer(access_token)));

    const started = ok(await initiate(phone, 'pin'), 202);
    const id = started.recovery_id as string;
    expect(started.proofs.alternatives).toEqual([['sms_code', 'password'], ['email_code', 'password']]);
    expectError(await verify(id, { proof: 'password', password: STRONG_PASSWORD }), 400, 'RECOVERY_INVALID_STATE');

    expect(ok(await verify(id, { proof: 'sms_code' })).sent).toMatchObject({ proof: 'sms_code', destination: '+2547****11' });
    const code = await r.codeTo(phone);
    expect(ok(await verify(id, { proof: 'sms_code', code })).state).toBe('verifying');
    const done = ok(await verify(id, { proof: 'password', password: STRONG_PASSWORD }));
    expect(done).toMatchObject({ state: 'completed', reset_with: '/api/v1/auth/reset/pin' });
    expectError(await post('/api/v1/auth/validate', {}, bearer(access_token)), 401, 'SESSION_INVALID');

    expect(ok(await post('/api/v1/auth/reset/pin', { reset_token: done.reset_token, new_pin: '7391' })).status).toBe('success');
    const ussd = await post('/api/v1/auth/login/ussd', { phone_number: phone, pin: '7391' }, { 'x-gateway-key': GATEWAY_KEY });
    expect(ussd.statusCode, ussd.body).toBe(200);
  });
});

describe('lost second factors, proved without a branch', () => {
  it('can be proved (password, an emailed code and the answers), then waits out its cooling-off: a branch approval is shown, given by an operator', async () => {
    await seedUser(t.s, 'chege.factors', { email: 'chege@bank.example' });
    const answers = await withAnswers('chege.factors', ['Tembo', 'Mombasa', 'Blue']);
    const started = ok(await initiate('chege@bank.example', 'mfa'), 202);
    const id = started.recovery_id as string;
    expect(started.proofs.options.find((o) => o.proof === 'branch_approval')).toEqual({ proof: 'branch_approval', attempts_left: 3, available: false });
    expectError(await verify(id, { proof: 'sms_code' }), 400, 'RECOVERY_PROOF_NOT_OFFERED');

    ok(await verify(id, { proof: 'email_code' }));
    ok(await verify(id, { proof: 'email_code', code: await mailedCode('chege@bank.example') }));
    ok(await verify(id, { proof: 'password', password: STRONG_PASSWORD }));
    const asked = ok(await verify(id, { proof: 'security_questions' })).questions as Array<{ id: string }>;
    const verified = ok(await verify(id, { proof: 'security_questions', answers: asked.map((q) => ({ question_id: q.id, answer: answers.get(q.id)! })) }));
    expect(verified).toMatchObject({ state: 'waiting', proofs: { needed: 0 }, waiting_until: new Date(t.clock.now() + 24 * 60 * MINUTE).toISOString() });
    expect(verified.reset_token).toBeUndefined();
    expect(expectError(await verify(id, { proof: 'password', password: STRONG_PASSWORD }), 400, 'RECOVERY_INVALID_STATE').details).toMatchObject({ reason: 'already_verified' });
    expect(ok(await status(id)).state).toBe('waiting');
  });
});

describe('the jobs', () => {
  it('expire workflows past RECOVERY_TTL_MINUTES (audited), and delete ended ones after RECORD_RETENTION_DAYS', async () => {
    const user = await seedUser(t.s, 'dalia.expiry', { email: 'dalia@bank.example' });
    const id = ok(await initiate('dalia.expiry', 'password'), 202).recovery_id as string;
    const unknown = ok(await initiate('nobody.at.all', 'password'), 202).recovery_id as string;
    t.clock.advance(30 * MINUTE);
    expect(await t.scheduler.runNow('account recovery expiry')).toBe(true);
    for (const handle of [id, unknown]) expect(ok(await status(handle)).state).toBe('expired');
    expectError(await verify(id, { proof: 'email_code' }), 409, 'RECOVERY_STALE');
    expect(await eventsOf(user.uuid)).toEqual(['RECOVERY_EXPIRED', 'RECOVERY_INITIATED']);
    // A new workflow may start once the old one has lapsed.
    const again = ok(await initiate('dalia.expiry', 'password'), 202).recovery_id as string;
    expect(ok(await verify(again, { proof: 'email_code' })).sent).toMatchObject({ destination: 'the email address on file' });
    await t.s.recovery.settled();

    const count = async (): Promise<number> => Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM recovery_workflows WHERE ended_at IS NOT NULL`.execute(t.s.database.db)).rows[0]!.n);
    const ended = await count();
    expect(ended).toBeGreaterThanOrEqual(2);
    t.clock.advance(89 * 24 * 60 * MINUTE);
    expect(await t.scheduler.runNow('account recovery clean-up')).toBe(true);
    expect(await count()).toBe(ended); // not yet 90 days
    t.clock.advance(2 * 24 * 60 * MINUTE);
    expect(await t.scheduler.runNow('account recovery clean-up')).toBe(true);
    expect(await count()).toBe(0);
    expectError(await status(id), 404, 'RECOVERY_NOT_FOUND');
  });
});
