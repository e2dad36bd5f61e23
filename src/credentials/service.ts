/**
 * Password credentials: setting (policy, history, expiry, temporary flag) and checking.
 * The bcrypt hash is what sign-in checks. SPEC also asks for a symmetric encrypted copy; it is
 * written under its own derived key and no code path ever decrypts it (docs/decisions.md).
 */
import { randomInt } from 'node:crypto';
import type { Clock } from '../platform/clock.js';
import type { FieldCipher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { CredentialsTable } from '../platform/db/schema.js';
import type { Insertable } from 'kysely';
import type { UserRow, UserStore } from '../users/store.js';
import { CredentialErrors } from './errors.js';
import type { ExternalPasswords } from './external.js';
import { accountLane, type PasswordHasher } from './hashing.js';
import type { AccountClass, PasswordPolicy } from './policy.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';

export interface PasswordState {
  hash: string | null;
  expiresAt: number | null;
  isTemporary: boolean;
}

const COPY_CONTEXT = ENCRYPTED_COLUMNS.passwordCopy.context;

/**
 * The most stored passwords one change compares against (docs/decisions.md, "Password history
 * ceiling"): the last 8 and a year of monthly changes fit with room to spare.
 */
export const HISTORY_COMPARISON_CEILING = 24;

/** A password that passed every rule, hashed and encrypted, ready for `store`. */
export interface PreparedPassword {
  hash: string;
  enc: string;
  temporary: boolean;
  expiryDays: number | null;
}

/** What a credential row holds besides its owner and type. */
export type CredentialValues = Omit<Insertable<CredentialsTable>, 'user_id' | 'type'> & { password_hash: string; changed_at: Date };

/** Writes a user's secret of `type` (a password, a PIN) in `trx`, replacing the old one, with its history row. */
export async function writeCredential(trx: Db, userId: number, type: 'password' | 'pin', values: CredentialValues): Promise<void> {
  await trx.insertInto('credentials').values({ user_id: userId, type, ...values })
    .onConflict((oc) => oc.columns(['user_id', 'type']).doUpdateSet(values)).execute();
  await trx.insertInto('credential_history').values({ user_id: userId, type, password_hash: values.password_hash, created_at: values.changed_at }).execute();
}

/**
 * Whether `secret` is one of the user's past secrets of `type` that `keep` selects (by age and
 * position, newest first), comparing at most HISTORY_COMPARISON_CEILING of them, each in the
 * account's lane of the bcrypt queue.
 */
export async function reusesHistory(db: Db, hasher: PasswordHasher, q: { userId: number; type: 'password' | 'pin'; secret: string; keep: (createdAt: Date, index: number) => boolean }): Promise<boolean> {
  const newest = await db.selectFrom('credential_history').select(['password_hash', 'created_at']).where('user_id', '=', q.userId).where('type', '=', q.type)
    .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(HISTORY_COMPARISON_CEILING).execute();
  const hashes = new Set(newest.filter((h, i) => q.keep(new Date(h.created_at), i)).map((h) => h.password_hash));
  const matches = await Promise.all([...hashes].map((h) => hasher.verify(q.secret, h, accountLane(q.userId))));
  return matches.some(Boolean);
}

export class CredentialService {
  constructor(
    private readonly deps: { db: Db; hasher: PasswordHasher; policy: PasswordPolicy; cipher: FieldCipher; clock: Clock; users: UserStore; external: ExternalPasswords },
  ) {}

  async accountClass(user: UserRow, trx: Db = this.deps.db): Promise<AccountClass> {
    return classOf(user, user.is_service_account ? [] : (await this.deps.users.grants(user.id, trx)).roles);
  }

  /** How many days before expiry the user's class warns (password_restrictions.warn_days; cached). */
  async warnDays(user: UserRow, roles: string[]): Promise<number> {
    return (await this.deps.policy.restrictions(classOf(user, roles))).warnDays;
  }

  /**
   * 409 PASSWORD_MANAGED_EXTERNALLY for an account whose password another system keeps (a
   * directory user): a local password would let the person in after the directory shut them out.
   */
  async assertLocalPassword(userId: number, db: Db = this.deps.db): Promise<void> {
    const link = await this.deps.external.linkOf(userId, db);
    if (link) throw CredentialErrors.PASSWORD_MANAGED_EXTERNALLY({ idp_type: link.idpType });
  }

  /**
   * Whether `password` is the user's current password: bcrypt against the stored hash (a dummy
   * comparison when there is none) in `lane` of the bcrypt queue, or, for a directory user, a
   * bind as their entry (which may throw the directory's own 401 LDAP_UNAVAILABLE).
   */
  async verifyCurrent(userId: number, password: string, lane: string): Promise<boolean> {
    const link = await this.deps.external.linkOf(userId);
    if (link) return this.deps.external.verify(link, password);
    return this.deps.hasher.verify(password, (await this.state(userId))?.hash ?? null, lane);
  }

  async state(userId: number, trx: Db = this.deps.db): Promise<PasswordState | undefined> {
    const row = await trx.selectFrom('credentials').select(['password_hash', 'expires_at', 'is_temporary']).where('user_id', '=', userId).where('type', '=', 'password').executeTakeFirst();
    if (!row) return undefined;
    return { hash: row.password_hash, expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null, isTemporary: row.is_temporary };
  }

  /**
   * Sets a password after checking every rule. A temporary password (admin-issued) must be
   * changed at the next sign-in; it skips the history rule since the user never chose it.
   * Prefer `prepare` before the transaction and `store` inside it: the checks and the bcrypt
   * work then hold no connection (on PGlite, the only one) and no lock.
   */
  async setPassword(trx: Db, user: UserRow, password: string, opts: { temporary: boolean }): Promise<{ expiresAt: number | null }> {
    return this.store(trx, user, await this.prepare(user, password, opts, trx));
  }

  /** Every rule checked (422 PASSWORD_POLICY_VIOLATION), the hash and the encrypted copy made; nothing written. */
  async prepare(user: UserRow, password: string, opts: { temporary: boolean }, db: Db = this.deps.db): Promise<PreparedPassword> {
    // The one way to a stored password (links are made only with the account, so none can appear later).
    await this.assertLocalPassword(user.id, db);
    const accountClass = await this.accountClass(user, db);
    const violations = await this.deps.policy.check(password, { username: user.username, email: user.email, accountClass }, db);
    const r = await this.deps.policy.restrictions(accountClass, db);
    if (!opts.temporary && violations.length === 0 && (await this.reusesHistory(db, user.id, password, r.historyCount, r.reuseMonths))) {
      violations.push({ rule: 'history', message: `Do not reuse any of your last ${r.historyCount} passwords or one used in the last ${r.reuseMonths} months.` });
    }
    if (violations.length > 0) throw CredentialErrors.PASSWORD_POLICY_VIOLATION({ violations });
    return {
      hash: await this.deps.hasher.hash(password, accountLane(user.id)),
      enc: this.deps.cipher.encrypt(password, COPY_CONTEXT),
      temporary: opts.temporary,
      expiryDays: opts.temporary ? null : r.expiryDays,
    };
  }

  /** Writes a prepared password (and its history row) inside `trx`. */
  async store(trx: Db, user: UserRow, p: PreparedPassword): Promise<{ expiresAt: number | null }> {
    const now = this.deps.clock.now();
    const expiresAt = p.expiryDays === null ? null : now + p.expiryDays * 86_400_000;
    const values = {
      password_hash: p.hash, password_enc: p.enc, changed_at: new Date(now),
      expires_at: expiresAt === null ? null : new Date(expiresAt), is_temporary: p.temporary, username: user.username,
      expiry_warned_at: null, // a new password earns its own expiry warning
    };
    await writeCredential(trx, user.id, 'password', values);
    await this.deps.users.update(trx, user.id, { must_change_password: p.temporary }, new Date(now));
    return { expiresAt };
  }

  /**
   * Ruling 3: the last N passwords and any used within the last M months, newest first, at most
   * HISTORY_COMPARISON_CEILING of them: each is a bcrypt comparison, and someone who changed
   * their password daily must not make their next change cost minutes of the pool (issue 9,
   * section 3). The rows within M months are the newest ones, so one ordered query serves both.
   */
  private async reusesHistory(trx: Db, userId: number, password: string, count: number, months: number): Promise<boolean> {
    const since = new Date(this.deps.clock.now());
    since.setUTCMonth(since.getUTCMonth() - months); // calendar months, not 30-day ones
    return reusesHistory(trx, this.deps.hasher, { userId, type: 'password', secret: password, keep: (createdAt, i) => i < count || createdAt >= since });
  }

  /** A random password that meets the policy, for admin-created users and resets. */
  async temporaryPassword(user: UserRow, trx: Db = this.deps.db): Promise<string> {
    const accountClass = await this.accountClass(user, trx);
    const sets = ['ABCDEFGHJKLMNPQRSTUVWXYZ', 'abcdefghijkmnpqrstuvwxyz', '23456789', '!#%+-=?@^_'];
    for (;;) {
      const chars = sets.map((s) => s[randomInt(s.length)]!);
      const all = sets.join('');
      while (chars.length < 20) chars.push(all[randomInt(all.length)]!);
      for (let i = chars.length - 1; i > 0; i--) {
        const j = randomInt(i + 1);
        [chars[i], chars[j]] = [chars[j]!, chars[i]!];
      }
      const candidate = chars.join('');
      const v = await this.deps.policy.check(candidate, { username: user.username, email: user.email, accountClass }, trx);
      if (v.length === 0) return candidate;
    }
  }
}

function classOf(user: UserRow, roles: string[]): AccountClass {
  if (user.is_service_account) return 'service';
  return roles.includes('admin') ? 'admin' : 'regular';
}
