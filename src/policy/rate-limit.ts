/**
 * Fixed-window request counters in the database, shared by every node. Used per client IP on
 * the sign-in routes (`SIGNIN_RATE_LIMIT_PER_MINUTE`).
 */
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { CommonErrors, retryLater } from '../platform/errors.js';

/** The sign-in rate bucket of a client network (hashed, src/policy/network.ts): sign-ins and current-password checks share it. */
export function signinRateKey(networkHash: string): string {
  return `signin:ip:${networkHash}`;
}

export class RateLimiter {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /** Counts one hit; throws 429 RATE_LIMITED with Retry-After when over `limit` per `windowSec`. */
  async hit(key: string, limit: number, windowSec = 60): Promise<void> {
    const now = this.deps.clock.now();
    const start = Math.floor(now / (windowSec * 1000)) * windowSec * 1000;
    const result = await sql<{ count: number }>`
      INSERT INTO rate_limits (key, window_start, count) VALUES (${key}, ${new Date(start)}, 1)
      ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limits.count + 1
      RETURNING count`.execute(this.deps.db);
    if (result.rows[0]!.count > limit) {
      throw retryLater(CommonErrors.RATE_LIMITED, (start + windowSec * 1000 - now) / 1000);
    }
  }

  /** Drops windows that ended before `beforeMs`. */
  async purge(beforeMs: number): Promise<void> {
    await this.deps.db.deleteFrom('rate_limits').where('window_start', '<', new Date(beforeMs)).execute();
  }
}
