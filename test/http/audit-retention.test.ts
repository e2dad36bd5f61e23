/**
 * The audit log by month: partitions created ahead, entries of a month with no partition yet
 * never lost, months past the retention period dropped whole, legal holds keeping what they
 * name, and the table as it was before partitioning kept whole by the migration.
 */
import { randomUUID } from 'node:crypto';
import { Migrator, sql, type Kysely } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureAuditPartitions, listAuditPartitions, monthPartitionName, monthStart } from '../../src/audit/partitions.js';
import { ManualClock } from '../../src/platform/clock.js';
import { openDatabase } from '../../src/platform/db/database.js';
import { MIGRATION_TABLE } from '../../src/platform/db/migrate.js';
import { migrationProvider } from '../../src/platform/db/migrations/index.js';
import { createTestApp, dbKind, emptyPostgresDatabase, type TestApp } from '../harness/app.js';
import { bearer, seedUser, signIn } from '../harness/fixtures.js';

const NOW = Date.parse('2026-06-15T12:00:00Z');
const month = (offset: number) => monthStart(new Date(NOW), offset);

async function partitionOf<DB>(db: Kysely<DB>, auditId: string): Promise<string | undefined> {
  const { rows } = await sql<{ p: string }>`SELECT tableoid::regclass::text AS p FROM audit_log WHERE audit_id = ${auditId}`.execute(db);
  return rows[0]?.p;
}

async function write(t: TestApp, at: Date, userId: string | null, eventType: 'USER_LOGIN' | 'LOGOUT' = 'USER_LOGIN'): Promise<string> {
  const row = await t.s.db.insertInto('audit_log').values({ ...t.s.audit.row({ eventType, status: 'SUCCESS', userId }), timestamp: at })
    .returning('audit_id').executeTakeFirstOrThrow();
  return row.audit_id;
}

