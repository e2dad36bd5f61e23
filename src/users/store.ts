/**
 * Users, their roles and permissions.
 *
 * `email` and `phone` are personal data: written through `SensitiveColumns` (ciphertext when
 * DB_FIELD_ENCRYPTION=1) and revealed here, so every caller sees plaintext. Each is found and
 * kept unique by its blind index (`email_bidx`, `phone_bidx`), never by its stored text;
 * `username` and `full_name` stay in clear (docs/decisions.md, "Field encryption at rest").
 */
import { sql, type RawBuilder } from 'kysely';
import { phoneIndexValue, type BlindIndex } from '../platform/crypto/blind-index.js';
import type { SensitiveColumns } from '../platform/crypto/sensitive.js';
import type { Db } from '../platform/db/database.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';

export interface UserRow {
  id: number;
  uuid: string;
  username: string;
  email: string | null;
  phone: string | null;
  full_name: string | null;
  /** The language of the user's notifications (null: en). */
  language: 'en' | 'pt' | 'fr' | null;
  is_active: boolean;
  is_service_account: boolean;
  must_change_password: boolean;
  last_login_at: Date | string | null;
  created_at: Date | string;
  /** When an administrator soft-deleted the account (it is inactive too); null: not deleted. */
  deleted_at: Date | string | null;
  /** When the holder answered "this was not me" to a sign-in notice (src/risk/responses/lock.ts); null: not locked. */
  security_locked_at: Date | string | null;
}

const USER_COLUMNS = [
  'id', 'uuid', 'username', 'email', 'phone', 'full_name', 'language', 'is_active', 'is_service_account', 'must_change_password',
  'last_login_at', 'created_at', 'deleted_at', 'security_locked_at',
] as const;

export interface Grants {
  roles: string[];
  permissions: string[];
}

/** The user columns of `alias` (a joined `users`), as the finders select them. */
export function userColumnsOf(alias: string): RawBuilder<unknown> {
  return sql.join(USER_COLUMNS.map((c) => sql.ref(`${alias}.${c}`)));
}

