/**
 * Failed-attempt counters for second factors, in the database so every node agrees. An attempt
 * is *reserved* before the code is checked, with one atomic statement that refuses once the
 * limit is reached: 20 parallel wrong codes cannot buy more tries than the limit, because each
 * must win a row update before it may compare. A success clears the counter; the limit-th
 * failure locks the factor for `lockMinutes`.
 */
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';

/** `second_factor`: TOTP and backup codes together; `security_questions`: answers. */
export type AttemptFactor = 'second_factor' | 'security_questions';

export interface AttemptLimit {
  max: number;
  lockMinutes: number;
}

/** The shared second-factor counter's limit (TOTP, backup and one-time codes together). */
export function secondFactorLimit(config: Pick<Config, 'mfa'>): AttemptLimit {
  return { max: config.mfa.maxFailures, lockMinutes: config.mfa.lockoutMinutes };
}

export type Reservation = { ok: true; failedCount: number } | { ok: false; retryAfterSec: number };

export class MfaAttempts {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /** Counts one attempt; `ok: false` (with the seconds until the lock ends) when none is left. */
  async reserve(userId: number, factor: AttemptFactor, limit: AttemptLimit, trx: Db = this.deps.db): Promise<Reservation> {
    const now = new Date(this.deps.clock.now());
    // Typed parameters: inside CASE ... THEN $n PostgreSQL would otherwise infer text (42804).
    const ts = (d: Date | null) => sql`${d}::timestamptz`;
    const at = ts(now);
    const windowStart = ts(new Date(now.getTime() - limit.lockMinutes * 60_000));
    const lockUntil = ts(new Date(now.getTime() + limit.lockMinutes * 60_000));
    // A window that ran out, or a lock that ended, starts the count again.
    const restart = sql`(mfa_attempts.window_started_at < ${windowStart} OR (mfa_attempts.locked_until IS NOT NULL AND mfa_attempts.locked_until <= ${at}))`;
    const next = sql`CASE WHEN ${restart} THEN 1 ELSE mfa_attempts.failed_count + 1 END`;
    const r = await sql<{ failed_count: number }>`
      INSERT INTO mfa_attempts (user_id, factor, failed_count, window_started_at, locked_until)
      VALUES (${userId}, ${factor}, 1, ${at}, ${limit.max <= 1 ? lockUntil : ts(null)})
      ON CONFLICT (user_id, factor) DO UPDATE SET
        failed_count = ${next},
        window_started_at = CASE WHEN ${restart} THEN ${at} ELSE mfa_attempts.window_started_at END,
        locked_until = CASE WHEN ${next} >= ${limit.max} THEN ${lockUntil} ELSE NULL END
      WHERE mfa_attempts.locked_until IS NULL OR mfa_attempts.locked_until <= ${at}
      RETURNING failed_count`.execute(trx);
    const row = r.rows[0];
    if (row) return { ok: true, failedCount: row.failed_count };
    return { ok: false, retryAfterSec: await this.retryAfter(userId, factor, trx) };
  }

  /** Seconds until the factor unlocks (0 when it is not locked). */
  async retryAfter(userId: number, factor: AttemptFactor, trx: Db = this.deps.db): Promise<number> {
    const row = await trx.selectFrom('mfa_attempts').select('locked_until').where('user_id', '=', userId).where('factor', '=', factor).executeTakeFirst();
    const until = row?.locked_until ? new Date(row.locked_until).getTime() : 0;
    return Math.max(0, Math.ceil((until - this.deps.clock.now()) / 1000));
  }

  /** A verified factor clears its counter (and any lock it set). */
  async clear(userId: number, factor: AttemptFactor, trx: Db = this.deps.db): Promise<void> {
    await trx.deleteFrom('mfa_attempts').where('user_id', '=', userId).where('factor', '=', factor).execute();
  }
}
