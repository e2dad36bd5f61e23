/**
 * Users' device push tokens (SPEC "Device token"). The token is written through SensitiveColumns
 * (encrypted when DB_FIELD_ENCRYPTION=1) and found by its blind index, which is also what keeps
 * it unique: a phone registers the same token again, or a phone that changed hands registers it
 * for its new owner, and the one row follows.
 */
import { sql, type Selectable } from 'kysely';
import type { AuditContext } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { BlindIndex } from '../platform/crypto/blind-index.js';
import type { SensitiveColumns } from '../platform/crypto/sensitive.js';
import type { Db } from '../platform/db/database.js';
import type { DeviceTokensTable } from '../platform/db/schema.js';
import type { AuthContext } from '../sessions/guard.js';
import { lockUserRow } from '../users/store.js';
import { DeviceErrors } from './errors.js';

const COLUMN = ENCRYPTED_COLUMNS.devicePushToken.context;

/** A device token with its push token in clear (for the owner's own routes and the sender). */
export type DeviceToken = Omit<Selectable<DeviceTokensTable>, 'push_token_bidx'>;

export type Platform = 'mobile' | 'web';

/** What registering did: a new row, the same user's token again, or a token moved from another user. */
export type Registered =
  | { outcome: 'created'; device: DeviceToken }
  | { outcome: 'reactivated'; device: DeviceToken }
  | { outcome: 'transferred'; device: DeviceToken; fromUserId: number };

export type RegisteredAndTrimmed = Registered & { trimmed: Trimmed };

/**
 * Per user: at most this many active tokens (a send fans out to each, so an account with
 * thousands would turn one notification, or one code request, into thousands of provider calls
 * and spend the bank's sending quota) ...
 */
export const MAX_ACTIVE_DEVICES = 10;
/** ... and at most this many rows, inactive ones included. */
export const MAX_DEVICES = 30;

/** What registering or activating retired to keep within the limits (their uuids): the least recently used first. */
export interface Trimmed {
  deactivated: string[];
  deleted: string[];
}

/** Why a device token leaves its user: deleted, turned off (by its owner), moved to another user, retired by the device limit, or reported dead by the push provider. */
export type DeviceRemovalReason = 'deleted' | 'deactivated' | 'transferred' | 'device_limit' | 'push_provider';

export interface DeviceRemoval {
  /** The user the tokens leave (for a transfer, the previous owner). */
  userId: number;
  /** Internal ids. */
  deviceIds: number[];
  reason: DeviceRemovalReason;
  /** The audit context of the request that caused it, when one did. */
  context?: AuditContext;
}

/**
 * What another capability does when a user's device tokens go (src/push-approval: the phone that
 * approves sign-ins). The devices capability imports none of its listeners; they register
 * themselves (`listen`) from their module.
 */
export interface DeviceListener {
  /** In the transaction that deletes, turns off or moves the tokens (before a deletion, so the listener still sees what goes). */
  removing(trx: Db, removal: DeviceRemoval): Promise<void>;
  /** The user's tokens the device limits never retire. */
  pinned?(trx: Db, userId: number): Promise<number[]>;
  /**
   * Before the owner deletes or turns off tokens, in the transaction that does it (the user's row
   * and the tokens' rows locked): may refuse (throws, and nothing changes), e.g. until a recent step-up.
   */
  authorizeOwner?(trx: Db, auth: AuthContext, userId: number, deviceIds: number[]): Promise<void>;
}

const SELECTED = ['id', 'uuid', 'user_id', 'push_token', 'platform', 'device_name', 'is_active', 'receives_codes', 'last_used_at', 'created_on', 'updated_on'] as const;

export class DeviceTokenStore {
  private readonly listeners: DeviceListener[] = [];

  constructor(private readonly deps: { db: Db; clock: Clock; sensitive: SensitiveColumns; blindIndex: BlindIndex }) {}

  /** Registers a listener of removals (from the listener's module). */
  listen(listener: DeviceListener): void {
    this.listeners.push(listener);
  }

  private async removing(trx: Db, removal: DeviceRemoval): Promise<void> {
    if (removal.deviceIds.length === 0) return;
    for (const l of this.listeners) await l.removing(trx, removal);
  }

  /** `work` in `trx` when it is a transaction, else in a new one (the listeners' changes go with the device's). */
  private inTransaction<T>(trx: Db, work: (t: Db) => Promise<T>): Promise<T> {
    return trx.isTransaction ? work(trx) : this.deps.db.transaction().execute(work);
  }

