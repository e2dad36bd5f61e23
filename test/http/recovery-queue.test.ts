/**
 * The branch queue of account recovery (`GET /api/v1/admin/recoveries` with neither `reference`
 * nor `user_id`): every workflow waiting for a branch's approval, oldest first, paged by an opaque
 * keyset cursor on (created_at, id), on both databases (the cursor's time is the database's own,
 * to the microsecond). Workflows that ended, expired, were approved already, take no branch
 * approval or name no real account are never listed. Threats, each named, with exact statuses and
 * codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { MINUTE, ok, recovery } from '../harness/recovery.js';

let t: TestApp;
let officer: string;
let clerk: string;
let n = 0;
const clock = new ManualClock(Date.UTC(2026, 2, 4, 9, 0, 0));

const rc = recovery(() => t);
const { initiate, cancel, approve } = rc;
const find = (query: string, token: string) => t.app.inject({ method: 'GET', url: `/api/v1/admin/recoveries${query === '' ? '' : `?${query}`}`, headers: bearer(token) });

interface Page { recoveries: Array<{ reference: string; lost: string; user: { username: string } }>; next_cursor: string | null }

/** An `mfa` workflow (a lost phone) of a new customer: its handle and reference. */
async function lostPhone(lost = 'mfa'): Promise<{ id: string; reference: string }> {
  const user = await seedUser(t.s, `queue.customer.${++n}`, { email: `queue.${n}@bank.example` });
  const started = ok(await initiate(user.username, lost), 202);
  return { id: started.recovery_id!, reference: started.reference ?? '' };
}

/** Every page of the queue at `limit`, in order. */
async function wholeQueue(limit: number): Promise<{ pages: Page[]; references: string[] }> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const page = ok(await find(`limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, officer)) as unknown as Page;
    pages.push(page);
    cursor = page.next_cursor;
  } while (cursor !== null && pages.length < 50);
  return { pages, references: pages.flatMap((p) => p.recoveries.map((r) => r.reference)) };
}

beforeAll(async () => {
  t = await createTestApp({ clock });
  officer = (await rc.branchOfficer('queue.officer')).token;
  await seedUser(t.s, 'queue.clerk', { roles: ['staff'] });
  clerk = (await signIn(t.app, 'queue.clerk')).access_token;
});
afterAll(async () => t?.close());

describe('the queue of recoveries waiting for a branch', () => {
  it('pages over every waiting workflow, oldest first: none twice, none missed; ended, expired, approved, branchless and decoy workflows are not listed', async () => {
    const waiting: string[] = [];
    // Three at the same instant (the id orders them), then one a minute for four minutes.
    for (let i = 0; i < 3; i++) waiting.push((await lostPhone()).reference);
    for (let i = 0; i < 4; i++) {
      clock.advance(MINUTE);
      waiting.push((await lostPhone(i % 2 === 0 ? 'mfa' : 'device')).reference);
    }
    const cancelled = await lostPhone();
    ok(await cancel(cancelled.id));
    const approved = await lostPhone();
    ok(await approve(approved.reference, officer));
    const lapsed = await lostPhone();
    await t.s.db.updateTable('recovery_workflows').set({ expires_at: new Date(clock.now() - 1) }).where('reference', '=', lapsed.reference).execute();
    await lostPhone('password'); // takes no branch approval
    const decoy = ok(await initiate('nobody.at.all', 'mfa'), 202).reference!;

    const byCreation = await t.s.db.selectFrom('recovery_workflows').select(['reference', 'created_at', 'id'])
      .where('reference', 'in', waiting).orderBy('created_at').orderBy('id').execute();
    const expected = byCreation.map((r) => r.reference);
    expect([...expected].sort()).toEqual([...waiting].sort());

    for (const limit of [1, 2, 3, 7, 100]) {
      const { pages, references } = await wholeQueue(limit);
      expect(references, `limit ${limit}`).toEqual(expected);
      expect(new Set(references).size).toBe(references.length);
      expect(pages.at(-1)!.next_cursor).toBeNull();
      for (const p of pages.slice(0, -1)) expect(p.recoveries).toHaveLength(limit);
      for (const gone of [cancelled.reference, approved.reference, lapsed.reference, decoy]) expect(references).not.toContain(gone);
    }
    // The default page, and the item shape of a lookup.
    const first = ok(await find('', officer)) as unknown as Page;
    expect(first.recoveries.map((r) => r.reference)).toEqual(expected);
    expect(first.next_cursor).toBeNull();
    const one = ok(await find(`reference=${expected[0]}`, officer)) as unknown as Page;
    expect(one).toEqual({ recoveries: [first.recoveries[0]], next_cursor: null });

    // A workflow approved between two pages leaves the queue; the next page starts where the last ended.
    const p1 = ok(await find('limit=2', officer)) as unknown as Page;
    ok(await approve(expected[2]!, officer));
    const p2 = ok(await find(`limit=2&cursor=${encodeURIComponent(p1.next_cursor!)}`, officer)) as unknown as Page;
    expect(p2.recoveries.map((r) => r.reference)).toEqual([expected[3], expected[4]]);
  });
});

describe('threats', () => {
  it('threat: reading the queue without recovery.approve (403 PERMISSION_DENIED)', async () => {
    expect(expectError(await find('', clerk), 403, 'PERMISSION_DENIED').details).toMatchObject({ required_permission: 'recovery.approve' });
    expectError(await find('limit=5', clerk), 403, 'PERMISSION_DENIED');
  });

  it('threat: a forged or tampered cursor (422 VALIDATION_ERROR naming cursor, no SQL error)', async () => {
    const forged = [
      'not-a-cursor',
      Buffer.from(JSON.stringify({ v: 1, at: "2026-03-04T09:00:00.000000Z'; DROP TABLE users; --", id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77' })).toString('base64url'),
      Buffer.from(JSON.stringify({ v: 1, at: '2026-13-04T09:00:00.000000Z', id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77' })).toString('base64url'),
      Buffer.from(JSON.stringify({ v: 1, at: '2026-03-04T09:00:00.000000Z', id: 'x' })).toString('base64url'),
    ];
    for (const cursor of forged) {
      const res = await find(`cursor=${encodeURIComponent(cursor)}`, officer);
      expect(expectError(res, 422, 'VALIDATION_ERROR').details).toMatchObject({ fields: [{ field: 'cursor' }] });
    }
  });

  it('threat: both reference and user_id, or a cursor with a lookup (422 VALIDATION_ERROR)', async () => {
    const { reference } = await lostPhone();
    const user = (await t.s.users.findByLogin(`queue.customer.${n}`))!;
    expectError(await find(`reference=${reference}&user_id=${user.uuid}`, officer), 422, 'VALIDATION_ERROR');
    const cursor = Buffer.from(JSON.stringify({ v: 1, at: '2026-03-04T09:00:00.000000Z', id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77' })).toString('base64url');
    expect(expectError(await find(`reference=${reference}&cursor=${cursor}`, officer), 422, 'VALIDATION_ERROR').details).toMatchObject({ fields: [{ field: 'cursor' }] });
    expectError(await find('limit=0', officer), 422, 'VALIDATION_ERROR');
    expectError(await find('limit=101', officer), 422, 'VALIDATION_ERROR');
  });
});
