/**
 * The passkeys table and the WebAuthn challenges. A challenge is spent by one conditional UPDATE
 * (`used_at IS NULL AND expires_at > now ... RETURNING`) before the answer to it is verified, so a
 * parallel burst of one answer gets one challenge, and an answer that fails has spent it anyway.
 */
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { PasskeysTable, WebAuthnPurpose } from '../platform/db/schema.js';

/** A challenge lives this long (the options' `timeout` says the same to the browser). */
export const CHALLENGE_TTL_MS = 5 * 60_000;

export interface PasskeyRow {
  id: string;
  userId: number;
  credentialId: string;
  publicKey: string;
  signCount: number;
  transports: string[];
  deviceType: PasskeysTable['device_type'];
  backedUp: boolean;
  aaguid: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** A cloned authenticator was seen (its counter went back): refused from then on. */
  suspendedAt: Date | null;
}

export type NewPasskey = Omit<PasskeyRow, 'id' | 'createdAt' | 'lastUsedAt' | 'suspendedAt'>;

/** Who a challenge is for: the user (null: a passwordless sign-in), and the 2FA token's jti when asked as a second factor. */
export interface ChallengeBinding {
  purpose: WebAuthnPurpose;
  userId: number | null;
  twoFactorJti?: string;
}

const COLUMNS = ['id', 'user_id', 'credential_id', 'public_key', 'sign_count', 'transports', 'device_type', 'backed_up', 'aaguid', 'name', 'created_at', 'last_used_at', 'suspended_at'] as const;

type Selected = { [K in (typeof COLUMNS)[number]]: unknown };

function toRow(r: Selected): PasskeyRow {
  return {
    id: r.id as string, userId: r.user_id as number, credentialId: r.credential_id as string, publicKey: r.public_key as string,
    signCount: Number(r.sign_count), transports: (r.transports as string[] | null) ?? [], deviceType: r.device_type as PasskeyRow['deviceType'],
    backedUp: r.backed_up as boolean, aaguid: r.aaguid as string, name: r.name as string,
    createdAt: new Date(r.created_at as string), lastUsedAt: r.last_used_at === null ? null : new Date(r.last_used_at as string),
    suspendedAt: r.suspended_at === null ? null : new Date(r.suspended_at as string),
  };
}

/** Whether a signature counter of `next` after `stored` means a cloned authenticator (both 0: the authenticator keeps no counter). */
export function counterWentBack(stored: number, next: number): boolean {
  return (stored > 0 || next > 0) && next <= stored;
}

