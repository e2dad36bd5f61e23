/**
 * Account recovery, phase 2 (issue 27): a branch's approval, four eyes, on both databases. A
 * customer who lost their phone (`mfa`) reads their workflow's reference to an operator, who
 * checks an identity document and approves; the password then verifies the workflow. Threats,
 * each named, with exact statuses and codes. The clock is frozen.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { answerWithoutRequestId } from '../harness/request-id.js';
import { ok, recovery } from '../harness/recovery.js';

let t: TestApp;
let officerA: string;
let officerB: string;
let officerAId: string;
let clerk: string;
let n = 0;

const rc = recovery(() => t);
const { post, initiate, verify, status, approve } = rc;
const reject = (reference: string, token: string) => post(`/api/v1/admin/recoveries/${reference}/reject`, { reason: 'The document did not match.' }, bearer(token));
const find = (query: string, token: string) => t.app.inject({ method: 'GET', url: `/api/v1/admin/recoveries?${query}`, headers: bearer(token) });

/** A customer with a lost phone: an `mfa` workflow started by them (or by `operator`); its handle and reference. */
async function lostPhone(operator?: string): Promise<{ id: string; reference: string; user: { uuid: string; username: string } }> {
  const user = await seedUser(t.s, `lost.phone.${++n}`, { email: `lost.${n}@bank.example`, phone: `+25470010${String(n).padStart(4, '0')}` });
  const started = ok(await initiate(user.username, 'mfa', operator ? bearer(operator) : {}), 202);
  expect(started.reference).toMatch(/^[2-9A-HJKMNP-Z]{8}$/);
  return { id: started.recovery_id as string, reference: started.reference!, user };
}

async function auditOf(event: string, reference: string): Promise<Array<{ status: string; user_id: string | null; details: Record<string, unknown> }>> {
  const wf = await t.s.database.db.selectFrom('recovery_workflows').select('id').where('reference', '=', reference).executeTakeFirstOrThrow();
  const rows = await t.s.database.db.selectFrom('audit_log').select(['status', 'user_id', 'details']).where('event_type', '=', event)
    .where(sql<boolean>`details->>'workflow_id' = ${wf.id}`).execute();
  return rows as Array<{ status: string; user_id: string | null; details: Record<string, unknown> }>;
}

beforeAll(async () => {
  t = await createTestApp({ clock: new ManualClock(Date.UTC(2026, 2, 4, 9, 0, 0)) });
  ({ uuid: officerAId, token: officerA } = await rc.branchOfficer('officer.a'));
  officerB = (await rc.branchOfficer('officer.b')).token;
  await seedUser(t.s, 'plain.clerk', { roles: ['staff'] });
  clerk = (await signIn(t.app, 'plain.clerk')).access_token;
});
afterAll(async () => t?.close());

describe('a lost phone through a branch approval and the password', () => {
  it('the operator finds the workflow by its reference, approves after the document, and the password verifies it', async () => {
    const { id, reference, user } = await lostPhone();
    const listed = ok(await find(`reference=${reference.toLowerCase().slice(0, 4)}-${reference.slice(4)}`, officerA)).recoveries as Array<Record<string, unknown>>;
    expect(listed).toEqual([expect.objectContaining({
      reference, lost: 'mfa', state: 'initiated', user: { id: user.uuid, username: user.username, full_name: null },
      contacts: { email: `l***@bank.example`, phone: expect.stringMatching(/^\+2547\*\*\*\*\d\d$/) },
      proofs: { given: [], with_approval: [['password', 'branch_approval']] }, initiated_by: null,
    })]);
    expect(ok(await find(`user_id=${user.uuid}`, officerA)).recoveries).toEqual(listed);

    // Knowledge waits for the approval (a possession proof).
    expectError(await verify(id, { proof: 'password', password: STRONG_PASSWORD }), 400, 'RECOVERY_INVALID_STATE');
    expect(ok(await approve(reference, officerA))).toEqual({ reference, lost: 'mfa', state: 'verifying', proofs: { given: ['branch_approval'], needed: 1 } });
    expect(ok(await find(`reference=${reference}`, officerA)).recoveries).toEqual([]); // no longer waiting
    expect(ok(await status(id))).toMatchObject({ state: 'verifying', proofs: { given: ['branch_approval'], needed: 1 } });

    expect(ok(await verify(id, { proof: 'password', password: STRONG_PASSWORD }))).toMatchObject({ state: 'waiting', proofs: { needed: 0 } });
    expect(ok(await status(id)).reference).toBeUndefined(); // nothing left to approve

    const [approved] = await auditOf('RECOVERY_BRANCH_APPROVED', reference);
    expect(approved).toMatchObject({ status: 'SUCCESS', user_id: user.uuid, details: { operator_id: officerAId, operator_username: 'officer.a', document_type: 'national_id', document_number_last4: '4821' } });
  });

  it('a rejection ends the workflow (audited with the operator and the reason)', async () => {
    const { id, reference } = await lostPhone();
    expect(ok(await reject(reference, officerB))).toMatchObject({ reference, state: 'rejected' });
    expect(ok(await status(id)).state).toBe('rejected');
    expectError(await approve(reference, officerA), 409, 'RECOVERY_STALE');
    expect((await auditOf('RECOVERY_BRANCH_REJECTED', reference))[0]).toMatchObject({ status: 'SUCCESS', details: { operator_username: 'officer.b', reason: 'The document did not match.' } });
  });

  it('a lost password takes no branch approval: no reference is shown', async () => {
    const user = await seedUser(t.s, 'no.branch', { email: 'no.branch@bank.example' });
    expect(ok(await initiate(user.username, 'password'), 202).reference).toBeUndefined();
  });
});

