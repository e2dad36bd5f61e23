/**
 * Account recovery (issue 27): the matrix a workflow is judged by, on both databases. A workflow
 * keeps the alternatives it started with when the bank changes RECOVERY_PROOFS_* and restarts
 * (a second app on the same database, the same keys); a lost password whose last proof is an
 * operator's approval waits `verified` for the holder of the `recovery_id`, who collects the
 * reset token once (never the operator); and a workflow asks 3 security questions when
 * RECOVERY_SECURITY_QUESTIONS is 3. Codes come from the development outbox; the clock is frozen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { DatabaseHandle } from '../../src/platform/db/database.js';
import { createTestApp, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, OTHER_PASSWORD, seedUser, signIn } from '../harness/fixtures.js';
import { ok, recovery } from '../harness/recovery.js';

let t: TestApp;
const r = recovery(() => t);

describe('a workflow keeps the matrix it started with', () => {
  let database: DatabaseHandle;
  const secrets = testSecrets();
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 9, 0, 0));
  const node = (matrix: string) => createTestApp({ database, secrets, clock, env: { RECOVERY_PROOFS_PASSWORD: matrix } });

  beforeAll(async () => {
    database = await openTestDatabase();
    t = await node('email_code+sms_code');
  });
  afterAll(async () => {
    await t?.closeApp();
    await database?.close();
  });

  it('the bank changes RECOVERY_PROOFS_PASSWORD and restarts: an open workflow still needs what it was told, a new one the new matrix', async () => {
    await seedUser(t.s, 'kept.matrix', { email: 'kept@bank.example', phone: '+254700400001' });
    const id = await r.start('kept.matrix');
    ok(await r.verify(id, { proof: 'email_code' }));
    expect(ok(await r.verify(id, { proof: 'email_code', code: await r.codeTo('kept@bank.example') })).proofs).toMatchObject({ given: ['email_code'], needed: 1, alternatives: [['email_code', 'sms_code']] });

    await t.closeApp();
    t = await node('email_code+security_questions');
    expect(ok(await r.status(id)).proofs).toMatchObject({ given: ['email_code'], needed: 1, alternatives: [['email_code', 'sms_code']] });
    expectError(await r.verify(id, { proof: 'security_questions' }), 400, 'RECOVERY_PROOF_NOT_OFFERED');
    ok(await r.verify(id, { proof: 'sms_code' }));
    const done = ok(await r.verify(id, { proof: 'sms_code', code: await r.codeTo('+254700400001') }));
    expect(done).toMatchObject({ state: 'completed', reset_with: '/api/v1/auth/reset/password' });
    expect(done.reset_token).toEqual(expect.any(String));

    // A workflow started now is judged by the new matrix; one written before workflows kept theirs, by the configuration.
    const fresh = await r.start('kept.matrix');
    expect(ok(await r.status(fresh)).proofs.alternatives).toEqual([['email_code', 'security_questions']]);
    await t.s.database.db.updateTable('recovery_workflows').set({ alternatives: null }).where('id', '=', (await r.workflow(fresh)).id).execute();
    expect(ok(await r.status(fresh)).proofs.alternatives).toEqual([['email_code', 'security_questions']]);
  });
});

describe('an operator\'s approval given last: the holder collects the reset token', () => {
  let officer: string;
  beforeAll(async () => {
    t = await createTestApp({
      env: { RECOVERY_PROOFS_PASSWORD: 'sms_code+branch_approval|email_code+sms_code', RECOVERY_SECURITY_QUESTIONS: '3', RECOVERY_PROOFS_MFA: 'email_code+security_questions+password' },
      clock: new ManualClock(Date.UTC(2026, 2, 11, 9, 0, 0)),
    });
    officer = (await r.branchOfficer('officer.last')).token;
  });
  afterAll(async () => t?.close());

  it('the operator\'s answer carries no token; the next status by the holder does, once (audited), and it resets the password', async () => {
    const phone = '+254700400002';
    const user = await seedUser(t.s, 'branch.last', { phone });
    const session = await signIn(t.app, 'branch.last');
    const started = ok(await r.initiate(phone, 'password'), 202);
    const id = started.recovery_id!;
    ok(await r.verify(id, { proof: 'sms_code' }));
    expect(ok(await r.verify(id, { proof: 'sms_code', code: await r.codeTo(phone) })).state).toBe('verifying');

    const decided = ok(await r.approve(started.reference!, officer));
    expect(decided).toEqual({ reference: started.reference, lost: 'password', state: 'verified', proofs: { given: ['sms_code', 'branch_approval'], needed: 0 } });
    expect(JSON.stringify(decided)).not.toContain('reset_token');
    expect((await r.audited(id, 'RECOVERY_VERIFIED')).map((a) => a.details.by)).toEqual(['operator']);
    expect(await r.audited(id, 'RECOVERY_COMPLETED')).toEqual([]);
    expect((await login(t.app, 'branch.last')).statusCode).toBe(200); // nothing ended yet

    // Two status calls at once: one collects the token, the other sees the workflow completed.
    const both = await Promise.all([r.status(id), r.status(id)]);
    const bodies = both.map((b) => ok(b));
    const withToken = bodies.filter((b) => b.reset_token !== undefined);
    expect(withToken).toHaveLength(1);
    expect(withToken[0]).toMatchObject({ state: 'completed', reset_with: '/api/v1/auth/reset/password', reset_token_expires_in: 600 });
    expect(bodies.map((b) => b.state)).toEqual(['completed', 'completed']);
    expect(ok(await r.status(id)).reset_token).toBeUndefined();
    expectError(await r.verify(id, { proof: 'sms_code' }), 409, 'RECOVERY_STALE');
    expect((await r.audited(id, 'RECOVERY_COMPLETED')).map((a) => [a.user_id, a.details.by])).toEqual([[user.uuid, 'holder']]);
    expectError(await r.post('/api/v1/auth/validate', {}, bearer(session.access_token)), 401, 'SESSION_INVALID');

    ok(await r.post('/api/v1/auth/reset/password', { reset_token: withToken[0]!.reset_token, new_password: OTHER_PASSWORD }));
    expect((await login(t.app, 'branch.last', OTHER_PASSWORD)).statusCode).toBe(200);
  });

  it('verify-identity by the holder collects it too; the approval first and the holder\'s code last hands it out at once', async () => {
    const phone = '+254700400003';
    await seedUser(t.s, 'branch.first', { phone });
    const started = ok(await r.initiate(phone, 'password'), 202);
    const id = started.recovery_id!;
    ok(await r.approve(started.reference!, officer));
    ok(await r.verify(id, { proof: 'sms_code' }));
    const done = ok(await r.verify(id, { proof: 'sms_code', code: await r.codeTo(phone) }));
    expect(done).toMatchObject({ state: 'completed', reset_with: '/api/v1/auth/reset/password' });
    expect(done.reset_token).toEqual(expect.any(String));

    const other = '+254700400004';
    await seedUser(t.s, 'branch.verify', { phone: other });
    const second = ok(await r.initiate(other, 'password'), 202);
    ok(await r.verify(second.recovery_id!, { proof: 'sms_code' }));
    ok(await r.verify(second.recovery_id!, { proof: 'sms_code', code: await r.codeTo(other) }));
    ok(await r.approve(second.reference!, officer));
    const collected = ok(await r.verify(second.recovery_id!, { proof: 'email_code' }));
    expect(collected).toMatchObject({ state: 'completed', reset_with: '/api/v1/auth/reset/password' });
    expect(collected.reset_token).toEqual(expect.any(String));
  });

  it('RECOVERY_SECURITY_QUESTIONS=3: a workflow asks three of the account\'s questions, and all three answers verify it', async () => {
    await seedUser(t.s, 'three.questions', { email: 'three@bank.example' });
    const answers = await r.withAnswers('three.questions', ['Simba', 'Kisumu', 'Blue']);
    const id = await r.start('three.questions', 'mfa');
    ok(await r.verify(id, { proof: 'email_code' }));
    ok(await r.verify(id, { proof: 'email_code', code: await r.codeTo('three@bank.example') }));
    const asked = ok(await r.verify(id, { proof: 'security_questions' })).questions as Array<{ id: string }>;
    expect(asked.map((q) => q.id).sort()).toEqual([...answers.keys()].sort());
    const two = asked.slice(0, 2).map((q) => ({ question_id: q.id, answer: answers.get(q.id)! }));
    expectError(await r.verify(id, { proof: 'security_questions', answers: two }), 422, 'SECURITY_ANSWERS_MISMATCH');
    expect(ok(await r.verify(id, { proof: 'security_questions', answers: asked.map((q) => ({ question_id: q.id, answer: answers.get(q.id)! })) })).proofs.given).toEqual(['email_code', 'security_questions']);
  });
});
