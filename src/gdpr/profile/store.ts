/**
 * The profile's storage: the date of birth (a column of `users`, written like the email and the
 * phone: ciphertext when DB_FIELD_ENCRYPTION=1) and the contact changes waiting for their code
 * (`profile_contact_changes`). A row is one code sent for a new address. Only the newest row of a
 * user and kind that no newer request replaced is live; every check-and-change of it (an attempt,
 * its use) is one conditional statement, so parallel requests and nodes agree without locks.
 */
import { sql } from 'kysely';
import { ENCRYPTED_COLUMNS } from '../../platform/crypto/columns.js';
import type { SensitiveColumns } from '../../platform/crypto/sensitive.js';
import type { Db } from '../../platform/db/database.js';
import { PURGE_BATCH, purgeInBatches } from '../../platform/db/purge.js';
import type { UserRow, UserStore } from '../../users/store.js';
import type { ContactKind } from './messages.js';

export const DATE_OF_BIRTH_COLUMN = ENCRYPTED_COLUMNS.usersDateOfBirth.context;
export const NEW_VALUE_COLUMN = ENCRYPTED_COLUMNS.contactChangeValue.context;

/** A contact change waiting for its code, as the person sees it: the new address masked. */
export interface PendingContactChange {
  kind: ContactKind;
  /** The new address, masked: until the code is entered it is not known to be the person's. */
  destination: string;
  requested_at: Date;
  expires_at: Date;
}

/** The signed-in person's profile: the users row revealed, the date of birth, the pending changes. */
export interface Profile {
  user: UserRow;
  /** `YYYY-MM-DD`, or null. */
  dateOfBirth: string | null;
  pending: PendingContactChange[];
}

/** The live row of a user's change of one kind (or the last one used, so a replay is told so). */
export interface CurrentChange {
  id: string;
  destination_masked: string;
  expires_at: Date;
  consumed_at: Date | null;
}

export interface NewChange {
  id: string;
  userId: number;
  kind: ContactKind;
  value: string;
  destination: string;
  codeHash: string;
  expiresAt: Date;
}

export class ProfileStore {
  constructor(private readonly deps: { db: Db; users: UserStore; sensitive: SensitiveColumns }) {}

  /**
   * The profile of `userId` (undefined: no such user), read on `db` (a transaction's, or the
   * pool): what GET /api/v1/auth/profile shows and what an export of the person's data takes.
   * Pending changes: live, unused and unexpired at `now`.
   */
  async profileOf(db: Db, userId: number, now: Date = new Date()): Promise<Profile | undefined> {
    const user = await this.deps.users.findById(userId, db);
    if (!user) return undefined;
    const pending = await db.selectFrom('profile_contact_changes').select(['kind', 'destination_masked', 'created_at', 'expires_at'])
      .where('user_id', '=', userId).where('consumed_at', 'is', null).where('superseded_at', 'is', null).where('expires_at', '>', now)
      .orderBy('kind').execute();
    return {
      user, dateOfBirth: await this.dateOfBirth(db, userId),
      pending: pending.map((p) => ({ kind: p.kind, destination: p.destination_masked, requested_at: new Date(p.created_at), expires_at: new Date(p.expires_at) })),
    };
  }

  async dateOfBirth(db: Db, userId: number): Promise<string | null> {
    const row = await db.selectFrom('users').select('date_of_birth').where('id', '=', userId).executeTakeFirst();
    return row?.date_of_birth == null ? null : this.deps.sensitive.reveal(row.date_of_birth, DATE_OF_BIRTH_COLUMN);
  }

  /** Name, language and date of birth, as the owner corrects them (an absent field stays). */
  async setFields(trx: Db, userId: number, patch: { fullName?: string; language?: UserRow['language']; dateOfBirth?: string | null }, now: Date): Promise<void> {
    const { fullName, language, dateOfBirth } = patch;
    await trx.updateTable('users').set({
      ...(fullName === undefined ? {} : { full_name: fullName }),
      ...(language === undefined ? {} : { language }),
      ...(dateOfBirth === undefined ? {} : { date_of_birth: dateOfBirth === null ? null : this.deps.sensitive.protect(dateOfBirth, DATE_OF_BIRTH_COLUMN) }),
      updated_at: now,
    }).where('id', '=', userId).execute();
  }