  /**
   * The owner's tokens (`uuid`, or every one when undefined) about to be deleted or turned off, in
   * `trx`: the user's row locked first, then the tokens' rows (the order of every change to a
   * user's phone: user row, device rows, then what hangs on them: src/push-approval), then each
   * listener may refuse (it throws) seeing what is committed now. Their internal ids; none for
   * unknown tokens (the route answers 404). `auth`: the owner's session; none when the service
   * itself removes them.
   */
  private async lockOwned(trx: Db, userId: number, uuid: string | undefined, auth: AuthContext | undefined): Promise<number[]> {
    await lockUserRow(trx, userId);
    let q = trx.selectFrom('device_tokens').select('id').where('user_id', '=', userId);
    if (uuid !== undefined) q = q.where('uuid', '=', uuid);
    const ids = (await q.orderBy('id').forUpdate().execute()).map((r) => r.id);
    if (ids.length > 0 && auth) for (const l of this.listeners) await l.authorizeOwner?.(trx, auth, userId, ids);
    return ids;
  }

  private reveal(row: DeviceToken): DeviceToken {
    return { ...row, push_token: this.deps.sensitive.reveal(row.push_token, COLUMN) };
  }

  /**
   * Registers `pushToken` for `userId`, in one transaction: a token nobody has is created; one
   * the user has is reactivated (platform and name updated); one another user has moves to this
   * user (the phone changed hands). The blind index's unique key settles parallel registrations.
   * `record` writes the audit entry in the same transaction.
   */
  async register(userId: number, input: { pushToken: string; platform: Platform; deviceName: string | null }, record: (trx: Db, r: RegisteredAndTrimmed) => Promise<void>, context?: AuditContext): Promise<RegisteredAndTrimmed> {
    // FCM tokens are case-sensitive: indexed as they are.
    const bidx = this.deps.blindIndex.ofExact(input.pushToken);
    const candidates = this.deps.blindIndex.candidatesExact(input.pushToken);
    const now = new Date(this.deps.clock.now());
    return this.deps.db.transaction().execute(async (trx) => {
      await lockUserRow(trx, userId); // one registration of a user at a time: the limits count a settled set
      for (let attempt = 0; attempt < 2; attempt++) {
        const existing = await trx.selectFrom('device_tokens').select(['id', 'user_id']).where('push_token_bidx', 'in', candidates).forUpdate().executeTakeFirst();
        if (existing) {
          const moved = existing.user_id !== userId;
          if (moved) await this.removing(trx, { userId: existing.user_id, deviceIds: [existing.id], reason: 'transferred', context });
          const row = await trx.updateTable('device_tokens').set({
            user_id: userId, platform: input.platform, is_active: true, updated_on: now,
            // A token that changes hands starts afresh: nothing of the previous owner's use shows.
            ...(moved ? { created_on: now, last_used_at: null, receives_codes: false } : {}),
            // Re-written: under the current key, with the index of the current key.
            push_token: this.deps.sensitive.protect(input.pushToken, COLUMN), push_token_bidx: bidx,
            ...(input.deviceName === null && !moved ? {} : { device_name: input.deviceName }),
          }).where('id', '=', existing.id).returning(SELECTED).executeTakeFirstOrThrow();
          const device = this.reveal(row);
          const trimmed = await this.trim(trx, userId, device.id);
          const r: RegisteredAndTrimmed = !moved ? { outcome: 'reactivated', device, trimmed } : { outcome: 'transferred', device, fromUserId: existing.user_id, trimmed };
          await record(trx, r);
          return r;
        }
        const created = await trx.insertInto('device_tokens').values({
          user_id: userId, push_token: this.deps.sensitive.protect(input.pushToken, COLUMN), push_token_bidx: bidx,
          platform: input.platform, device_name: input.deviceName, created_on: now, updated_on: now,
        }).onConflict((oc) => oc.column('push_token_bidx').doNothing()).returning(SELECTED).executeTakeFirst();
        if (created) {
          const r: RegisteredAndTrimmed = { outcome: 'created', device: this.reveal(created), trimmed: await this.trim(trx, userId, created.id) };
          await record(trx, r);
          return r;
        }
        // Another registration of the same token committed in between: it is there now.
      }
      // The row was inserted and gone again between two looks (deleted at that instant): the
      // client may simply try again.
      throw DeviceErrors.DEVICE_TOKEN_BUSY();
    });
  }

