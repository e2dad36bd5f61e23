/**
 * GET /api/v1/admin/audit/summary on both databases (the grouped query's date_trunc, FILTER and
 * the union with the held entries): exact counts per hour and per day and channel for seeded
 * entries, entries outside [from, to) and events that count as nothing left out, the filters,
 * the default range from the service's clock, 400 for an empty, reversed or too long range, 403
 * without audit.read.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/audit/service.js';
import type { Summary } from '../../src/audit/summary.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const H8 = Date.UTC(2025, 5, 10, 8, 0, 0);

let t: TestApp;
let adminToken: string;
let staffToken: string;
const subject = randomUUID();

/** Writes an entry for `subject` at `at`, as the service writes them (into the held table with `held`). */
async function seed(at: number, eventType: AuditEvent, channel: string | null, opts: { held?: boolean; country?: string; userId?: string } = {}): Promise<void> {
  const now = t.clock.now();
  t.clock.set(at);
  const row = { ...t.s.audit.row({ eventType, status: 'SUCCESS', userId: opts.userId ?? subject, channel }), ...(opts.country ? { location: JSON.stringify({ country: opts.country }) } : {}) };
  t.clock.set(now);
  await t.s.db.insertInto(opts.held ? 'audit_log_held' : 'audit_log').values(row).execute();
}

beforeAll(async () => {
  t = await createTestApp();
  await seedUser(t.s, 'summary.admin', { roles: ['admin'] });
  await seedUser(t.s, 'summary.staff', { roles: ['staff'] });
  adminToken = (await signIn(t.app, 'summary.admin')).access_token;
  staffToken = (await signIn(t.app, 'summary.staff')).access_token;
  const at = (h: number, m: number) => H8 + (h - 8) * 60 * MINUTE + m * MINUTE;
  await seed(at(7, 59), 'USER_LOGIN', 'web'); // before the range
  await seed(at(8, 5), 'USER_LOGIN', 'web', { country: 'KE' });
  await seed(at(8, 10), 'USER_LOGIN', 'web');
  await seed(at(8, 20), 'USER_LOGIN', 'mobile', { country: 'KE' });
  await seed(at(8, 30), 'FAILED_LOGIN_ATTEMPT', 'web', { country: 'KE' });
  await seed(at(8, 40), 'LOCKED_LOGIN_ATTEMPT', 'web');
  await seed(at(9, 15), 'ACCOUNT_LOCKED', null);
  await seed(at(9, 16), 'SECURITY_ALERT_RAISED', 'web');
  await seed(at(9, 17), 'POLICY_VIOLATION', 'ussd');
  await seed(at(9, 18), 'RISK_SIGN_IN_REFUSED', 'mobile');
  await seed(at(9, 20), 'LOGOUT', 'web'); // counts as nothing
  await seed(at(9, 25), 'TOKEN_REFRESH', 'web'); // counts as nothing
  await seed(at(9, 30), 'USER_LOGIN', 'agent', { held: true }); // kept under a legal hold: counted all the same
  await seed(at(10, 0), 'USER_LOGIN', 'web'); // at `to`: outside
  await seed(at(9, 0), 'USER_LOGIN', 'web', { userId: randomUUID() }); // someone else
});
afterAll(async () => t?.close());

