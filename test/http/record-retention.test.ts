/**
 * Records that would otherwise grow for ever are deleted once past RECORD_RETENTION_DAYS: ended
 * sessions and sessions expired long ago (with their history and refresh families), and push
 * messages delivered or failed. Active sessions, recent ones and pending pushes stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, seedUser, signIn } from '../harness/fixtures.js';

const DAY = 86_400_000;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ clock: new ManualClock(Date.parse('2026-03-01T09:00:00Z')), env: { RECORD_RETENTION_DAYS: '30', MAX_CONCURRENT_SESSIONS: '10' } });
});
afterAll(() => t.close());

async function sessionRows(ids: string[]) {
  const count = async (table: 'sessions' | 'session_history' | 'refresh_families') =>
    (await t.s.db.selectFrom(table).select('session_id').where('session_id', 'in', ids).execute()).length;
  return { sessions: await count('sessions'), history: await count('session_history'), families: await count('refresh_families') };
}

describe('session record clean-up', () => {
  it('deletes sessions ended or expired longer ago than the retention period, with their history and families', async () => {
    await seedUser(t.s, 'rita.retention');
    await seedUser(t.s, 'rex.abandoned');
    const ended = await signIn(t.app, 'rita.retention');
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(ended.access_token) })).statusCode).toBe(200);
    // Rex never comes back: nothing ends his session, it only expires.
    const abandoned = await signIn(t.app, 'rex.abandoned');

    // 20 days on: a fresh session; the two above are not yet past 30 days.
    t.clock.advance(20 * DAY);
    const recent = await signIn(t.app, 'rita.retention');
    expect(await t.scheduler.runNow('session record clean-up')).toBe(true);
    expect(await sessionRows([ended.session_id, abandoned.session_id])).toEqual({ sessions: 2, history: 3, families: 2 });

    // 45 days after the first sign-ins: the ended one is 45 days old; the abandoned one expired
    // (7-day lifetime) 38 days ago without anyone ending it; the recent one is 25 days old.
    t.clock.advance(25 * DAY);
    expect(await t.scheduler.runNow('session record clean-up')).toBe(true);
    expect(await sessionRows([ended.session_id, abandoned.session_id])).toEqual({ sessions: 0, history: 0, families: 0 });
    expect((await sessionRows([recent.session_id])).sessions).toBe(1);
  });
});

describe('push record clean-up', () => {
  it('deletes delivered and failed messages past the retention period, never a pending one', async () => {
    const user = await seedUser(t.s, 'peter.push');
    const row = await t.s.users.findByUuid(user.uuid);
    const now = t.clock.now();
    const message = (status: 'pending' | 'sent' | 'failed', ageDays: number) => ({
      user_id: row!.id, title: 't', body: 'b', status, next_attempt_at: new Date(now), created_at: new Date(now - ageDays * DAY), updated_at: new Date(now - ageDays * DAY),
    });
    const ids = await t.s.db.insertInto('push_messages')
      .values([message('sent', 31), message('failed', 40), message('pending', 60), message('sent', 29)])
      .returning('id').execute();
    expect(await t.scheduler.runNow('push record clean-up')).toBe(true);
    const left = await t.s.db.selectFrom('push_messages').select(['id', 'status']).where('user_id', '=', row!.id).orderBy('id').execute();
    expect(left.map((r) => String(r.id))).toEqual([ids[2]!.id, ids[3]!.id].map(String));
  });
});