  /**
   * Keeps the user within MAX_ACTIVE_DEVICES and MAX_DEVICES, sparing `keep` (the token just
   * registered or turned on): the least recently used active tokens are turned off, then the
   * least recently used inactive rows deleted. Called with the user's row locked.
   */
  async trim(trx: Db, userId: number, keep: number): Promise<Trimmed> {
    // SKIP LOCKED: a row another transaction holds is on its way elsewhere (a transfer to another
    // user); waiting for it could deadlock two users registering each other's tokens. NO KEY: a
    // message or code being written for the device (a key-share lock) does not hide it.
    const rows = await trx.selectFrom('device_tokens').select(['id', 'uuid', 'is_active', 'receives_codes']).where('user_id', '=', userId).where('id', '!=', keep)
      .orderBy(sql`coalesce(last_used_at, updated_on)`, 'desc').orderBy('id', 'desc').forNoKeyUpdate().skipLocked().execute();
    // The device one-time codes go to, and those a listener pins (the phone that approves
    // sign-ins), are never retired by the cap: someone with a stolen session must not be able to
    // switch off the owner's second factor by registering tokens.
    const pinned = new Set<number>();
    for (const l of this.listeners) for (const id of (await l.pinned?.(trx, userId)) ?? []) pinned.add(id);
    const spared = (r: { id: number; receives_codes: boolean }): boolean => r.receives_codes || pinned.has(r.id);
    const active = rows.filter((r) => r.is_active);
    const bound = active.filter(spared).length;
    const deactivated = active.filter((r) => !spared(r)).slice(Math.max(0, MAX_ACTIVE_DEVICES - 1 - bound));
    if (deactivated.length > 0) {
      await this.removing(trx, { userId, deviceIds: deactivated.map((r) => r.id), reason: 'device_limit' });
      await trx.updateTable('device_tokens').set({ is_active: false, updated_on: new Date(this.deps.clock.now()) }).where('user_id', '=', userId).where('id', 'in', deactivated.map((r) => r.id)).execute();
    }
    const excess = rows.length + 1 - MAX_DEVICES;
    const inactiveOldestFirst = rows.filter((r) => !spared(r) && (!r.is_active || deactivated.includes(r))).reverse();
    const deleted = excess > 0 ? inactiveOldestFirst.slice(0, excess) : [];
    if (deleted.length > 0) {
      await this.removing(trx, { userId, deviceIds: deleted.map((r) => r.id), reason: 'device_limit' });
      await trx.deleteFrom('device_tokens').where('user_id', '=', userId).where('id', 'in', deleted.map((r) => r.id)).execute();
    }
    return { deactivated: deactivated.filter((r) => !deleted.includes(r)).map((r) => r.uuid), deleted: deleted.map((r) => r.uuid) };
  }

  /** The device one-time codes by push go to, when it is active. */
  async codeDevice(userId: number): Promise<DeviceToken | undefined> {
    const row = await this.deps.db.selectFrom('device_tokens').select(SELECTED).where('user_id', '=', userId).where('receives_codes', '=', true)
      .where('is_active', '=', true).where('platform', '=', 'mobile').executeTakeFirst();
    return row && this.reveal(row);
  }

  /** Makes `id` (internal) the user's code device (and no other): its uuid; undefined when it is no longer their active mobile token. */
  async bindCodes(trx: Db, userId: number, id: number): Promise<string | undefined> {
    await this.unbindCodes(trx, userId);
    const row = await trx.updateTable('device_tokens').set({ receives_codes: true, updated_on: new Date(this.deps.clock.now()) })
      .where('id', '=', id).where('user_id', '=', userId).where('is_active', '=', true).where('platform', '=', 'mobile').returning('uuid').executeTakeFirst();
    return row?.uuid;
  }

  /** No device of the user receives codes any more (push re-bound, or the user's factors reset). */
  async unbindCodes(trx: Db, userId: number): Promise<void> {
    await trx.updateTable('device_tokens').set({ receives_codes: false }).where('user_id', '=', userId).where('receives_codes', '=', true).execute();
  }

  async list(userId: number, activeOnly: boolean): Promise<DeviceToken[]> {
    let q = this.deps.db.selectFrom('device_tokens').select(SELECTED).where('user_id', '=', userId);
    if (activeOnly) q = q.where('is_active', '=', true);
    return (await q.orderBy('id').execute()).map((r) => this.reveal(r));
  }

