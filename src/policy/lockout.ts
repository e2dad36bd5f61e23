/**
 * Failed-attempt lockout (SPEC "States": MAX_LOGIN_ATTEMPTS failures lock the account for
 * ACCOUNT_LOCKOUT_MINUTES), counted in the database so every node agrees. Unknown usernames are
 * counted exactly like known ones (ruling 6).
 *
 * An attempt is *reserved* before the password is compared, by one atomic upsert that refuses
 * once MAX_LOGIN_ATTEMPTS attempts are counted in the window: whatever the concurrency, across
 * nodes, at most that many comparisons run per lock period (issue 9, section 1). The reserved
 * attempt counts as a failure until the comparison says otherwise:
 *
 * - wrong password: it stays counted, and the attempt that finds the count at the limit locks;
 * - right password: it gives back itself and the failures counted *before* it (its position),
 *   never those other requests reserved while it ran; when the account was locked meanwhile,
 *   the right password is refused too, until the lock ends.
 *
 * While every allowed attempt is taken by requests still comparing, a new one waits (bounded)
 * for one of them to end rather than compare beside them: legitimate parallel sign-ins get
 * through one after another, a guessing burst gets no extra comparison.
 */
import { sql } from 'kysely';
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { CommonErrors, retryLater, type AppError } from '../platform/errors.js';
import { PolicyErrors } from './errors.js';

/** Who made an attempt, for the audit trail. */
export interface AttemptAudit extends AuditContext {
  userId: string | null | undefined;
  username: string;
}

/** What an attempt under `LoginAttempts.attempt` came to. */
export type AttemptOutcome<T> =
  /** Refused before any comparison: locked. */
  | { kind: 'locked'; lockedUntil: number }
  /** Refused before any comparison: every allowed attempt still comparing after the wait (not a lock). */
  | { kind: 'busy' }
  /** Compared and wrong; `lockedUntil` when this failure locked the subject. */
  | { kind: 'failed'; failedCount: number; lockedUntil: number | null }
  /** Compared and right, and the subject is not locked. */
  | { kind: 'ok'; value: T };

/**
 * A channel's failed-attempt limit and lock length (its access policy's, issue 10); what it does
 * not set is MAX_LOGIN_ATTEMPTS and ACCOUNT_LOCKOUT_MINUTES. One counter per account serves every
 * channel: a check on a channel is refused once the failures reach that channel's limit, so
 * guesses spread over channels add up, never multiply.
 */
export interface AttemptLimits {
  maxAttempts?: number;
  lockoutMinutes?: number;
}

/** How long an attempt waits for a slot while every allowed attempt is still comparing. */
const SLOT_WAIT_MS = 3000;
/** How often a waiting attempt re-checks for a slot freed on another node. */
const SLOT_RECHECK_MS = 200;

export class LoginAttempts {
  private readonly waiters = new Map<string, Set<() => void>>();

  private readonly slotWaitMs: number;

  /**
   * `slotWaitMs`: how long an attempt waits for a slot (SLOT_WAIT_MS; shorter in tests).
   * `metrics`: counts each lock (`strongroom_account_locks_total`).
   */
  constructor(private readonly deps: { db: Db; clock: Clock; hasher: Hasher; audit: AuditLog; config: Config['signin']; slotWaitMs?: number; metrics?: Pick<Metrics, 'accountLocks'> }) {
    this.slotWaitMs = deps.slotWaitMs ?? SLOT_WAIT_MS;
  }

