/**
 * An index on `lower(username)` of the audit log (every monthly partition) and of
 * `audit_log_held`. The erasure job finds the person's audit rows by their uuid or by their
 * username (rows without a uuid: sign-ins under that name that found no account, entries
 * written before the account existed); without this index the username half reads the whole
 * audit log, every partition, for every erasure.
 *
 * Built so that writers of the audit log (every sign-in writes to it) wait as little as
 * possible during a rolling upgrade. A plain CREATE INDEX on the partitioned table holds off
 * every insert until the last partition is indexed (13 s for 10 million entries on two cores).
 * Here the past months, which nothing inserts into, are indexed first, each locking only
 * itself; then the parent is locked against writes and only what writers use is indexed under
 * that lock: the current and later months, the default partition and any partition not named
 * after a month (0.9 s in the same measurement); then the parent's index is created empty and
 * every partition's index attached to it, which makes it valid and makes each partition created
 * later get one of its own. The parent is locked before those partitions so that the lock order
 * is the writers' (table, then partition): an insert waiting on a partition while holding the
 * table would otherwise deadlock with this migration.
 *
 * Expand only: indexes.
 */
import { sql, type Kysely } from 'kysely';
import { monthStart, parsePartitionName } from '../../../audit/partitions.js';
import { runScript } from './script.js';

const INDEX = 'audit_log_username';

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'audit_log'::regclass ORDER BY c.relname`.execute(db);
  const thisMonth = monthStart(new Date()).getTime();
  const past = (name: string): boolean => {
    const p = parsePartitionName(name);
    return p !== null && p.to.getTime() <= thisMonth;
  };
  const old = rows.map((r) => r.name).filter(past);
  const live = rows.map((r) => r.name).filter((name) => !past(name));
  const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;
  const indexOn = (p: string): string => `CREATE INDEX ${q(`${p}_username`)} ON ${q(p)} (lower(username));`;
  await runScript(db, `
    ${old.map(indexOn).join('\n')}
    LOCK TABLE audit_log IN SHARE MODE;
    ${live.map(indexOn).join('\n')}
    CREATE INDEX ${INDEX} ON ONLY audit_log (lower(username));
    ${[...old, ...live].map((p) => `ALTER INDEX ${INDEX} ATTACH PARTITION ${q(`${p}_username`)};`).join('\n')}
    CREATE INDEX audit_log_held_username ON audit_log_held (lower(username));
  `);
}