describe('audit log partitioned by month', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock: new ManualClock(NOW), env: { AUDIT_RETENTION_MONTHS: '2' } });
  });
  afterAll(() => t.close());

  it('has this month and the next two from the start, and writes land in their month', async () => {
    const names = (await listAuditPartitions(t.s.db)).map((p) => p.name);
    for (const m of [0, 1, 2]) expect(names).toContain(monthPartitionName(month(m)));
    const id = await write(t, new Date(NOW), null);
    expect(await partitionOf(t.s.db, id)).toBe('audit_log_y2026m06');
  });

  it('keeps an entry written for a month with no partition yet, and moves it into the month when it is created', async () => {
    // Past every month created so far (the migration creates the real current month's and the next two).
    const far = monthStart(new Date(Math.max(NOW, Date.now())), 6);
    const later = new Date(far.getTime() + 86_400_000);
    const id = await write(t, later, null);
    expect(await partitionOf(t.s.db, id)).toBe('audit_log_default');
    t.clock.set(later.getTime());
    try {
      expect(await t.s.auditRetention.ensureMonthsAhead()).toContain(monthPartitionName(far));
    } finally {
      t.clock.set(NOW);
    }
    expect(await partitionOf(t.s.db, id)).toBe(monthPartitionName(far));
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log_default`.execute(t.s.db);
    expect(rows[0]!.n).toBe(0);
  });

  it('answers a time-range query from the months it names only', async () => {
    const plan = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN SELECT * FROM audit_log WHERE timestamp >= ${month(1).toISOString()}::timestamptz AND timestamp < ${month(2).toISOString()}::timestamptz`.execute(t.s.db);
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain(monthPartitionName(month(1)));
    expect(text).not.toContain(monthPartitionName(month(0)));
    expect(text).not.toContain('audit_log_default');
  });

  describe('retention (2 months) and legal holds', () => {
    const [userA, userB] = [randomUUID(), randomUUID()];
    const ids: Record<string, string> = {};
    let adminToken: string;

    beforeAll(async () => {
      await ensureAuditPartitions(t.s.db, month(-5), month(-1));
      for (const m of [-5, -4, -3, -2]) {
        ids[`A${m}`] = await write(t, new Date(month(m).getTime() + 3_600_000), userA);
        ids[`B${m}`] = await write(t, new Date(month(m).getTime() + 7_200_000), userB);
      }
      await seedUser(t.s, 'audit.admin', { roles: ['admin'] });
      adminToken = (await signIn(t.app, 'audit.admin')).access_token;
    });

    it('a dry run says which months are due and drops nothing', async () => {
      const due = await t.s.auditRetention.prune({ dryRun: true });
      expect(due.map((d) => d.partition)).toEqual([-5, -4, -3].map((m) => monthPartitionName(month(m))));
      expect(await partitionOf(t.s.db, ids['A-5']!)).toBe(monthPartitionName(month(-5)));
    });

    it('drops the months past the period, except a month under a hold on the period, and keeps a held user\'s entries', async () => {
      const periodHold = await t.s.auditRetention.placeHold({ reason: 'case 2026-114: incident review', from: new Date(month(-4).getTime() + 86_400_000), to: new Date(month(-4).getTime() + 2 * 86_400_000), userId: null, by: 'dpo' });
      await t.s.auditRetention.placeHold({ reason: 'case 2026-115: customer dispute', from: month(-6), to: month(-4), userId: userA, by: 'dpo' });

      const dropped = await t.s.auditRetention.prune();
      expect(dropped.map((d) => [d.partition, d.entries, d.kept_under_hold])).toEqual([
        [monthPartitionName(month(-5)), 2, 1],
        [monthPartitionName(month(-3)), 2, 0],
      ]);
      const names = (await listAuditPartitions(t.s.db)).map((p) => p.name);
      expect(names).not.toContain(monthPartitionName(month(-5)));
      expect(names).toContain(monthPartitionName(month(-4)));
      expect(names).toContain(monthPartitionName(month(-2)));
      expect(await partitionOf(t.s.db, ids['B-5']!)).toBeUndefined();
      expect(await partitionOf(t.s.db, ids['B-4']!)).toBe(monthPartitionName(month(-4)));

      // The held user's entry of the dropped month is still answered by the audit query.
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/audit?user_id=${userA}&from=${month(-6).toISOString()}&to=${month(-1).toISOString()}`, headers: bearer(adminToken) });
      expect(res.statusCode).toBe(200);
      const entries = (res.json() as { entries: { audit_id: string }[] }).entries.map((e) => e.audit_id);
      expect(entries.sort()).toEqual([ids['A-5'], ids['A-4'], ids['A-2']].sort());

      const audited = await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', 'AUDIT_MONTH_DROPPED').execute();
      expect(audited.map((r) => (r.details as { partition: string }).partition).sort()).toEqual([monthPartitionName(month(-5)), monthPartitionName(month(-3))].sort());

      // Released, the period hold no longer keeps its month.
      expect(await t.s.auditRetention.releaseHold(periodHold.id, 'dpo')).toMatchObject({ id: periodHold.id, released_by: 'dpo' });
      expect(await t.s.auditRetention.releaseHold(periodHold.id, 'dpo')).toBeNull();
      expect((await t.s.auditRetention.prune()).map((d) => d.partition)).toEqual([monthPartitionName(month(-4))]);
      expect((await t.s.auditRetention.holdsInForce()).map((h) => h.user_id)).toEqual([userA]);
    });

    it('a hold released by ten operators at once is released once, and audited once', async () => {
      const hold = await t.s.auditRetention.placeHold({ reason: 'case 2026-116', from: month(-12), to: month(-11), userId: null, by: 'dpo' });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.s.auditRetention.releaseHold(hold.id, `operator-${i}`)));
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      const audited = await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', 'AUDIT_HOLD_RELEASED').execute();
      expect(audited.filter((r) => (r.details as { hold_id: string }).hold_id === hold.id)).toHaveLength(1);
    });

    it('the hourly job creates the months ahead and drops the months due', async () => {
      await ensureAuditPartitions(t.s.db, month(-3), month(-3));
      const id = await write(t, new Date(month(-3).getTime() + 3_600_000), userB);
      expect(await t.scheduler.runNow('audit partitions')).toBe(true);
      expect(await partitionOf(t.s.db, id)).toBeUndefined();
      expect((await listAuditPartitions(t.s.db)).map((p) => p.name)).toContain(monthPartitionName(month(2)));
    });
  });
});

// A database migrated from nothing: seconds on PGlite, more on a loaded machine.
describe('migration of an audit log written before partitioning', { timeout: 120_000 }, () => {
  it('keeps every entry, in one partition of everything before the month after the newest', async () => {
    const log = pino({ level: 'silent' });
    const handle = dbKind() === 'postgres'
      ? await openDatabase({ kind: 'postgres', url: await emptyPostgresDatabase('audit_upgrade'), poolSize: 2 }, log)
      : await openDatabase({ kind: 'pglite-memory' }, log);
    try {
      const migrator = new Migrator({ db: handle.db, provider: migrationProvider, migrationTableName: MIGRATION_TABLE, migrationLockTableName: `${MIGRATION_TABLE}_lock` });
      const before = await migrator.migrateTo('028-public-ids');
      expect(before.error).toBeUndefined();
      await sql`INSERT INTO audit_log (timestamp, event_type, status, user_id) VALUES
        ('2024-01-10T00:00:00Z', 'USER_LOGIN', 'SUCCESS', 'u1'), (now(), 'LOGOUT', 'SUCCESS', 'u1')`.execute(handle.db);
      expect((await handle.migrate())).toContain('029-audit-partitions');

      const partitions = await listAuditPartitions(handle.db);
      const whole = partitions.find((p) => p.from === null)!;
      expect(whole.name).toBe(`audit_log_before_${monthPartitionName(monthStart(new Date(), 1)).slice('audit_log_'.length)}`);
      const { rows } = await sql<{ p: string; n: number }>`SELECT tableoid::regclass::text AS p, count(*)::int AS n FROM audit_log GROUP BY 1`.execute(handle.db);
      expect(rows).toEqual([{ p: whole.name, n: 2 }]);
      // Later months have their own partitions, and a write still works as the previous release makes it.
      expect(partitions.map((p) => p.name)).toContain(monthPartitionName(monthStart(new Date(), 1)));
      await sql`INSERT INTO audit_log (timestamp, event_type, status) VALUES (now(), 'USER_LOGIN', 'SUCCESS')`.execute(handle.db);
    } finally {
      await handle.close();
    }
  });
});
