/**
 * Session records do not grow without bound: a session ended (or expired without anyone coming
 * back to end it) longer ago than RECORD_RETENTION_DAYS is deleted with its history and refresh
 * families (its tokens and SAML link follow by cascade). Sign-ins and sign-outs remain in the
 * audit trail, which has its own retention.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import { purgeInBatches } from '../platform/db/purge.js';

export async function purgeSessionRecords(db: Db, cutoff: Date, stopping?: AbortSignal): Promise<number> {
  return purgeInBatches(async (limit) => {
    const { rows } = await sql<{ n: number }>`
      WITH due AS (
        (SELECT session_id FROM sessions WHERE ended_at < ${cutoff} ORDER BY ended_at LIMIT ${limit})
        UNION
        (SELECT session_id FROM sessions WHERE is_active AND expires_at < ${cutoff} ORDER BY expires_at LIMIT ${limit})
      ),
      gone AS (DELETE FROM sessions WHERE session_id IN (SELECT session_id FROM due) RETURNING session_id),
      families AS (DELETE FROM refresh_families WHERE session_id IN (SELECT session_id FROM gone)),
      history AS (DELETE FROM session_history WHERE session_id IN (SELECT session_id FROM gone))
      SELECT count(*)::int AS n FROM gone`.execute(db);
    return rows[0]?.n ?? 0;
  }, stopping);
}