  /** The user's token with this uuid (its public id); undefined for an unknown one or another user's. */
  async get(userId: number, uuid: string): Promise<DeviceToken | undefined> {
    const row = await this.deps.db.selectFrom('device_tokens').select(SELECTED).where('uuid', '=', uuid).where('user_id', '=', userId).executeTakeFirst();
    return row && this.reveal(row);
  }

  /**
   * Turns the user's token on or off; turning it off asks the listeners first (`auth`, the
   * owner's session: they may refuse) and tells them (`deactivated`, with the request's `context`).
   */
  async setActive(userId: number, uuid: string, active: boolean, trx: Db = this.deps.db, context?: AuditContext, auth?: AuthContext): Promise<DeviceToken | undefined> {
    return this.inTransaction(trx, async (t) => {
      if (!active) {
        const ids = await this.lockOwned(t, userId, uuid, auth);
        await this.removing(t, { userId, deviceIds: ids, reason: 'deactivated', context });
      }
      const row = await t.updateTable('device_tokens').set({ is_active: active, updated_on: new Date(this.deps.clock.now()) })
        .where('uuid', '=', uuid).where('user_id', '=', userId).returning(SELECTED).executeTakeFirst();
      return row && this.reveal(row);
    });
  }

  /** A notification went to it (while it is still that user's: it may have changed hands meanwhile). */
  async markUsed(userId: number, id: number): Promise<void> {
    await this.markUsedMany([{ userId, id }]);
  }

  /** `markUsed` for several devices, in one statement (the delivery worker's batch). */
  async markUsedMany(used: ReadonlyArray<{ userId: number; id: number }>): Promise<void> {
    if (used.length === 0) return;
    await sql`
      UPDATE device_tokens d SET last_used_at = ${new Date(this.deps.clock.now())}
      FROM unnest(${used.map((u) => u.id)}::integer[], ${used.map((u) => u.userId)}::integer[]) AS u(id, user_id)
      WHERE d.id = u.id AND d.user_id = u.user_id`.execute(this.deps.db);
  }

  /** Devices by id, in one query, each with its owner (`user_id`): the caller checks the owner it expects. */
  async getMany(ids: readonly number[]): Promise<Map<number, DeviceToken>> {
    if (ids.length === 0) return new Map();
    const rows = await this.deps.db.selectFrom('device_tokens').select(SELECTED).where('id', 'in', [...new Set(ids)]).execute();
    return new Map(rows.map((r) => [r.id, this.reveal(r)]));
  }

  /**
   * The provider reports the token (internal `id`) dead: inactive, if it is still that user's and
   * active. Its uuid when it changed, for the audit entry; undefined otherwise.
   */
  async deactivateDead(userId: number, id: number, trx: Db = this.deps.db): Promise<string | undefined> {
    return this.inTransaction(trx, async (t) => {
      const row = await t.updateTable('device_tokens').set({ is_active: false, updated_on: new Date(this.deps.clock.now()) })
        .where('id', '=', id).where('user_id', '=', userId).where('is_active', '=', true).returning('uuid').executeTakeFirst();
      if (row) await this.removing(t, { userId, deviceIds: [id], reason: 'push_provider' });
      return row?.uuid;
    });
  }

  /**
   * Deletes the user's token with this uuid (or all of theirs), asking the listeners first
   * (`auth`, the owner's session: they may refuse) and telling them (with the request's
   * `context`); the uuids deleted.
   */
  async delete(userId: number, uuid?: string, trx: Db = this.deps.db, context?: AuditContext, auth?: AuthContext): Promise<string[]> {
    return this.inTransaction(trx, async (t) => {
      const ids = await this.lockOwned(t, userId, uuid, auth);
      if (ids.length === 0) return [];
      await this.removing(t, { userId, deviceIds: ids, reason: 'deleted', context });
      return (await t.deleteFrom('device_tokens').where('user_id', '=', userId).where('id', 'in', ids).returning('uuid').execute()).map((r) => r.uuid);
    });
  }
}

/** What the owner sees of a token: enough to tell their devices apart, not enough to push to one. */
export function maskToken(token: string): string {
  return token.length <= 16 ? `…${token.slice(-4)}` : `${token.slice(0, 6)}…${token.slice(-4)}`;
}
