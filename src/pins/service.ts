/**
 * PIN credentials (issue 10, section 1): the USSD channel's secret. A PIN is a `credentials` row
 * of type `pin` (one per user), bcrypt-hashed like a password on the account's lane; its history
 * is `credential_history` rows of type `pin`; its rules are the `pin` row of
 * `password_restrictions` (src/pins/rules.ts). It has its own attempt counter and lockout,
 * apart from the password's: `p:` before the counter key the password would use, so five wrong
 * PINs lock USSD sign-in and leave the password sign-in alone, and the other way round.
 *
 * No encrypted copy is written (SPEC asks one for passwords): a reversible copy of a 4 to 6
 * digit secret would be its plaintext to anyone holding the key.
 */
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { accountLane, type PasswordHasher } from '../credentials/hashing.js';
import { reusesHistory, writeCredential } from '../credentials/service.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { SessionService } from '../sessions/service.js';
import type { UserRow } from '../users/store.js';
import { PinErrors } from './errors.js';
import { pinViolations, type PinRules } from './rules.js';

/** The reset-token purpose that lets its holder set a PIN (`POST /api/v1/auth/reset/pin`). */
export const PIN_CHANGE_PURPOSE = 'pin_change';

/** The PIN's counter beside a password counter key (`u:<id>`, or `n:<hash>` for an unknown identifier). */
export const pinKeyOf = (passwordKey: string): string => `p:${passwordKey}`;

/** A PIN that passed every rule, hashed, ready for `store`. */
export interface PreparedPin {
  hash: string;
}

export class PinService {
  private cached: PinRules | undefined;

  constructor(private readonly deps: { db: Db; hasher: PasswordHasher; clock: Clock; attempts: LoginAttempts; sessions: SessionService }) {}

  /** The PIN's attempt counter: the password's key, prefixed (an account's, or an unknown phone's). */
  attemptKey(userId: number | undefined, phone: string): string {
    return pinKeyOf(this.deps.attempts.subjectKey(userId, phone));
  }

  /** The PIN's attempt counter of an account. */
  userKey(userId: number): string {
    return pinKeyOf(this.deps.attempts.userKey(userId));
  }

  /** The `pin` row of `password_restrictions` (cached, as the password classes are). */
  async rules(db: Db = this.deps.db): Promise<PinRules> {
    if (this.cached) return this.cached;
    const r = await db.selectFrom('password_restrictions').selectAll().where('account_class', '=', 'pin').executeTakeFirstOrThrow();
    this.cached = {
      minLength: r.min_length, maxLength: r.max_length ?? r.max_bytes, digitsOnly: r.digits_only, noRepeatedDigits: r.no_repeated_digits,
      noSequentialDigits: r.no_sequential_digits, phoneDigitsRun: r.phone_digits_run, historyCount: r.history_count,
    };
    return this.cached;
  }

  /** The user's PIN hash, or undefined when they have none. */
  async hashOf(userId: number, db: Db = this.deps.db): Promise<string | undefined> {
    const row = await db.selectFrom('credentials').select('password_hash').where('user_id', '=', userId).where('type', '=', 'pin').executeTakeFirst();
    return row?.password_hash ?? undefined;
  }

  /**
   * One bcrypt comparison, whoever asks: an unknown phone number or an account without a PIN
   * costs a dummy comparison, so the answer time tells none of the three apart (ruling 6).
   * `lane`: the bcrypt queue's lane when there is no account (the attempt key).
   */
  async verify(user: UserRow | undefined, pin: string, lane: string): Promise<boolean> {
    const hash = user ? await this.hashOf(user.id) : undefined;
    if (!user || hash === undefined) {
      await this.deps.hasher.dummyVerify(pin, user ? accountLane(user.id) : lane);
      return false;
    }
    return this.deps.hasher.verify(pin, hash, accountLane(user.id));
  }

  /**
   * Every rule checked (422 PIN_POLICY_VIOLATION naming each broken one), then the history (the
   * last `history_count` PINs, one bcrypt each), then the hash; nothing written. Runs outside
   * any transaction: the bcrypt work holds no connection.
   */
  async prepare(user: UserRow, pin: string, db: Db = this.deps.db): Promise<PreparedPin> {
    const rules = await this.rules(db);
    const violations = pinViolations(pin, rules, { phone: user.phone });
    if (violations.length === 0 && (await reusesHistory(db, this.deps.hasher, { userId: user.id, type: 'pin', secret: pin, keep: (_at, i) => i < rules.historyCount }))) {
      violations.push({ rule: 'history', message: `Do not reuse any of your last ${rules.historyCount} PINs.` });
    }
    if (violations.length > 0) throw PinErrors.PIN_POLICY_VIOLATION({ violations });
    return { hash: await this.deps.hasher.hash(pin, accountLane(user.id)) };
  }

  /**
   * Writes a prepared PIN and its history row inside `trx`, and ends the sessions the old PIN
   * opened (channel `ussd`) but `keepSession`. Returns whether the user had a PIN before, and
   * the sessions ended (announce them after commit).
   */
  async store(trx: Db, user: UserRow, p: PreparedPin, keepSession?: string): Promise<{ replaced: boolean; ended: string[] }> {
    const replaced = (await this.hashOf(user.id, trx)) !== undefined;
    await writeCredential(trx, user.id, 'pin', { password_hash: p.hash, password_enc: null, changed_at: new Date(this.deps.clock.now()), expires_at: null, is_temporary: false, username: user.username });
    return { replaced, ended: await this.endUssdSessions(trx, user.id, keepSession) };
  }

  /** Removes the user's PIN (an administrator's reset) and ends the sessions it opened. */
  async remove(trx: Db, userId: number): Promise<{ hadPin: boolean; ended: string[] }> {
    const removed = await trx.deleteFrom('credentials').where('user_id', '=', userId).where('type', '=', 'pin').executeTakeFirst();
    return { hadPin: removed.numDeletedRows > 0n, ended: await this.endUssdSessions(trx, userId) };
  }

  /** Clears the PIN's failures and lock (a PIN set after a reset starts afresh). */
  async clearFailures(userId: number): Promise<void> {
    await this.deps.attempts.reset(this.userKey(userId));
  }

  /** The user's active sessions on the USSD channel (those a PIN opens), but `except`, ended in `trx`. */
  private endUssdSessions(trx: Db, userId: number, except?: string): Promise<string[]> {
    return this.deps.sessions.endAllForUser(trx, userId, 'pin_changed', except, 'ussd');
  }
}
