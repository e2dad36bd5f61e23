/**
 * The TOTP row of `mfa_factors`: a pending secret written at setup, made active by the first
 * valid code, and the last accepted time step that makes every code single use.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { TotpAlgorithm } from './totp.js';

export interface TotpFactor {
  status: 'pending' | 'active';
  /** As stored (encrypted); also the guard that the secret did not change under a check. */
  secretEnc: string;
  algorithm: TotpAlgorithm;
}

export async function findTotp(db: Db, userId: number): Promise<TotpFactor | null> {
  const row = await db.selectFrom('mfa_factors').select(['status', 'secret_enc', 'algorithm'])
    .where('user_id', '=', userId).where('method', '=', 'totp').executeTakeFirst();
  if (!row || row.secret_enc === null) return null;
  return { status: row.status, secretEnc: row.secret_enc, algorithm: (row.algorithm ?? 'SHA1') as TotpAlgorithm };
}

/**
 * Writes (or overwrites) the pending secret. False when an active TOTP exists: the conflict
 * update is conditional, so a setup racing an enrolment cannot replace an enrolled secret.
 */
export async function writePending(db: Db, userId: number, secretEnc: string, algorithm: TotpAlgorithm, now: Date): Promise<boolean> {
  const row = await db.insertInto('mfa_factors')
    .values({ user_id: userId, method: 'totp', status: 'pending', secret_enc: secretEnc, algorithm, last_used_step: null, created_at: now, confirmed_at: null })
    .onConflict((oc) => oc.columns(['user_id', 'method'])
      .doUpdateSet({ secret_enc: secretEnc, algorithm, last_used_step: null, created_at: now })
      .where('mfa_factors.status', '=', 'pending'))
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Records `step` as used, atomically: true only if no step at or after it was accepted before
 * (RFC 6238 5.2: "the verifier MUST NOT accept the second attempt of the OTP after the
 * successful validation has been issued for the first OTP"). One statement, so two nodes
 * checking the same code at once cannot both win. `factor` must still be the row the code was
 * checked against (same status and secret).
 */
export async function consumeStep(db: Db, userId: number, factor: TotpFactor, step: number): Promise<boolean> {
  const row = await db.updateTable('mfa_factors').set({ last_used_step: step })
    .where('user_id', '=', userId).where('method', '=', 'totp')
    .where('status', '=', factor.status).where('secret_enc', '=', factor.secretEnc)
    .where(sql<boolean>`(last_used_step IS NULL OR last_used_step < ${step})`)
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}
