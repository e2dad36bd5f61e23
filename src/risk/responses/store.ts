/**
 * The notices' table (`risk_notices`, migration 042). A notice is recorded once per dedupe key
 * (`ON CONFLICT DO NOTHING`), claimed for sending by one conditional update that stamps
 * `sent_at` (of two nodes, or a node and the job, one claims it; the other finds nothing), and
 * its "this was not me" token is reserved by one conditional update that stamps `used_at` (of a
 * burst of the same token, one reserves it).
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { RiskNoticesTable } from '../../platform/db/schema.js';

export type NoticeRow = Selectable<RiskNoticesTable>;

export class NoticeStore {
  constructor(private readonly db: Db) {}

  /** Records the notice unless its key is known; true when this call recorded it. */
  async record(db: Db, row: Insertable<RiskNoticesTable>): Promise<boolean> {
    const r = await db.insertInto('risk_notices').values(row).onConflict((oc) => oc.column('dedupe_key').doNothing()).returning('id').executeTakeFirst();
    return r !== undefined;
  }

  /** Claims one unsent notice for sending; undefined when another claimed it (or it is gone). */
  async claim(db: Db, id: string, now: Date): Promise<NoticeRow | undefined> {
    return db.updateTable('risk_notices').set({ sent_at: now }).where('id', '=', id).where('sent_at', 'is', null).returningAll().executeTakeFirst();
  }

  /** Claims up to `limit` unsent notices whose link still works (the job's catch-up), oldest first. */
  async claimDue(now: Date, limit: number): Promise<NoticeRow[]> {
    const r = await sql<NoticeRow>`
      UPDATE risk_notices SET sent_at = ${now}::timestamptz WHERE id IN (
        SELECT id FROM risk_notices WHERE sent_at IS NULL AND expires_at > ${now}::timestamptz
        ORDER BY created_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING *`.execute(this.db);
    return r.rows;
  }

  /** Reserves a live, unused token: the one update that succeeds for it, in `trx`. */
  async reserve(trx: Db, tokenHash: string, now: Date): Promise<NoticeRow | undefined> {
    return trx.updateTable('risk_notices').set({ used_at: now }).where('token_hash', '=', tokenHash).where('used_at', 'is', null)
      .where('expires_at', '>', now).returningAll().executeTakeFirst();
  }

  /** A token's notice whatever its state (why a reservation failed). */
  async byToken(tokenHash: string): Promise<Pick<NoticeRow, 'used_at' | 'expires_at'> | undefined> {
    return this.db.selectFrom('risk_notices').select(['used_at', 'expires_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  /** Deletes the notices whose link has expired. */
  async purge(now: Date): Promise<number> {
    const r = await this.db.deleteFrom('risk_notices').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows ?? 0);
  }
}
