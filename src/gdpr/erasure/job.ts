/**
 * The erasure job (one node, hourly): claims each due, unheld, pending request (FOR UPDATE SKIP
 * LOCKED, so a cancel racing it, or another node, sees it either still pending or erased, never
 * half done) and, per account in one transaction, applies the personal-data registry's decision
 * for every table (src/gdpr/export/registry.ts): rows deleted, the users row made a tombstone, the
 * audit trail and consent history pseudonymised, what the law makes the bank keep kept. Then the
 * request is `erased` with its counts per table, the request log gets an `erased` row, and
 * GDPR_ERASED is audited (counts per table, no data). Afterwards the touched tables are vacuumed
 * (see `vacuum`) so that the dead rows' space is marked for reuse soon. The erasure ledger
 * (ledger.ts) re-applies an erasure to a restored database through the same `eraseAccount` and
 * `recordErased`.
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/service.js';
import type { Clock } from '../../platform/clock.js';
import type { Hasher } from '../../platform/crypto/field-cipher.js';
import type { Db } from '../../platform/db/database.js';
import type { UserRow, UserStore } from '../../users/store.js';
import { PERSONAL_DATA_REGISTRY } from '../export/registry.js';
import type { ErasureContext } from './apply.js';
import { logRequest } from './service.js';
import type { ErasureRow, ErasureStore } from './store.js';

export interface ErasureJobDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  users: UserStore;
  audit: AuditLog;
  store: ErasureStore;
  /** Keyed hash of the pseudonym, addresses and fingerprints (the key never leaves the service). */
  pseudonyms: Hasher;
}

/** The account's pseudonym: `erased-` and 20 hex characters of a keyed hash of its uuid (unique per account). */
export const pseudonymOf = (h: Hasher, uuid: string): string => `erased-${h.hex(`pseudonym:${uuid}`).slice(0, 20)}`;

export class ErasureJob {
  constructor(private readonly d: ErasureJobDeps) {}

  /** Erases every due request, then vacuums the tables it touched; returns how many accounts were erased. */
  async run(stopping?: AbortSignal): Promise<number> {
    let erased = 0;
    const touched = new Set<string>();
    while (!stopping?.aborted) {
      const counts = await this.d.db.transaction().execute(async (trx) => {
        const row = await this.d.store.claimDue(trx, new Date(this.d.clock.now()));
        return row ? this.erase(trx, row) : undefined;
      });
      if (!counts) break;
      erased++;
      for (const [table, n] of Object.entries(counts)) if (n > 0) touched.add(table);
    }
    await this.vacuumAfter(touched);
    return erased;
  }

  /**
   * A plain VACUUM of the tables an erasure changed: their dead row versions are pruned and the
   * space marked for reuse now rather than whenever autovacuum comes by (PGlite has none). It
   * does not promise the old bytes are gone from the files: a pruned page keeps them in its free
   * space until reused, and the WAL keeps them until its segments are overwritten. What can be
   * promised, and the operator's `VACUUM FULL`, are in docs/decisions.md "Erasure". A failure
   * here is logged, never undoes an erasure.
   */
  private async vacuum(tables: string[]): Promise<void> {
    try {
      await sql`VACUUM ${sql.join(tables.map((t) => sql.table(t)))}`.execute(this.d.db);
    } catch (err) {
      this.d.log.warn({ err, tables }, 'vacuum after erasure failed');
    }
  }

  private async erase(trx: Db, row: ErasureRow): Promise<Record<string, number>> {
    const user = await this.d.users.findById(row.user_id, trx);
    if (!user) throw new Error(`erasure ${row.id}: account ${row.user_id} is missing`);
    const now = new Date(this.d.clock.now());
    const counts = await this.eraseAccount(trx, user, now);
    await this.d.store.end(trx, row.id, 'erased', 'job', now, counts);
    await this.recordErased(trx, user, { id: row.id, requestedAt: new Date(row.requested_at) }, counts, now);
    return counts;
  }

  /**
   * Applies the personal-data registry's decision for every table to one account, in the
   * caller's transaction; the rows touched per table. The caller ends or records the request
   * and then calls `recordErased`.
   */
  async eraseAccount(trx: Db, user: UserRow, now: Date): Promise<Record<string, number>> {
    const d = this.d;
    const pseudonym = pseudonymOf(d.pseudonyms, user.uuid);
    const ctx: ErasureContext = {
      db: trx, now, pseudonym, keyed: (v) => `k:${d.pseudonyms.hex(`value:${v}`).slice(0, 32)}`,
      user: { id: user.id, uuid: user.uuid, username: user.username, email: user.email, phone: user.phone },
    };
    const counts: Record<string, number> = {};
    // The users row last: the other decisions read the person's identifiers from it.
    const entries = [...PERSONAL_DATA_REGISTRY].sort((a, b) => Number(a.table === 'users') - Number(b.table === 'users'));
    for (const e of entries) if (e.erasure.apply) counts[e.table] = await e.erasure.apply(ctx, e.table);
    return counts;
  }

  /** The request log's `erased` row and GDPR_ERASED (counts per table, no data); `extra` adds to its details. */
  async recordErased(trx: Db, user: UserRow, request: { id: string; requestedAt: Date }, counts: Record<string, number>, now: Date, extra: Record<string, unknown> = {}): Promise<void> {
    const d = this.d;
    await logRequest(trx, user, 'erased', null, counts, now);
    await d.audit.record({
      eventType: 'GDPR_ERASED', status: 'SUCCESS', userId: user.uuid, username: pseudonymOf(d.pseudonyms, user.uuid),
      details: { erasure_id: request.id, requested_at: request.requestedAt.toISOString(), counts, ...extra },
    }, trx);
    d.log.info({ user_id: user.uuid, erasure_id: request.id, counts, ...extra }, 'account erased');
  }

  /** Vacuums `tables` (see `vacuum`), as the job does after its erasures. */
  async vacuumAfter(tables: Iterable<string>): Promise<void> {
    const list = [...new Set(tables)].sort();
    if (list.length > 0) await this.vacuum(list);
  }
}