describe('threats', () => {
  it('threat: an operator approving a workflow they started themselves at the desk (403 RECOVERY_FOUR_EYES, audited); another operator may', async () => {
    const { reference } = await lostPhone(officerA);
    const listed = ok(await find(`reference=${reference}`, officerB)).recoveries as Array<Record<string, unknown>>;
    expect(listed[0]!.initiated_by).toEqual({ id: officerAId, username: 'officer.a' });
    expect(expectError(await approve(reference, officerA), 403, 'RECOVERY_FOUR_EYES').details).toMatchObject({ reason: 'started_by_you' });
    expectError(await reject(reference, officerA), 403, 'RECOVERY_FOUR_EYES');
    expect((await auditOf('RECOVERY_BRANCH_APPROVED', reference)).map((r) => r.status)).toEqual(['FAILURE']);
    expect(ok(await approve(reference, officerB)).proofs.given).toEqual(['branch_approval']);
  });

  it('threat: an operator starting a password or PIN recovery at the desk would hold its reset token: 422 VALIDATION_ERROR naming lost, nothing started', async () => {
    const user = await seedUser(t.s, `desk.pw.${++n}`, { email: `desk.${n}@bank.example` });
    const before = await t.s.database.db.selectFrom('recovery_workflows').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    for (const lost of ['password', 'pin']) {
      const res = await initiate(user.username, lost, bearer(officerA));
      expectError(res, 422, 'VALIDATION_ERROR');
      expect(res.json().details.fields).toMatchObject([{ field: 'lost' }]);
    }
    const after = await t.s.database.db.selectFrom('recovery_workflows').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('threat: an operator approving their own account\'s workflow (403 RECOVERY_FOUR_EYES)', async () => {
    const started = ok(await initiate('officer.a', 'mfa'), 202);
    expect(expectError(await approve(started.reference!, officerA), 403, 'RECOVERY_FOUR_EYES').details).toMatchObject({ reason: 'own_account' });
    expect(ok(await status(started.recovery_id as string)).proofs.given).toEqual([]);
  });

  it('threat: an approver without recovery.approve (403 PERMISSION_DENIED), at the desk too', async () => {
    const { reference } = await lostPhone();
    expect(expectError(await approve(reference, clerk), 403, 'PERMISSION_DENIED').details).toMatchObject({ required_permission: 'recovery.approve' });
    expectError(await find(`reference=${reference}`, clerk), 403, 'PERMISSION_DENIED');
    expectError(await initiate('officer.b', 'mfa', bearer(clerk)), 403, 'PERMISSION_DENIED');
  });

  it('threat: the reference of a decoy, or a forged one, answers 404 with the same body as an unknown one', async () => {
    const unknown = ok(await initiate('nobody.here', 'mfa'), 202);
    expect(unknown.reference).toMatch(/^[2-9A-HJKMNP-Z]{8}$/); // a decoy shows one, as a real workflow does
    const closed = await seedUser(t.s, 'closed.account', { email: 'closed@bank.example' });
    await t.s.database.db.updateTable('users').set({ is_active: false }).where('id', '=', closed.id).execute();
    const second = ok(await initiate(closed.username, 'mfa'), 202); // a disabled account: a decoy
    const bodies = [];
    for (const ref of [unknown.reference!, second.reference!, 'ZZZZ2222', 'not-a-ref']) {
      const res = await approve(ref, officerA);
      expectError(res, 404, 'RECOVERY_NOT_FOUND');
      bodies.push(answerWithoutRequestId(res));
      expect(ok(await find(`reference=${ref}`, officerA)).recoveries).toEqual([]);
    }
    for (const b of bodies) expect(b).toEqual(bodies[0]);
  });

  it('threat: two operators approving at once: one approval recorded, the other 409', async () => {
    const { reference } = await lostPhone();
    const both = await Promise.all([approve(reference, officerA), approve(reference, officerB)]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expectError(both.find((r) => r.statusCode === 409)!, 409, 'RECOVERY_PROOF_ALREADY_GIVEN');
    expect((await auditOf('RECOVERY_BRANCH_APPROVED', reference)).filter((r) => r.status === 'SUCCESS')).toHaveLength(1);
  });
});
