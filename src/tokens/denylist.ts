/**
 * Revoked access-token ids (jti), held until the token's own expiry (SPEC "States": revocation).
 * Checked on every request, so each node keeps them in memory: a new entry reaches the other
 * nodes by NOTIFY at once, and a periodic re-sync bounds the staleness to `CACHE_SYNC_MS` even
 * if a notification is lost.
 */
import type { Clock } from '../platform/clock.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';

const SYNC_SLACK_MS = 60_000;

export class Denylist {
  private readonly denied = new Map<string, number>();
  private syncedUpTo = 0;

  constructor(private readonly deps: { db: Db; clock: Clock; bus: EventBus }) {
    deps.bus.subscribe((e) => {
      if (e.type === 'token.denied') this.denied.set(e.jti, e.expiresAt);
    });
  }

  isDenied(jti: string): boolean {
    const exp = this.denied.get(jti);
    return exp !== undefined && exp > this.deps.clock.now();
  }

  /**
   * Denylists a jti until `expiresAtMs`: a revoked access token, or a spent single-use token
   * (reset, 2FA, proof). Says whether this call did it (false: it was denied already). The insert is the arbiter, so of two parallel spends
   * exactly one wins. `announce` after commit.
   */
  async spend(jti: string, expiresAtMs: number, reason: string, trx: Db = this.deps.db): Promise<boolean> {
    const row = await trx
      .insertInto('token_denylist')
      .values({ jti, expires_at: new Date(expiresAtMs), created_at: new Date(this.deps.clock.now()), reason })
      .onConflict((oc) => oc.column('jti').doNothing())
      .returning('jti')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Tells every node (this one included) about a jti already written by `spend`. */
  async announce(jti: string, expiresAtMs: number): Promise<void> {
    await this.deps.bus.publish({ type: 'token.denied', jti, expiresAt: expiresAtMs });
  }

  /** Loads entries created since the last sync (all live ones on the first call). */
  async sync(): Promise<void> {
    const now = this.deps.clock.now();
    let q = this.deps.db.selectFrom('token_denylist').select(['jti', 'expires_at']).where('expires_at', '>', new Date(now));
    if (this.syncedUpTo > 0) q = q.where('created_at', '>', new Date(this.syncedUpTo - SYNC_SLACK_MS));
    for (const row of await q.execute()) this.denied.set(row.jti, new Date(row.expires_at).getTime());
    for (const [jti, exp] of this.denied) if (exp <= now) this.denied.delete(jti);
    this.syncedUpTo = now;
  }

  /** Deletes entries whose token has expired anyway (a one-node background job). */
  async purgeExpired(): Promise<void> {
    await this.deps.db.deleteFrom('token_denylist').where('expires_at', '<', new Date(this.deps.clock.now())).execute();
  }
}
