/**
 * The audit log is partitioned by month (PostgreSQL declarative range partitioning on
 * `timestamp`, in UTC months), so that an administrator's query over a time range reads only the
 * months it names, and the retention job removes a month by dropping one table instead of
 * deleting millions of rows. Partitions are named after what they hold:
 *
 * - `audit_log_y2026m11`: November 2026;
 * - `audit_log_before_y2026m12`: everything before December 2026 (the table as it was before
 *   partitioning, attached whole by the migration);
 * - `audit_log_default`: anything no other partition takes (a clock far ahead, a month not yet
 *   created), so that writing an audit entry never fails for want of a partition.
 *
 * This module only reads the catalogue and runs DDL; it decides nothing about retention.
 */
import { sql, type Kysely, type QueryExecutorProvider } from 'kysely';

export const AUDIT_DEFAULT_PARTITION = 'audit_log_default';

export interface AuditPartition {
  name: string;
  /** Inclusive lower bound; null for the partition holding everything before `to`. */
  from: Date | null;
  /** Exclusive upper bound. */
  to: Date;
}

/** The first instant of the UTC month `offset` months after the one holding `at`. */
export function monthStart(at: Date, offset = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
}

function monthTag(at: Date): string {
  return `y${at.getUTCFullYear()}m${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function monthPartitionName(month: Date): string {
  return `audit_log_${monthTag(month)}`;
}

export function beforePartitionName(to: Date): string {
  return `audit_log_before_${monthTag(to)}`;
}

const NAME = /^audit_log_(before_)?y(\d{4})m(\d{2})$/;

/** Reads a partition's bounds from its name; null for the default partition or a foreign name. */
export function parsePartitionName(name: string): AuditPartition | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const month = new Date(Date.UTC(Number(m[2]), Number(m[3]) - 1, 1));
  return m[1] ? { name, from: null, to: month } : { name, from: month, to: monthStart(month, 1) };
}

/** The range partitions of the audit log, oldest first (the default partition is not listed). */
export async function listAuditPartitions<DB>(db: Kysely<DB>): Promise<AuditPartition[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
    WHERE p.relname = 'audit_log' AND p.relnamespace = current_schema()::regnamespace`.execute(db);
  return rows
    .map((r) => parsePartitionName(r.name))
    .filter((p): p is AuditPartition => p !== null)
    .sort((a, b) => a.to.getTime() - b.to.getTime());
}

function iso(d: Date): string {
  return d.toISOString();
}

/**
 * Creates the monthly partitions covering `[from, to]` that do not exist yet; months already
 * held by the partition of everything before a date are left there. Entries a clock wrote
 * into the default partition for a month being created are moved into it, in one transaction
 * (the default partition is detached meanwhile, so writers of that month wait a moment).
 */
export async function ensureAuditPartitions<DB>(db: Kysely<DB>, from: Date, to: Date): Promise<string[]> {
  const existing = await listAuditPartitions(db);
  const held = new Set(existing.map((p) => p.name));
  const coveredUntil = existing.find((p) => p.from === null)?.to.getTime() ?? -Infinity;
  const created: string[] = [];
  for (let month = monthStart(from); month.getTime() <= to.getTime(); month = monthStart(month, 1)) {
    const name = monthPartitionName(month);
    if (held.has(name) || month.getTime() < coveredUntil) continue;
    await createMonth(db, month);
    created.push(name);
  }
  return created;
}

async function createMonth<DB>(db: Kysely<DB>, month: Date): Promise<void> {
  const name = monthPartitionName(month);
  const [lo, hi] = [iso(month), iso(monthStart(month, 1))];
  const bounds = sql.raw(`FOR VALUES FROM ('${lo}') TO ('${hi}')`);
  const inDefault = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM ${sql.table(AUDIT_DEFAULT_PARTITION)} WHERE timestamp >= ${lo}::timestamptz AND timestamp < ${hi}::timestamptz`.execute(db);
  if ((inDefault.rows[0]?.n ?? 0) === 0) {
    await sql`CREATE TABLE IF NOT EXISTS ${sql.table(name)} PARTITION OF audit_log ${bounds}`.execute(db);
    return;
  }
  await db.transaction().execute(async (trx) => {
    await sql`ALTER TABLE audit_log DETACH PARTITION ${sql.table(AUDIT_DEFAULT_PARTITION)}`.execute(trx);
    await sql`CREATE TABLE IF NOT EXISTS ${sql.table(name)} PARTITION OF audit_log ${bounds}`.execute(trx);
    await sql`
      WITH moved AS (
        DELETE FROM ${sql.table(AUDIT_DEFAULT_PARTITION)} WHERE timestamp >= ${lo}::timestamptz AND timestamp < ${hi}::timestamptz RETURNING *
      ) INSERT INTO ${sql.table(name)} SELECT * FROM moved`.execute(trx);
    await sql`ALTER TABLE audit_log ATTACH PARTITION ${sql.table(AUDIT_DEFAULT_PARTITION)} DEFAULT`.execute(trx);
  });
}

/**
 * Detaches and drops one partition, first copying into `audit_log_held` the entries of the
 * users named by `heldUsers` (entries under a legal hold outlive their month). Returns how
 * many entries the partition held and how many were kept. Run it in a transaction (`trx`),
 * with the audit entry that records the drop.
 */
export async function dropAuditPartition(trx: QueryExecutorProvider, p: AuditPartition, heldUsers: readonly string[]): Promise<{ rows: number; kept: number }> {
  const counted = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(p.name)}`.execute(trx);
  let kept = 0;
  if (heldUsers.length > 0) {
    const copied = await sql`
      INSERT INTO audit_log_held SELECT * FROM ${sql.table(p.name)} WHERE user_id = ANY(${[...heldUsers]}::text[])
      ON CONFLICT DO NOTHING`.execute(trx);
    kept = Number(copied.numAffectedRows ?? 0);
  }
  await sql`ALTER TABLE audit_log DETACH PARTITION ${sql.table(p.name)}`.execute(trx);
  await sql`DROP TABLE ${sql.table(p.name)}`.execute(trx);
  return { rows: counted.rows[0]?.n ?? 0, kept };
}
