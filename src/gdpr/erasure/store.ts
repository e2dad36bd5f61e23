/**
 * The erasure requests (migration 038). Every change of state is one conditional UPDATE (`WHERE
 * state = 'pending'`, and for a hold, on `held_at`): of two parallel cancels, or a cancel racing
 * the job, or two holds, exactly one changes the row and the others see it changed.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { GdprErasuresTable } from '../../platform/db/schema.js';

export type ErasureRow = Selectable<GdprErasuresTable>;

export interface PendingErasure {
  id: string;
  user_id: string;
  requested_at: string;
  erase_after: string;
  hold: { reason: string; since: string; by: string | null } | null;
}

const iso = (d: Date | string): string => new Date(d).toISOString();

export class ErasureStore {
  constructor(private readonly db: Db) {}

  async pendingOf(userId: number, trx: Db = this.db): Promise<ErasureRow | undefined> {
    return trx.selectFrom('gdpr_erasures').selectAll().where('user_id', '=', userId).where('state', '=', 'pending').executeTakeFirst();
  }

  async byToken(tokenHash: string, trx: Db = this.db): Promise<ErasureRow | undefined> {
    return trx.selectFrom('gdpr_erasures').selectAll().where('cancel_token_hash', '=', tokenHash).where('state', '=', 'pending').executeTakeFirst();
  }

  async insert(trx: Db, r: { userId: number; userUuid: string; at: Date; eraseAfter: Date; tokenHash: string }): Promise<ErasureRow> {
    return trx.insertInto('gdpr_erasures').values({
      user_id: r.userId, user_uuid: r.userUuid, state: 'pending', requested_at: r.at, erase_after: r.eraseAfter, cancel_token_hash: r.tokenHash,
      held_at: null, held_by: null, hold_reason: null, ended_at: null, ended_via: null, counts: null,
    }).returningAll().executeTakeFirstOrThrow();
  }

  /** Ends a pending request (`cancelled` by its owner, `erased` by the job); undefined when it was not pending any more. */
  async end(trx: Db, id: string, state: 'cancelled' | 'erased', via: string, at: Date, counts?: Record<string, number>): Promise<ErasureRow | undefined> {
    return trx.updateTable('gdpr_erasures').set({ state, ended_at: at, ended_via: via, cancel_token_hash: null, ...(counts ? { counts: JSON.stringify(counts) } : {}) })
      .where('id', '=', id).where('state', '=', 'pending').returningAll().executeTakeFirst();
  }

  /**
   * A request recorded as erased at once: an erasure re-applied from the ledger on a restored
   * database that held no pending request for the account (the backup predates the request).
   * `erase_after` is when the erasure had been applied originally.
   */
  async insertErased(trx: Db, r: { userId: number; userUuid: string; requestedAt: Date; erasedBefore: Date; at: Date; via: string; counts: Record<string, number> }): Promise<ErasureRow> {
    return trx.insertInto('gdpr_erasures').values({
      user_id: r.userId, user_uuid: r.userUuid, state: 'erased', requested_at: r.requestedAt, erase_after: r.erasedBefore, cancel_token_hash: null,
      held_at: null, held_by: null, hold_reason: null, ended_at: r.at, ended_via: r.via, counts: JSON.stringify(r.counts),
    }).returningAll().executeTakeFirstOrThrow();
  }

  /** The pending request of an account, locked for this transaction (waits for the job's claim, if any, to end). */
  async lockPending(trx: Db, userId: number): Promise<ErasureRow | undefined> {
    return trx.selectFrom('gdpr_erasures').selectAll().where('user_id', '=', userId).where('state', '=', 'pending').forUpdate().executeTakeFirst();
  }

  /** Erased requests in the order they were applied, `limit` after the (ended_at, id) cursor, applied at or after `since`. */
  async erasedPage(since: Date | null, after: { at: Date; id: string } | null, limit: number): Promise<ErasureRow[]> {
    let q = this.db.selectFrom('gdpr_erasures').selectAll().where('state', '=', 'erased');
    if (since !== null) q = q.where('ended_at', '>=', since);
    if (after !== null) q = q.where((eb) => eb.or([eb('ended_at', '>', after.at), eb.and([eb('ended_at', '=', after.at), eb('id', '>', after.id)])]));
    return q.orderBy('ended_at').orderBy('id').limit(limit).execute();
  }

  /** Places (`reason`) or releases (null) a hold on a pending request; undefined when the request is not pending or already so. */
  async setHold(trx: Db, id: string, hold: { reason: string; by: string | null; at: Date } | null): Promise<ErasureRow | undefined> {
    const q = trx.updateTable('gdpr_erasures').where('id', '=', id).where('state', '=', 'pending');
    return (hold
      ? q.set({ held_at: hold.at, held_by: hold.by, hold_reason: hold.reason }).where('held_at', 'is', null)
      : q.set({ held_at: null, held_by: null, hold_reason: null }).where('held_at', 'is not', null)).returningAll().executeTakeFirst();
  }

  async get(id: string, trx: Db = this.db): Promise<ErasureRow | undefined> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
    return trx.selectFrom('gdpr_erasures').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The pending requests, soonest due first. */
  async listPending(limit: number): Promise<PendingErasure[]> {
    const rows = await this.db.selectFrom('gdpr_erasures').selectAll().where('state', '=', 'pending').orderBy('erase_after').orderBy('id').limit(limit).execute();
    return rows.map(view);
  }

  /** Claims the next due, unheld request for the job's transaction (SKIP LOCKED: another node's claim is passed over). */
  async claimDue(trx: Db, now: Date): Promise<ErasureRow | undefined> {
    return trx.selectFrom('gdpr_erasures').selectAll().where('state', '=', 'pending').where('held_at', 'is', null).where('erase_after', '<=', now)
      .orderBy('erase_after').limit(1).forUpdate().skipLocked().executeTakeFirst();
  }
}

export function view(r: ErasureRow): PendingErasure {
  return {
    id: r.id, user_id: r.user_uuid, requested_at: iso(r.requested_at), erase_after: iso(r.erase_after),
    hold: r.held_at === null ? null : { reason: r.hold_reason ?? '', since: iso(r.held_at), by: r.held_by },
  };
}
