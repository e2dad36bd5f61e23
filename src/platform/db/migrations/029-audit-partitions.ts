/**
 * The audit log partitioned by UTC month (src/audit/partitions.ts), with a default partition so
 * that no write ever lacks one; entries kept past their month under a legal hold
 * (`audit_log_held`); and the holds themselves (`audit_legal_holds`).
 *
 * The table as it was is kept whole, without copying a row: when it holds entries it is renamed
 * and attached as the partition of everything before the month after its newest entry (the
 * month of the migration included), which the retention job drops as one once all of it is past
 * the retention period. An empty table is replaced. Writers of the previous release insert into
 * `audit_log` as before (same columns, same defaults), so a rolling upgrade keeps working. The
 * primary key becomes (audit_id, timestamp): PostgreSQL requires a partitioned table's unique
 * keys to include the partition key; audit ids are random uuids.
 */
import { sql, type Kysely } from 'kysely';
import { beforePartitionName, ensureAuditPartitions, monthStart } from '../../../audit/partitions.js';
import { runScript } from './script.js';

const COLUMNS = `
  audit_id uuid NOT NULL DEFAULT gen_random_uuid(),
  timestamp timestamptz NOT NULL,
  event_type text NOT NULL,
  user_id text,
  username text,
  status text NOT NULL,
  ip_address text,
  device_fingerprint text,
  user_agent text,
  channel text,
  mfa_method text,
  location jsonb,
  security_events jsonb NOT NULL DEFAULT '[]',
  risk_score real,
  suspicious_indicators jsonb NOT NULL DEFAULT '[]',
  details jsonb NOT NULL DEFAULT '{}'`;

const INDEXES = ['time', 'user_time', 'event_time'];

export async function up(db: Kysely<unknown>): Promise<void> {
  const newest = await sql<{ at: Date | null }>`SELECT max(timestamp) AS at FROM audit_log`.execute(db);
  const at = newest.rows[0]?.at ?? null;
  const before = at === null ? null : beforePartitionName(monthStart(new Date(Math.max(Date.now(), new Date(at).getTime())), 1));
  await runScript(db, before === null ? 'DROP TABLE audit_log;' : `
    ALTER TABLE audit_log RENAME TO ${before};
    ALTER TABLE ${before} DROP CONSTRAINT audit_log_pkey;
    ${INDEXES.map((i) => `ALTER INDEX audit_log_${i} RENAME TO ${before}_${i};`).join('\n')}
  `);
  await runScript(db, `
    CREATE TABLE audit_log (${COLUMNS}, PRIMARY KEY (audit_id, timestamp)) PARTITION BY RANGE (timestamp);
    CREATE INDEX audit_log_time ON audit_log (timestamp DESC);
    CREATE INDEX audit_log_user_time ON audit_log (user_id, timestamp DESC);
    CREATE INDEX audit_log_event_time ON audit_log (event_type, timestamp DESC);
    CREATE TABLE audit_log_default PARTITION OF audit_log DEFAULT;

    CREATE TABLE audit_log_held (${COLUMNS}, PRIMARY KEY (audit_id, timestamp));
    CREATE INDEX audit_log_held_user_time ON audit_log_held (user_id, timestamp DESC);

    CREATE TABLE audit_legal_holds (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      reason text NOT NULL,
      period_from timestamptz NOT NULL,
      period_to timestamptz NOT NULL,
      user_id text,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      released_at timestamptz,
      released_by text,
      CHECK (period_from < period_to)
    );
  `);
  if (before !== null) {
    const to = /_y(\d{4})m(\d{2})$/.exec(before)!;
    await sql.raw(`ALTER TABLE audit_log ATTACH PARTITION ${before} FOR VALUES FROM (MINVALUE) TO ('${to[1]}-${to[2]}-01T00:00:00Z')`).execute(db);
  }
  // This month and the next two (the audit module keeps them ahead from then on).
  const now = new Date();
  await ensureAuditPartitions(db, monthStart(now), monthStart(now, 2));
}