/** `roles` and `permissions` arrays of the user whose id is `userId` (a column reference), sorted as `grants` sorts them. */
export function grantsOf(userId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    ARRAY(SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = ${userId} ORDER BY r.name) AS roles,
    ARRAY(SELECT DISTINCT p.name FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id
          JOIN permissions p ON p.id = rp.permission_id WHERE ur.user_id = ${userId} ORDER BY p.name) AS permissions`;
}

export const EMAIL_COLUMN = ENCRYPTED_COLUMNS.usersEmail.context;
export const PHONE_COLUMN = ENCRYPTED_COLUMNS.usersPhone.context;

/**
 * Serialises a user's concurrent changes that a count or a set must see whole (security answers,
 * pending device bindings): a row lock on the user until the transaction ends. FOR NO KEY UPDATE,
 * so rows that reference the user (sessions, tokens) can still be written meanwhile.
 */
export async function lockUserRow(trx: Db, userId: number): Promise<void> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forNoKeyUpdate().execute();
}

export class UserStore {
  constructor(
    private readonly db: Db,
    private readonly crypto: { sensitive: SensitiveColumns; blindIndex: BlindIndex },
  ) {}

  /** By username or email, case-insensitively (SPEC: "username or email plus password"). */
  async findByLogin(identifier: string, trx: Db = this.db): Promise<UserRow | undefined> {
    const lower = identifier.toLowerCase();
    const row = await trx
      .selectFrom('users')
      .select(USER_COLUMNS)
      .where((eb) => eb.or([eb(sql`lower(username)`, '=', lower), this.emailIs(identifier)]))
      .orderBy(sql`lower(username) = ${lower}`, 'desc') // a username match wins over an email match
      .limit(1)
      .executeTakeFirst();
    return this.reveal(row);
  }

  async findById(id: number, trx: Db = this.db): Promise<UserRow | undefined> {
    return this.reveal(await trx.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst());
  }

  /** By phone number (E.164), through its blind index: the USSD subscriber a gateway names. */
  async findByPhone(phone: string, trx: Db = this.db): Promise<UserRow | undefined> {
    return this.reveal(await trx.selectFrom('users').select(USER_COLUMNS).where(this.phoneIs(phone)).limit(1).executeTakeFirst());
  }

  async findByUuid(uuid: string, trx: Db = this.db): Promise<UserRow | undefined> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(uuid)) return undefined;
    return this.reveal(await trx.selectFrom('users').select(USER_COLUMNS).where('uuid', '=', uuid).executeTakeFirst());
  }

  /**
   * Which identifiers of a new account are taken. Sign-in accepts a username or an email, so a
   * username that is another account's email (or an email that is another account's username)
   * would let one account's sign-in reach the other: `crossed` names the fields that would
   * (issue 9, section 7).
   */
  async exists(username: string, email: string | null, phone: string | null, trx: Db = this.db): Promise<{ username: boolean; email: boolean; phone: boolean; crossed: Array<'username' | 'email'> }> {
    const lowerName = username.toLowerCase();
    const lowerEmail = email?.toLowerCase() ?? null;
    const rows = await trx
      .selectFrom('users')
      .select([
        sql<boolean>`lower(username) = ${lowerName}`.as('username_match'),
        (email ? this.emailIs(email) : sql<boolean>`false`).as('email_match'),
        this.emailIs(username).as('username_is_email'),
        sql<boolean>`lower(username) = ${lowerEmail}`.as('email_is_username'),
        (phone ? this.phoneIs(phone) : sql<boolean>`false`).as('phone_match'),
      ])
      .where((eb) => eb.or([
        eb(sql`lower(username)`, '=', lowerName), this.emailIs(username),
        ...(email ? [this.emailIs(email), eb(sql`lower(username)`, '=', lowerEmail)] : []),
        ...(phone ? [this.phoneIs(phone)] : []),
      ]))
      .execute();
    return {
      username: rows.some((r) => r.username_match),
      email: rows.some((r) => r.email_match),
      phone: rows.some((r) => r.phone_match),
      crossed: [...(rows.some((r) => r.username_is_email) ? ['username' as const] : []), ...(rows.some((r) => r.email_is_username) ? ['email' as const] : [])],
    };
  }

  /**
   * Whether another account than `exceptId` holds `email` or `phone`, and whether `email` is
   * another account's username (sign-in by it would reach that account): an administrator's
   * change of a user's contacts, checked as a creation's are (`exists`).
   */
  async contactsTaken(exceptId: number, email: string | null, phone: string | null, trx: Db = this.db): Promise<{ email: boolean; phone: boolean; crossed: Array<'email'> }> {
    if (email === null && phone === null) return { email: false, phone: false, crossed: [] };
    const lowerEmail = email?.toLowerCase() ?? null;
    const rows = await trx.selectFrom('users')
      .select([
        (email ? this.emailIs(email) : sql<boolean>`false`).as('email_match'),
        sql<boolean>`lower(username) = ${lowerEmail}`.as('email_is_username'),
        (phone ? this.phoneIs(phone) : sql<boolean>`false`).as('phone_match'),
      ])
      .where('id', '!=', exceptId)
      .where((eb) => eb.or([
        ...(email ? [this.emailIs(email), eb(sql`lower(username)`, '=', lowerEmail)] : []),
        ...(phone ? [this.phoneIs(phone)] : []),
      ]))
      .execute();
    return {
      email: rows.some((r) => r.email_match), phone: rows.some((r) => r.phone_match),
      crossed: rows.some((r) => r.email_is_username) ? ['email'] : [],
    };
  }

  /**
   * `contactsTaken`, once each new identifier (the lower-cased email, the phone's index value) is
   * locked as a creation locks it (ADVISORY_LOCKS.userCreate, in sorted order: no deadlock), so
   * a creation and a change, or two changes, cannot both take one. Inside `trx`'s transaction.
   * Shared by an administrator's change and the owner's own (src/gdpr/profile).
   */
  async contactsTakenLocked(trx: Db, exceptId: number, email: string | null, phone: string | null): Promise<{ email: boolean; phone: boolean; crossed: Array<'email'> }> {
    for (const id of [...new Set([...(email ? [email.toLowerCase()] : []), ...(phone ? [phoneIndexValue(phone)] : [])])].sort()) {
      await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.userCreate}::int, hashtext(${id}))`.execute(trx);
    }
    return this.contactsTaken(exceptId, email, phone, trx);
  }

  /** Changes what an administrator may change of a user's profile; email and phone encrypted and indexed as at creation. */
  async updateProfile(trx: Db, id: number, patch: { fullName?: string | null; email?: string | null; phone?: string | null; language?: UserRow['language']; isActive?: boolean }, now: Date): Promise<void> {
    const { sensitive, blindIndex } = this.crypto;
    const { fullName, email, phone, language, isActive } = patch;
    await trx.updateTable('users').set({
      ...(fullName === undefined ? {} : { full_name: fullName }),
      ...(email === undefined ? {} : { email: email === null ? null : sensitive.protect(email, EMAIL_COLUMN), email_bidx: email === null ? null : blindIndex.of(email) }),
      ...(phone === undefined ? {} : { phone: phone === null ? null : sensitive.protect(phone, PHONE_COLUMN), phone_bidx: phone === null ? null : blindIndex.of(phoneIndexValue(phone)) }),
      ...(language === undefined ? {} : { language }),
      ...(isActive === undefined ? {} : { is_active: isActive }),
      updated_at: now,
    }).where('id', '=', id).execute();
  }

  /** Soft deletion: inactive, and marked deleted by `by` (an administrator's uuid; null: the CLI). */
  async markDeleted(trx: Db, id: number, by: string | null, now: Date): Promise<void> {
    await trx.updateTable('users').set({ is_active: false, deleted_at: now, deleted_by: by, updated_at: now }).where('id', '=', id).execute();
  }

  /**
   * The condition "this row's email is `email`": its blind index under the current key or a
   * previous one (during a rotation), or, for a row written before migration 003 and not yet
   * indexed, its plaintext compared as before.
   */
  emailIs(email: string): RawBuilder<boolean> {
    const candidates = this.crypto.blindIndex.candidates(email);
    const lower = email.toLowerCase();
    return sql<boolean>`(email_bidx IN (${sql.join(candidates)}) OR (email_bidx IS NULL AND lower(email) = ${lower}))`;
  }

  /**
   * The condition "this row's phone is `phone`": its blind index under any configured key, or,
   * for a row written before migration 009 and not yet indexed, its stored text (in clear).
   */
  phoneIs(phone: string): RawBuilder<boolean> {
    const value = phoneIndexValue(phone);
    return sql<boolean>`(phone_bidx IN (${sql.join(this.crypto.blindIndex.candidates(value))}) OR (phone_bidx IS NULL AND phone = ${value}))`;
  }

  /** Plaintext email and phone for a row read by hand (a join elsewhere); every finder does this already. */
  reveal<T extends { email: string | null; phone: string | null } | undefined>(row: T): T {
    if (!row) return row;
    const { sensitive } = this.crypto;
    return {
      ...row,
      email: row.email === null ? null : sensitive.reveal(row.email, EMAIL_COLUMN),
      phone: row.phone === null ? null : sensitive.reveal(row.phone, PHONE_COLUMN),
    };
  }

  async count(trx: Db = this.db): Promise<number> {
    const row = await trx.selectFrom('users').select(sql<number>`count(*)::int`.as('n')).executeTakeFirst();
    return row?.n ?? 0;
  }

  async create(
    trx: Db,
    input: { username: string; email: string | null; phone: string | null; fullName: string | null; language?: 'en' | 'pt' | 'fr' | null; isServiceAccount: boolean; mustChangePassword: boolean; now: Date },
  ): Promise<UserRow> {
    const { sensitive, blindIndex } = this.crypto;
    const row = await trx
      .insertInto('users')
      .values({
        username: input.username,
        email: input.email === null ? null : sensitive.protect(input.email, EMAIL_COLUMN),
        email_bidx: input.email === null ? null : blindIndex.of(input.email),
        phone: input.phone === null ? null : sensitive.protect(input.phone, PHONE_COLUMN),
        phone_bidx: input.phone === null ? null : blindIndex.of(phoneIndexValue(input.phone)),
        full_name: input.fullName, language: input.language ?? null, is_service_account: input.isServiceAccount, must_change_password: input.mustChangePassword,
        created_at: input.now, updated_at: input.now,
      })
      .returning(USER_COLUMNS)
      .executeTakeFirstOrThrow();
    return this.reveal(row);
  }

  /** Sets the language of the user's notifications (null: en); the one before, read under the row's lock (for the audit trail). */
  async setLanguage(trx: Db, userId: number, language: UserRow['language'], now: Date): Promise<UserRow['language']> {
    const before = await trx.selectFrom('users').select('language').where('id', '=', userId).forNoKeyUpdate().executeTakeFirst();
    await trx.updateTable('users').set({ language, updated_at: now }).where('id', '=', userId).execute();
    return before?.language ?? null;
  }

  /**
   * The user's roles become exactly these; returns the names that do not exist (none linked). The
   * roles' rows are share-locked first (FOR KEY SHARE): a role deleted at the same moment either
   * waits for this change to commit (and then has a holder: 409 ROLE_IN_USE) or is gone before
   * the lock is granted (and is returned as missing), never a foreign-key failure at commit.
   */
  async setRoles(trx: Db, userId: number, roles: string[]): Promise<string[]> {
    await trx.deleteFrom('user_roles').where('user_id', '=', userId).execute();
    if (roles.length === 0) return [];
    const found = await trx.selectFrom('roles').select(['id', 'name']).where('name', 'in', roles).orderBy('id').forKeyShare().execute();
    if (found.length > 0) await trx.insertInto('user_roles').values(found.map((r) => ({ user_id: userId, role_id: r.id }))).execute();
    return roles.filter((name) => !found.some((r) => r.name === name));
  }

  async knownRoles(trx: Db = this.db): Promise<string[]> {
    return (await trx.selectFrom('roles').select('name').orderBy('name').execute()).map((r) => r.name);
  }

  async grants(userId: number, trx: Db = this.db): Promise<Grants> {
    const roles = await trx
      .selectFrom('user_roles')
      .innerJoin('roles', 'roles.id', 'user_roles.role_id')
      .select('roles.name')
      .where('user_roles.user_id', '=', userId)
      .orderBy('roles.name')
      .execute();
    const permissions = await trx
      .selectFrom('user_roles')
      .innerJoin('role_permissions', 'role_permissions.role_id', 'user_roles.role_id')
      .innerJoin('permissions', 'permissions.id', 'role_permissions.permission_id')
      .select('permissions.name')
      .distinct()
      .where('user_roles.user_id', '=', userId)
      .orderBy('permissions.name')
      .execute();
    return { roles: roles.map((r) => r.name), permissions: permissions.map((p) => p.name) };
  }

  /** Sets the name and email an identity provider holds for the user (the email encrypted and indexed like at creation). */
  async setProfile(trx: Db, id: number, profile: { email: string | null; fullName: string | null }, now: Date): Promise<void> {
    const { sensitive, blindIndex } = this.crypto;
    await trx.updateTable('users').set({
      full_name: profile.fullName,
      email: profile.email === null ? null : sensitive.protect(profile.email, EMAIL_COLUMN),
      email_bidx: profile.email === null ? null : blindIndex.of(profile.email),
      updated_at: now,
    }).where('id', '=', id).execute();
  }

  async update(trx: Db, id: number, patch: Partial<{ must_change_password: boolean; is_active: boolean; last_login_at: Date }>, now: Date): Promise<void> {
    await trx.updateTable('users').set({ ...patch, updated_at: now }).where('id', '=', id).execute();
  }
}
