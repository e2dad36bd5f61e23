/**
 * The lock a holder's "this was not me" puts on their account (`users.security_locked_at`,
 * migration 042). The sign-in pipeline's one admission path checks it on the account's row, for
 * every method and channel, once the credentials proved right (so a wrong password tells
 * nothing), and again under the user's row lock as the session is opened (a lock set while a second factor was
 * awaited is seen). Lifted by the new password of a completed password recovery (its reset token, src/credentials/routes.ts) or by an
 * administrator (`DELETE /api/v1/admin/users/{id}/security-lock`), each audited
 * ACCOUNT_SECURITY_UNLOCKED. Lifted by the recovery, it takes the account's passkeys with it
 * (whoever signed in instead of the holder may have registered one); an administrator's unlock
 * keeps them.
 */
import { sql } from 'kysely';
import type { AuditContext, AuditLog } from '../../audit/service.js';
import { removeAllPasskeys } from '../../passkeys/store.js';
import { removePushApproval } from '../../push-approval/store.js';
import type { Db } from '../../platform/db/database.js';
import type { AppError } from '../../platform/errors.js';
import { RiskResponseErrors as E } from './errors.js';

/** Where a locked-out holder starts: the account recovery. */
export const RECOVER_PATH = '/api/v1/auth/reset/initiate';

/** 403 ACCOUNT_SECURITY_LOCKED, whose details say how to get the account back. */
export function securityLockedError(lockedAt: Date | string): AppError {
  return E.ACCOUNT_SECURITY_LOCKED({
    locked_at: new Date(lockedAt).toISOString(),
    recover: `Recover the account (POST ${RECOVER_PATH} with what was lost: "password"): once the new password is set with the recovery's reset token, the account signs in again. Or contact the bank, whose administrator can lift the lock.`,
    recover_path: RECOVER_PATH,
  });
}

/** Locks the account (an earlier lock keeps its time); in `trx`. */
export async function setSecurityLock(trx: Db, userId: number, at: Date): Promise<void> {
  await sql`UPDATE users SET security_locked_at = COALESCE(security_locked_at, ${at}::timestamptz) WHERE id = ${userId}`.execute(trx);
}

/** What lifting the lock by the holder's recovery also does: the account's passkeys go, audited. */
export interface RecoveryLift {
  audit: Pick<AuditLog, 'record'>;
  /** The recovery request's context and the account, for the PASSKEY_DELETED entry. */
  entry: AuditContext & { userId: string; username: string };
}

/**
 * Lifts the lock, in `trx`; returns when it had been set (null: it was not locked, nothing changed).
 * `recovery`: the holder's completed recovery lifts it, so every passkey of the account is deleted
 * with the `passkey` factor (audited PASSKEY_DELETED, reason `security_lock_lifted`): the one who
 * signed in instead of the holder may have registered one; so is the push-approval key and its
 * factor (audited PUSH_APPROVAL_REMOVED).
 */
export async function clearSecurityLock(trx: Db, userId: number, recovery?: RecoveryLift): Promise<Date | null> {
  const r = await sql<{ was: Date | string }>`
    UPDATE users u SET security_locked_at = NULL FROM (SELECT id, security_locked_at AS was FROM users WHERE id = ${userId} FOR UPDATE) old
    WHERE u.id = old.id AND old.was IS NOT NULL RETURNING old.was`.execute(trx);
  const was = r.rows[0]?.was;
  if (was === undefined) return null;
  if (recovery) {
    const removed = await removeAllPasskeys(trx, userId);
    const approval = await removePushApproval(trx, userId, new Date()); // no clock here: only the pending requests' answered_at
    if (approval) {
      await recovery.audit.record({ ...recovery.entry, eventType: 'PUSH_APPROVAL_REMOVED', status: 'SUCCESS', mfaMethod: 'push_approval', details: { reason: 'security_lock_lifted' } }, trx);
    }
    if (removed.length > 0) {
      await recovery.audit.record({ ...recovery.entry, eventType: 'PASSKEY_DELETED', status: 'SUCCESS', mfaMethod: 'passkey', details: { reason: 'security_lock_lifted', passkey_ids: removed, passkeys_left: 0 } }, trx);
    }
  }
  return new Date(was);
}
