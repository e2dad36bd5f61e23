/**
 * Failed-attempt lockout (SPEC "States": MAX_LOGIN_ATTEMPTS failures lock the account for
 * ACCOUNT_LOCKOUT_MINUTES). Counted in the database with one atomic upsert, so every node
 * agrees and parallel attempts cannot slip past the limit. Unknown usernames are counted
 * exactly like known ones (ruling 6).
 */
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import { retryLater, type AppError } from '../platform/errors.js';
import { PolicyErrors } from './errors.js';

export interface FailureResult {
  failedCount: number;
  lockedUntil: number | null;
}

export class LoginAttempts {
  constructor(private readonly deps: { db: Db; clock: Clock; hasher: Hasher; config: Config['signin'] }) {}

  /** The counter key: the account when the identifier names one, else the identifier itself. */
  subjectKey(userId: number | undefined, identifier: string): string {
    return userId !== undefined ? `u:${userId}` : `n:${this.deps.hasher.hex(identifier.trim().toLowerCase())}`;
  }

  userKey(userId: number): string {
    return `u:${userId}`;
  }

  /** Unix ms until which the subject is locked, or null. */
  async lockedUntil(key: string): Promise<number | null> {
    const row = await this.deps.db.selectFrom('login_attempts').select('locked_until').where('subject_key', '=', key).executeTakeFirst();
    const until = row?.locked_until ? new Date(row.locked_until).getTime() : null;
    return until !== null && until > this.deps.clock.now() ? until : null;
  }

  async recordFailure(key: string): Promise<FailureResult> {
    const now = new Date(this.deps.clock.now());
    const windowStart = new Date(now.getTime() - this.deps.config.lockoutMinutes * 60_000);
    const lockUntil = new Date(now.getTime() + this.deps.config.lockoutMinutes * 60_000);
    const max = this.deps.config.maxLoginAttempts;
    // A window that ran out, or a lock that expired, starts the count again.
    const restart = sql`(login_attempts.window_started_at < ${windowStart} OR (login_attempts.locked_until IS NOT NULL AND login_attempts.locked_until <= ${now}))`;
    const newCount = sql`CASE WHEN ${restart} THEN 1 ELSE login_attempts.failed_count + 1 END`;
    const row = await sql<{ failed_count: number; locked_until: Date | string | null }>`
      INSERT INTO login_attempts (subject_key, failed_count, window_started_at, last_failed_at, locked_until)
      VALUES (${key}, 1, ${now}, ${now}, ${max <= 1 ? lockUntil : null})
      ON CONFLICT (subject_key) DO UPDATE SET
        failed_count = ${newCount},
        window_started_at = CASE WHEN ${restart} THEN ${now} ELSE login_attempts.window_started_at END,
        last_failed_at = ${now},
        locked_until = CASE
          WHEN login_attempts.locked_until > ${now} THEN login_attempts.locked_until
          WHEN ${newCount} >= ${max} THEN ${lockUntil}
          ELSE NULL END
      RETURNING failed_count, locked_until`.execute(this.deps.db);
    const r = row.rows[0]!;
    const until = r.locked_until ? new Date(r.locked_until).getTime() : null;
    return { failedCount: r.failed_count, lockedUntil: until !== null && until > now.getTime() ? until : null };
  }

  /** 429 ACCOUNT_LOCKED with Retry-After (ruling 6), for a subject locked until `until`. */
  lockedError(until: number): AppError {
    return retryLater(PolicyErrors.ACCOUNT_LOCKED, (until - this.deps.clock.now()) / 1000);
  }

  async reset(key: string): Promise<void> {
    await this.deps.db.deleteFrom('login_attempts').where('subject_key', '=', key).execute();
  }
}
