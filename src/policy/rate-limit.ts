/**
 * Fixed-window request counters in the database, shared by every node: the rate limits of the
 * authentication routes (src/policy/route-limits.ts) and the sign-in budget that current-password
 * checks share with sign-in (src/credentials/reauth.ts).
 */
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { RateGroup, RateRule } from '../platform/config-rate-limits.js';
import type { Db } from '../platform/db/database.js';
import { CommonErrors, retryLater, type AppError } from '../platform/errors.js';

/** A bucket's key: its route group, what it counts, and the hash of whom (never a name or an address in clear). */
export function rateKey(group: RateGroup, dimension: RateBucketKind, hash: string): string {
  return `${group}:${dimension}:${hash}`;
}

/** The sign-in bucket of a client network (hashed, src/policy/network.ts): sign-ins and current-password checks share it. */
export function signinRateKey(networkHash: string): string {
  return rateKey('signin', 'ip', networkHash);
}

/** `ip`: a client network; `client`: a named client (a USSD gateway); `account`: an account. */
export type RateBucketKind = 'ip' | 'client' | 'account';

export interface Bucket {
  key: string;
  kind: RateBucketKind;
  rule: RateRule;
}

/** Where the tightest bucket stands after a request: what the RateLimit-* headers say. */
export interface RateState {
  limit: number;
  remaining: number;
  /** Whole seconds until that bucket's window ends (at least 1). */
  resetSec: number;
}

/** RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (draft-ietf-httpapi-ratelimit-headers). */
export function rateHeaders(state: RateState): Record<string, string> {
  return { 'ratelimit-limit': String(state.limit), 'ratelimit-remaining': String(state.remaining), 'ratelimit-reset': String(state.resetSec) };
}

/** A refusal carries the exhausted bucket's headers, and Retry-After, with it. */
export class RateLimitedError extends Error {
  constructor(readonly state: RateState, readonly bucket: Bucket) {
    super('rate limited');
  }

  toAppError(): AppError {
    const error = retryLater(CommonErrors.RATE_LIMITED, this.state.resetSec);
    Object.assign(error.headers, rateHeaders(this.state));
    return error;
  }
}

export class RateLimiter {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /**
   * Counts one request in every bucket, in one statement. Throws RateLimitedError for the first
   * bucket past its limit (the one whose window ends last, when several are); otherwise answers
   * the state of the bucket with the fewest requests left. A refused request is still counted, so
   * hammering a closed bucket does not reopen it early.
   */
  async take(buckets: readonly Bucket[]): Promise<RateState | undefined> {
    if (buckets.length === 0) return undefined;
    const now = this.deps.clock.now();
    const windows = buckets.map((b) => {
      const ms = b.rule.windowSec * 1000;
      const start = Math.floor(now / ms) * ms;
      return { ...b, start, resetSec: Math.max(1, Math.ceil((start + ms - now) / 1000)) };
    });
    const rows = sql.join(windows.map((w) => sql`(${w.key}, ${new Date(w.start)}, ${new Date(w.start + w.rule.windowSec * 1000)}, 1)`));
    const result = await sql<{ key: string; count: number }>`
      INSERT INTO rate_limits (key, window_start, window_end, count) VALUES ${rows}
      ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limits.count + 1
      RETURNING key, count`.execute(this.deps.db);
    const counts = new Map(result.rows.map((r) => [r.key, Number(r.count)]));
    const states = windows.map((w) => ({ bucket: { key: w.key, kind: w.kind, rule: w.rule }, state: { limit: w.rule.limit, remaining: Math.max(0, w.rule.limit - (counts.get(w.key) ?? 0)), resetSec: w.resetSec }, over: (counts.get(w.key) ?? 0) > w.rule.limit }));
    const exceeded = states.filter((s) => s.over).sort((a, b) => b.state.resetSec - a.state.resetSec)[0];
    if (exceeded) throw new RateLimitedError(exceeded.state, exceeded.bucket);
    return states.map((s) => s.state).sort((a, b) => a.remaining - b.remaining || b.resetSec - a.resetSec)[0];
  }

  /** Counts one hit in one bucket; throws 429 RATE_LIMITED with Retry-After and RateLimit-* past the limit. */
  async hit(key: string, rule: RateRule): Promise<void> {
    try {
      await this.take([{ key, kind: 'ip', rule }]);
    } catch (err) {
      throw err instanceof RateLimitedError ? err.toAppError() : err;
    }
  }

  /** Drops the windows that are over. */
  async purge(): Promise<void> {
    await this.deps.db.deleteFrom('rate_limits').where('window_end', '<=', new Date(this.deps.clock.now())).execute();
  }
}