function get(query: string, token = adminToken) {
  return t.app.inject({ method: 'GET', url: `/api/v1/admin/audit/summary?${query}`, headers: bearer(token) });
}
async function summary(query: string, token = adminToken): Promise<Summary> {
  const res = await get(query, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Summary;
}
const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
const row = (start: number, channel: string | null, sign_ins: number, failed_sign_ins: number, account_locks: number, alerts_raised: number) => ({ start: new Date(start).toISOString(), channel, sign_ins, failed_sign_ins, account_locks, alerts_raised });
const HOUR = 60 * MINUTE;

describe('GET /api/v1/admin/audit/summary', () => {
  it('counts sign-ins, failures, locks and alerts per hour and channel, exactly, within [from, to)', async () => {
    const s = await summary(`user_id=${subject}&from=${iso(H8)}&to=${iso(H8 + 2 * HOUR)}&bucket=hour`);
    expect(s).toEqual({
      from: new Date(H8).toISOString(), to: new Date(H8 + 2 * HOUR).toISOString(), bucket: 'hour',
      rows: [
        row(H8, 'mobile', 1, 0, 0, 0),
        row(H8, 'web', 2, 2, 0, 0),
        row(H8 + HOUR, 'agent', 1, 0, 0, 0),
        row(H8 + HOUR, 'mobile', 0, 1, 0, 0),
        row(H8 + HOUR, 'ussd', 0, 1, 0, 0),
        row(H8 + HOUR, 'web', 0, 0, 0, 1),
        row(H8 + HOUR, null, 0, 0, 1, 0),
      ],
      totals: { sign_ins: 4, failed_sign_ins: 4, account_locks: 1, alerts_raised: 1 },
    });
  });

  it('a range starting inside an hour counts only what is inside it; by day, one row per day and channel', async () => {
    const part = await summary(`user_id=${subject}&from=${iso(H8 + 15 * MINUTE)}&to=${iso(H8 + HOUR)}`);
    expect(part.bucket).toBe('hour');
    expect(part.rows).toEqual([row(H8, 'mobile', 1, 0, 0, 0), row(H8, 'web', 0, 2, 0, 0)]);

    const day = Date.UTC(2025, 5, 10);
    const days = await summary(`user_id=${subject}&from=${iso(day - DAY)}&to=${iso(day + 2 * DAY)}&bucket=day`);
    expect(days.rows).toEqual([
      row(day, 'agent', 1, 0, 0, 0),
      row(day, 'mobile', 1, 1, 0, 0),
      row(day, 'ussd', 0, 1, 0, 0),
      row(day, 'web', 4, 2, 0, 1),
      row(day, null, 0, 0, 1, 0),
    ]);
    expect(days.totals).toEqual({ sign_ins: 6, failed_sign_ins: 4, account_locks: 1, alerts_raised: 1 });
  });

  it('filters by channel and by country as the audit list does', async () => {
    const range = `user_id=${subject}&from=${iso(H8)}&to=${iso(H8 + 2 * HOUR)}`;
    expect((await summary(`${range}&channel=web`)).rows).toEqual([row(H8, 'web', 2, 2, 0, 0), row(H8 + HOUR, 'web', 0, 0, 0, 1)]);
    expect((await summary(`${range}&country=KE`)).rows).toEqual([row(H8, 'mobile', 1, 0, 0, 0), row(H8, 'web', 1, 1, 0, 0)]);
    expect((await summary(`from=${iso(H8)}&to=${iso(H8 + 2 * HOUR)}&channel=web`)).totals).toEqual({ sign_ins: 3, failed_sign_ins: 2, account_locks: 0, alerts_raised: 1 });
  });

  it('without a range, counts the last 24 hours of the service\'s clock', async () => {
    const now = t.clock.now();
    try {
      t.clock.set(H8 + 90 * MINUTE);
      const s = await summary(`user_id=${subject}`, (await signIn(t.app, 'summary.admin')).access_token);
      expect(s.to).toBe(new Date(H8 + 90 * MINUTE).toISOString());
      expect(s.from).toBe(new Date(H8 + 90 * MINUTE - DAY).toISOString());
      expect(s.totals).toEqual({ sign_ins: 4, failed_sign_ins: 4, account_locks: 1, alerts_raised: 1 }); // 07:59 to 09:25; not 09:30 (at `to`) nor 10:00
    } finally {
      t.clock.set(now);
    }
  });

  it('threat: an unbounded scan: a range longer than 31 days by hour or 400 days by day, empty or reversed, is 400 AUDIT_SUMMARY_RANGE_INVALID', async () => {
    expect((await get(`from=${iso(H8)}&to=${iso(H8 + 31 * DAY)}&bucket=hour`)).statusCode).toBe(200);
    const long = expectError(await get(`from=${iso(H8)}&to=${iso(H8 + 31 * DAY + 1)}&bucket=hour`), 400, 'AUDIT_SUMMARY_RANGE_INVALID');
    expect(long.details).toMatchObject({ bucket: 'hour', max_days: 31 });
    expect((await get(`from=${iso(H8)}&to=${iso(H8 + 400 * DAY)}&bucket=day`)).statusCode).toBe(200);
    expect(expectError(await get(`from=${iso(H8)}&to=${iso(H8 + 400 * DAY + 1)}&bucket=day`), 400, 'AUDIT_SUMMARY_RANGE_INVALID').details).toMatchObject({ bucket: 'day', max_days: 400 });
    expectError(await get(`from=${iso(H8)}&to=${iso(H8)}`), 400, 'AUDIT_SUMMARY_RANGE_INVALID');
    expectError(await get(`from=${iso(H8)}&to=${iso(H8 - HOUR)}`), 400, 'AUDIT_SUMMARY_RANGE_INVALID');
    expectError(await get(`from=${iso(t.clock.now() + HOUR)}`), 400, 'AUDIT_SUMMARY_RANGE_INVALID'); // after the default `to`, now
  });

  it('refuses malformed filters with 422 VALIDATION_ERROR', async () => {
    for (const q of ['bucket=week', 'channel=WEB%27', 'country=ke', 'user_id=1', 'from=yesterday', 'event_type=USER_LOGIN']) expectError(await get(q), 422, 'VALIDATION_ERROR');
  });

  it('threat: an operator without audit.read counts nothing: 403 PERMISSION_DENIED; no token: 401', async () => {
    expectError(await get('bucket=hour', staffToken), 403, 'PERMISSION_DENIED');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/admin/audit/summary' })).statusCode).toBe(401);
  });
});