  /** When codes of this kind went to this user since `since`, newest first, and whether each was delivered. */
  async sentSince(trx: Db, userId: number, kind: ContactKind, since: Date): Promise<Array<{ created_at: Date; delivery_status: string }>> {
    return trx.selectFrom('profile_contact_changes').select(['created_at', 'delivery_status'])
      .where('user_id', '=', userId).where('kind', '=', kind).where('created_at', '>', since).orderBy('created_at', 'desc').execute();
  }

  /** Replaces the live change of the user and kind with a new one (delivery `queued`). */
  async replace(trx: Db, c: NewChange, now: Date): Promise<void> {
    await trx.updateTable('profile_contact_changes').set({ superseded_at: now })
      .where('user_id', '=', c.userId).where('kind', '=', c.kind).where('consumed_at', 'is', null).where('superseded_at', 'is', null).execute();
    await trx.insertInto('profile_contact_changes').values({
      id: c.id, user_id: c.userId, kind: c.kind, new_value: this.deps.sensitive.protect(c.value, NEW_VALUE_COLUMN), destination_masked: c.destination,
      code_hash: c.codeHash, created_at: now, expires_at: c.expiresAt, consumed_at: null, superseded_at: null, delivery_status: 'queued',
    }).execute();
  }

  async markSent(id: string): Promise<void> {
    await this.deps.db.updateTable('profile_contact_changes').set({ delivery_status: 'sent' }).where('id', '=', id).execute();
  }

  /** A code that never arrived is void: failed, and superseded at once. */
  async markFailed(id: string, now: Date): Promise<void> {
    await this.deps.db.updateTable('profile_contact_changes').set({ delivery_status: 'failed', superseded_at: now }).where('id', '=', id).execute();
  }

  /** A change that can no longer take effect (its address was taken meanwhile): void. */
  async void(id: string, now: Date): Promise<void> {
    await this.deps.db.updateTable('profile_contact_changes').set({ superseded_at: now }).where('id', '=', id).where('superseded_at', 'is', null).execute();
  }

  /** The live change of the user and kind, else the last one used, else none. */
  async current(userId: number, kind: ContactKind): Promise<CurrentChange | undefined> {
    return this.deps.db.selectFrom('profile_contact_changes').select(['id', 'destination_masked', 'expires_at', 'consumed_at'])
      .where('user_id', '=', userId).where('kind', '=', kind).where('superseded_at', 'is', null)
      .orderBy(sql`consumed_at IS NULL`, 'desc').orderBy('created_at', 'desc').limit(1).executeTakeFirst();
  }

  /**
   * Spends one attempt on a live change before its code is compared: the row update is the
   * arbiter, so a burst of parallel guesses gets at most `max` through. Undefined when the change
   * was used, replaced, or is out of attempts. The new address comes back revealed.
   */
  async spendAttempt(id: string, max: number): Promise<{ attempts: number; code_hash: string; value: string } | undefined> {
    const row = await this.deps.db.updateTable('profile_contact_changes').set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id).where('consumed_at', 'is', null).where('superseded_at', 'is', null).where('attempts', '<', max)
      .returning(['attempts', 'code_hash', 'new_value']).executeTakeFirst();
    return row && { attempts: row.attempts, code_hash: row.code_hash, value: this.deps.sensitive.reveal(row.new_value, NEW_VALUE_COLUMN) };
  }

  /** Why `spendAttempt` found nothing: used or replaced (true), or out of attempts (false). */
  async isSpentOrReplaced(id: string): Promise<boolean> {
    const row = await this.deps.db.selectFrom('profile_contact_changes').select(['consumed_at', 'superseded_at']).where('id', '=', id).executeTakeFirst();
    return !row || row.consumed_at !== null || row.superseded_at !== null;
  }

  /** Marks the change used; false when another request used (or a new request replaced) it first. */
  async consume(trx: Db, id: string, now: Date): Promise<boolean> {
    const row = await trx.updateTable('profile_contact_changes').set({ consumed_at: now })
      .where('id', '=', id).where('consumed_at', 'is', null).where('superseded_at', 'is', null).returning('id').executeTakeFirst();
    return row !== undefined;
  }

  /** Clean-up: changes a day past their expiry (their new address is personal data nobody needs any longer). */
  async purgeOld(nowMs: number, stopping?: AbortSignal): Promise<number> {
    const before = new Date(nowMs - 24 * 3_600_000);
    return purgeInBatches(async (limit) => {
      const r = await this.deps.db.deleteFrom('profile_contact_changes')
        .where('id', 'in', (eb) => eb.selectFrom('profile_contact_changes').select('id').where('expires_at', '<', before).limit(limit))
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    }, stopping, PURGE_BATCH);
  }
}
