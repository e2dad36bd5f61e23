/**
 * SQL of the MFA reset workflow. Every state change is one conditional statement, so the
 * database decides races: the partial unique index `mfa_reset_requests_open` admits one open
 * (pending or approved) request per user, and a decision updates only `WHERE status = 'pending'`
 * and not yet expired, so of two parallel approvals exactly one finds the row still pending.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { MfaResetStatus } from '../../platform/db/schema.js';

/** How the requester proved who they are. */
export type ResetProof = 'password_and_factor' | 'password_and_security_questions';

/** A request with the few user columns the queue shows. */
export interface ResetRow {
  id: string;
  user_id: number;
  user_uuid: string;
  username: string;
  status: MfaResetStatus;
  reason: string;
  proof: string;
  requested_at: Date | string;
  expires_at: Date | string;
  decided_at: Date | string | null;
  decided_by: string | null;
  decision_note: string | null;
  completed_at: Date | string | null;
}

const REQUEST_COLUMNS = [
  'r.id', 'r.user_id', 'r.status', 'r.reason', 'r.proof', 'r.requested_at', 'r.expires_at', 'r.decided_at', 'r.decided_by',
  'r.decision_note', 'r.completed_at',
] as const;

export class ResetStore {
  /** One request with its user, or undefined. */
  async find(trx: Db, id: string): Promise<ResetRow | undefined> {
    return trx.selectFrom('mfa_reset_requests as r').innerJoin('users as u', 'u.id', 'r.user_id')
      .select([...REQUEST_COLUMNS, 'u.uuid as user_uuid', 'u.username'])
      .where('r.id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Opens a pending request, or returns undefined when the user already has an open one. The
   * conflict target names the partial index's predicate literally: PostgreSQL infers a partial
   * unique index only from a predicate that implies the index's own (not from bind parameters).
   */
  async open(trx: Db, v: { userId: number; reason: string; proof: ResetProof; now: Date; expiresAt: Date }): Promise<{ id: string } | undefined> {
    const r = await sql<{ id: string }>`
      INSERT INTO mfa_reset_requests (user_id, status, reason, proof, requested_at, expires_at)
      VALUES (${v.userId}, 'pending', ${v.reason}, ${v.proof}, ${v.now}, ${v.expiresAt})
      ON CONFLICT (user_id) WHERE status IN ('pending', 'approved') DO NOTHING
      RETURNING id`.execute(trx);
    return r.rows[0];
  }

  /** Marks every pending request past its `expires_at` (of one user, or all) expired; returns them. */
  async expireDue(trx: Db, now: Date, userId?: number): Promise<Array<{ id: string; user_id: number }>> {
    let q = trx.updateTable('mfa_reset_requests').set({ status: 'expired' }).where('status', '=', 'pending').where('expires_at', '<=', now);
    if (userId !== undefined) q = q.where('user_id', '=', userId);
    return q.returning(['id', 'user_id']).execute();
  }

  /** Approves or rejects a request that is still pending and unexpired; false when it is not. */
  async decide(trx: Db, id: string, d: { status: 'approved' | 'rejected'; now: Date; by: string; note: string | null }): Promise<boolean> {
    const r = await trx.updateTable('mfa_reset_requests')
      .set({ status: d.status, decided_at: d.now, decided_by: d.by, decision_note: d.note })
      .where('id', '=', id).where('status', '=', 'pending').where('expires_at', '>', d.now)
      .returning('id')
      .executeTakeFirst();
    return r !== undefined;
  }

  /** One page of requests in a state: the pending queue oldest first, the others newest first. */
  async list(db: Db, f: { status: MfaResetStatus; limit: number; offset: number }): Promise<{ rows: ResetRow[]; total: number }> {
    const rows = await db.selectFrom('mfa_reset_requests as r').innerJoin('users as u', 'u.id', 'r.user_id')
      .select([...REQUEST_COLUMNS, 'u.uuid as user_uuid', 'u.username'])
      .where('r.status', '=', f.status)
      .orderBy('r.requested_at', f.status === 'pending' ? 'asc' : 'desc').orderBy('r.id')
      .limit(f.limit).offset(f.offset)
      .execute();
    const count = await db.selectFrom('mfa_reset_requests').select(sql<number>`count(*)::int`.as('n')).where('status', '=', f.status).executeTakeFirst();
    return { rows, total: count?.n ?? 0 };
  }
}