export class PasskeyStore {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  async list(userId: number, trx: Db = this.deps.db): Promise<PasskeyRow[]> {
    const rows = await trx.selectFrom('passkeys').select(COLUMNS).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toRow);
  }

  async byCredential(credentialId: string): Promise<PasskeyRow | undefined> {
    const row = await this.deps.db.selectFrom('passkeys').select(COLUMNS).where('credential_id', '=', credentialId).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  async byId(userId: number, id: string): Promise<PasskeyRow | undefined> {
    const row = await this.deps.db.selectFrom('passkeys').select(COLUMNS).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  /** The new passkey, or undefined when its credential id is registered already (to anyone). */
  async insert(trx: Db, p: NewPasskey): Promise<PasskeyRow | undefined> {
    const row = await trx.insertInto('passkeys').values({
      user_id: p.userId, credential_id: p.credentialId, public_key: p.publicKey, sign_count: p.signCount, transports: p.transports,
      device_type: p.deviceType, backed_up: p.backedUp, aaguid: p.aaguid, name: p.name, created_at: new Date(this.deps.clock.now()), last_used_at: null, suspended_at: null,
    }).onConflict((oc) => oc.column('credential_id').doNothing()).returning(COLUMNS).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  async rename(userId: number, id: string, name: string): Promise<PasskeyRow | undefined> {
    const row = await this.deps.db.updateTable('passkeys').set({ name }).where('user_id', '=', userId).where('id', '=', id).returning(COLUMNS).executeTakeFirst();
    return row ? toRow(row) : undefined;
  }

  /** Deletes one; returns it and how many the user has left. */
  async delete(trx: Db, userId: number, id: string): Promise<{ deleted: PasskeyRow; left: number } | undefined> {
    const row = await trx.deleteFrom('passkeys').where('user_id', '=', userId).where('id', '=', id).returning(COLUMNS).executeTakeFirst();
    if (!row) return undefined;
    const left = await trx.selectFrom('passkeys').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
    return { deleted: toRow(row), left: Number(left.n) };
  }

  /**
   * Records a verified use: the new counter and backup state, `last_used_at`. Conditional on the
   * counter having gone forward (or both being 0), so two answers racing with one counter value
   * cannot both pass: false means the counter went back (a cloned authenticator), nothing written.
   */
  async recordUse(id: string, next: { signCount: number; backedUp: boolean; deviceType: PasskeyRow['deviceType'] }): Promise<boolean> {
    const row = await this.deps.db.updateTable('passkeys')
      .set({ sign_count: next.signCount, backed_up: next.backedUp, device_type: next.deviceType, last_used_at: new Date(this.deps.clock.now()) })
      .where('id', '=', id).where('suspended_at', 'is', null)
      .where(sql<boolean>`(sign_count < ${next.signCount} OR (sign_count = 0 AND ${next.signCount}::bigint = 0))`)
      .returning('id').executeTakeFirst();
    return row !== undefined;
  }

  /** Suspends the passkey (a cloned authenticator); false when it was suspended already. */
  async suspend(id: string): Promise<boolean> {
    const row = await this.deps.db.updateTable('passkeys').set({ suspended_at: new Date(this.deps.clock.now()) })
      .where('id', '=', id).where('suspended_at', 'is', null).returning('id').executeTakeFirst();
    return row !== undefined;
  }

  async createChallenge(binding: ChallengeBinding, challenge: string): Promise<string> {
    const now = this.deps.clock.now();
    const row = await this.deps.db.insertInto('webauthn_challenges').values({
      user_id: binding.userId, purpose: binding.purpose, challenge, two_factor_jti: binding.twoFactorJti ?? null,
      created_at: new Date(now), expires_at: new Date(now + CHALLENGE_TTL_MS), used_at: null,
    }).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  /**
   * Spends the challenge `id` if it is for `binding`, unused and unexpired; returns its value,
   * or undefined (unknown, another's, expired, or spent: by this request's twin, perhaps).
   */
  async consumeChallenge(id: string, binding: ChallengeBinding): Promise<string | undefined> {
    if (!UUID.test(id)) return undefined;
    const now = new Date(this.deps.clock.now());
    let q = this.deps.db.updateTable('webauthn_challenges').set({ used_at: now })
      .where('id', '=', id).where('purpose', '=', binding.purpose).where('used_at', 'is', null).where('expires_at', '>', now);
    q = binding.userId === null ? q.where('user_id', 'is', null) : q.where('user_id', '=', binding.userId);
    if (binding.twoFactorJti !== undefined) q = q.where('two_factor_jti', '=', binding.twoFactorJti);
    const row = await q.returning('challenge').executeTakeFirst();
    return row?.challenge;
  }

  /** Deletes the challenges that expired before `before`, used or not. */
  async purgeChallenges(before: Date): Promise<number> {
    const out = await this.deps.db.deleteFrom('webauthn_challenges').where('expires_at', '<', before).executeTakeFirst();
    return Number(out.numDeletedRows);
  }
}

/**
 * Deletes every passkey of the user and the `passkey` factor with them, in `trx` (a recovery, a
 * lifted "this was not me" lock: a passkey a thief registered must not outlive them). Returns
 * the deleted passkeys' ids.
 */
export async function removeAllPasskeys(trx: Db, userId: number): Promise<string[]> {
  const rows = await trx.deleteFrom('passkeys').where('user_id', '=', userId).returning('id').execute();
  await trx.deleteFrom('mfa_factors').where('user_id', '=', userId).where('method', '=', 'passkey').execute();
  await trx.deleteFrom('webauthn_challenges').where('user_id', '=', userId).execute();
  return rows.map((r) => r.id);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