  /** The counter key: the account when the identifier names one, else the identifier itself. */
  subjectKey(userId: number | undefined, identifier: string): string {
    return userId !== undefined ? this.userKey(userId) : `n:${this.deps.hasher.hex(identifier.trim().toLowerCase())}`;
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

  /**
   * Runs `check` (a password comparison; null means wrong) under a reserved attempt, so that
   * no more than MAX_LOGIN_ATTEMPTS (or the channel's `limits`) checks of one subject run per
   * lock period.
   */
  async attempt<T>(key: string, check: () => Promise<T | null>, channelLimits: AttemptLimits = {}): Promise<AttemptOutcome<T>> {
    const limits = this.limits(channelLimits);
    const reserved = await this.reserveOrWait(key, limits);
    if (reserved.kind !== 'reserved') return reserved;
    let value: T | null;
    try {
      value = await check();
    } catch (err) {
      await this.release(key, 1).finally(() => this.wake(key)); // no verdict: give back this attempt only
      throw err;
    }
    try {
      if (value === null) return { kind: 'failed', ...(await this.fail(key, limits)) };
      const after = await this.release(key, reserved.position);
      return after === null ? { kind: 'ok', value } : { kind: 'locked', lockedUntil: after };
    } finally {
      this.wake(key);
    }
  }

  /**
   * Reserves an attempt; while every allowed attempt is taken by requests still comparing
   * (six parallel sign-ins of one service account, say), waits for one of them to end, for at
   * most SLOT_WAIT_MS: woken at once by an attempt that ends on this node, re-checked every
   * SLOT_RECHECK_MS for one that ends on another. Still busy then: `busy` (429 RATE_LIMITED,
   * retry in a second), never a made-up lock.
   */
  private async reserveOrWait(key: string, limits: Required<AttemptLimits>): Promise<{ kind: 'reserved'; position: number } | { kind: 'locked'; lockedUntil: number } | { kind: 'busy' }> {
    const deadline = Date.now() + this.slotWaitMs; // real time: a frozen test clock must not wait for ever
    for (;;) {
      const r = await this.reserve(key, limits);
      if (r.kind !== 'busy') return r;
      const left = deadline - Date.now();
      if (left <= 0) return r; // still busy: not a lock, so not answered as one
      await this.attemptEnded(key, Math.min(left, SLOT_RECHECK_MS));
    }
  }

  /** Resolves when an attempt on `key` ends on this node, or after `ms`. */
  private attemptEnded(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.waiters.get(key) ?? new Set<() => void>();
      this.waiters.set(key, waiters);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(key) === waiters) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      waiters.add(done);
    });
  }

  private wake(key: string): void {
    for (const done of [...(this.waiters.get(key) ?? [])]) done();
  }

  private limits(channel: AttemptLimits): Required<AttemptLimits> {
    return { maxAttempts: channel.maxAttempts ?? this.deps.config.maxLoginAttempts, lockoutMinutes: channel.lockoutMinutes ?? this.deps.config.lockoutMinutes };
  }

  /** Counts one attempt before any comparison; `position` is the count it made. */
  private async reserve(key: string, limits: Required<AttemptLimits>): Promise<{ kind: 'reserved'; position: number } | { kind: 'locked'; lockedUntil: number } | { kind: 'busy' }> {
    const now = this.deps.clock.now();
    const at = sql`${new Date(now)}::timestamptz`;
    // A counter's window is the longest lock it has been counted under (it only grows while the
    // window runs): whether it ran out is read from that alone, as the lock's end and the
    // clean-up read it, so the three agree.
    const storedWindow = sql`COALESCE(login_attempts.window_minutes, ${this.deps.config.lockoutMinutes})`;
    const windowMinutes = sql`GREATEST(${storedWindow}, ${limits.lockoutMinutes})`;
    // A lock that ended, or (with no lock) a window that ran out, starts the count again. A
    // running lock holds to its end even when the window it was counted in has ended.
    const restart = sql`((login_attempts.locked_until IS NOT NULL AND login_attempts.locked_until <= ${at}) OR (login_attempts.locked_until IS NULL AND login_attempts.window_started_at + ${storedWindow} * interval '1 minute' < ${at}))`;
    // One round trip: the upsert, and the row as it stood before it (the statement's snapshot),
    // whose lock tells a refused reservation from a busy one.
    const row = await sql<{ position: number | null; locked_until: Date | string | null; settled: number | null; window_ends: Date | string | null }>`
      WITH reserved AS (
        INSERT INTO login_attempts (subject_key, failed_count, window_started_at, last_failed_at, locked_until, window_minutes, pending)
        VALUES (${key}, 1, ${at}, ${at}, NULL, ${limits.lockoutMinutes}, 1)
        ON CONFLICT (subject_key) DO UPDATE SET
          failed_count = CASE WHEN ${restart} THEN 1 ELSE login_attempts.failed_count + 1 END,
          pending = CASE WHEN ${restart} THEN 1 ELSE login_attempts.pending + 1 END,
          window_started_at = CASE WHEN ${restart} THEN ${at} ELSE login_attempts.window_started_at END,
          locked_until = CASE WHEN ${restart} THEN NULL ELSE login_attempts.locked_until END,
          window_minutes = CASE WHEN ${restart} THEN ${limits.lockoutMinutes} ELSE ${windowMinutes} END,
          last_failed_at = ${at}
        WHERE ${restart} OR (login_attempts.locked_until IS NULL AND login_attempts.failed_count < ${limits.maxAttempts})
        RETURNING failed_count)
      SELECT (SELECT failed_count FROM reserved) AS position, la.locked_until, la.failed_count - la.pending AS settled,
             la.window_started_at + COALESCE(la.window_minutes, ${this.deps.config.lockoutMinutes}) * interval '1 minute' AS window_ends
      FROM (SELECT 1) AS one LEFT JOIN login_attempts la ON la.subject_key = ${key}`.execute(this.deps.db);
    const r = row.rows[0]!;
    if (r.position !== null) return { kind: 'reserved', position: r.position };
    // Failures already decided (not attempts still comparing) at this channel's limit, counted on
    // a channel that allows more: locked here until they age out of the window.
    if (r.locked_until === null && r.settled !== null && Number(r.settled) >= limits.maxAttempts && r.window_ends !== null) {
      return { kind: 'locked', lockedUntil: new Date(r.window_ends).getTime() };
    }
    // Locked, or every allowed attempt is taken by requests still comparing.
    const until = r.locked_until === null ? null : new Date(r.locked_until).getTime();
    return until !== null && until > now ? { kind: 'locked', lockedUntil: until } : { kind: 'busy' };
  }

  /** The reserved attempt failed: it stays counted; at the limit the subject locks. */
  private async fail(key: string, limits: Required<AttemptLimits>): Promise<{ failedCount: number; lockedUntil: number | null }> {
    const now = this.deps.clock.now();
    const at = sql`${new Date(now)}::timestamptz`;
    const lockUntil = sql`${new Date(now + limits.lockoutMinutes * 60_000)}::timestamptz`;
    // The row is locked first, so of two failures that reach the limit together one locks (and says so).
    const row = await sql<{ failed_count: number; locked_until: Date | string | null; locked_now: boolean }>`
      WITH before AS (SELECT subject_key, locked_until FROM login_attempts WHERE subject_key = ${key} FOR UPDATE)
      UPDATE login_attempts AS la SET
        last_failed_at = ${at},
        pending = GREATEST(la.pending - 1, 0),
        locked_until = CASE
          WHEN before.locked_until > ${at} THEN before.locked_until
          WHEN la.failed_count >= ${limits.maxAttempts} THEN ${lockUntil}
          ELSE before.locked_until END
      FROM before WHERE la.subject_key = before.subject_key
      RETURNING la.failed_count, la.locked_until, (before.locked_until IS NULL OR before.locked_until <= ${at}) AND la.locked_until > ${at} AS locked_now`.execute(this.deps.db);
    const r = row.rows[0];
    // No row: an administrator unlocked the subject while this attempt compared.
    if (!r) return { failedCount: 0, lockedUntil: null };
    return { failedCount: r.failed_count, lockedUntil: r.locked_now ? new Date(r.locked_until!).getTime() : null };
  }

  /**
   * Gives back `count` counted attempts (a success: its position). Returns when the subject is
   * locked until, or null when it is not locked and the success stands.
   */
  private async release(key: string, count: number): Promise<number | null> {
    const at = sql`${new Date(this.deps.clock.now())}::timestamptz`;
    const row = await sql<{ failed_count: number }>`
      UPDATE login_attempts SET failed_count = GREATEST(failed_count - ${count}, 0), pending = GREATEST(pending - 1, 0)
      WHERE subject_key = ${key} AND (locked_until IS NULL OR locked_until <= ${at})
      RETURNING failed_count`.execute(this.deps.db);
    if (row.rows[0] !== undefined) return null;
    return this.lockedUntil(key); // no row: locked meanwhile (or unlocked by an administrator: null)
  }

  /**
   * Deletes counters that no longer count: their window has ended and they hold no lock. A
   * stream of random usernames leaves one row each; without this the table only grows. Such a
   * row would restart at 1 anyway, so deleting it changes no answer.
   */
  async purgeStale(): Promise<number> {
    const now = this.deps.clock.now();
    const r = await this.deps.db
      .deleteFrom('login_attempts')
      // Each counter's own window: a channel's lockout may be longer than the default.
      .where(sql<boolean>`window_started_at + COALESCE(window_minutes, ${this.deps.config.lockoutMinutes}) * interval '1 minute' < ${new Date(now)}::timestamptz`)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', new Date(now))]))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /**
   * Audits an attempt that did not succeed and returns the error to answer with: 429
   * ACCOUNT_LOCKED when the subject is locked (before the attempt: LOCKED_LOGIN_ATTEMPT; by
   * this failure: FAILED_LOGIN_ATTEMPT then ACCOUNT_LOCKED), 429 RATE_LIMITED unaudited when
   * every allowed attempt was still comparing (nothing was compared), or null for a plain wrong
   * secret (FAILED_LOGIN_ATTEMPT with `reason` and the count), whose error is the caller's.
   */
  async refusal(outcome: Exclude<AttemptOutcome<unknown>, { kind: 'ok' }>, who: AttemptAudit, details: { reason: string } & Record<string, unknown>): Promise<AppError | null> {
    const { audit } = this.deps;
    if (outcome.kind === 'busy') return retryLater(CommonErrors.RATE_LIMITED, 1); // nothing compared: nothing to audit
    if (outcome.kind === 'locked') {
      await audit.record({ ...who, eventType: 'LOCKED_LOGIN_ATTEMPT', status: 'FAILURE', details: { ...details, reason: 'account_locked' } });
      return this.lockedError(outcome.lockedUntil);
    }
    await audit.record({ ...who, eventType: 'FAILED_LOGIN_ATTEMPT', status: 'FAILURE', details: { ...details, failed_count: outcome.failedCount } });
    if (outcome.lockedUntil === null) return null;
    await audit.record({ ...who, eventType: 'ACCOUNT_LOCKED', status: 'SUCCESS', details: { locked_until: new Date(outcome.lockedUntil).toISOString() } });
    this.deps.metrics?.accountLocks.inc({ channel: who.channel ?? 'unknown', reason: details.reason });
    return this.lockedError(outcome.lockedUntil);
  }

  /** 429 ACCOUNT_LOCKED with Retry-After (ruling 6), for a subject locked until `until`. */
  lockedError(until: number): AppError {
    return retryLater(PolicyErrors.ACCOUNT_LOCKED, (until - this.deps.clock.now()) / 1000);
  }

  /**
   * Locks `key` until `until` whatever its count (a risk response's `lock_account`); a longer lock
   * it holds already stays. Lifted as every lock is: by time, or an administrator's unlock.
   */
  async lockFor(key: string, until: number): Promise<void> {
    const now = new Date(this.deps.clock.now());
    const end = sql`${new Date(until)}::timestamptz`;
    await sql`
      INSERT INTO login_attempts (subject_key, failed_count, pending, window_started_at, last_failed_at, locked_until)
      VALUES (${key}, 0, 0, ${now}, ${now}, ${end})
      ON CONFLICT (subject_key) DO UPDATE SET locked_until = GREATEST(COALESCE(login_attempts.locked_until, ${end}), ${end})`.execute(this.deps.db);
  }

  async reset(key: string): Promise<void> {
    await this.deps.db.deleteFrom('login_attempts').where('subject_key', '=', key).execute();
  }
}
