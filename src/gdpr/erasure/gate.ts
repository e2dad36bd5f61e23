/**
 * The sign-in's gate of a pending erasure (src/signin/pipeline.ts): once an account's erasure is
 * requested it cannot sign in, by any channel or method, until the erasure is cancelled. Asked
 * only after the credentials proved right, so the answer tells nothing to someone who does not
 * hold them (a wrong password is 401 INVALID_CREDENTIALS, as for an unknown user).
 */
import type { Db } from '../../platform/db/database.js';
import type { AppError } from '../../platform/errors.js';
import { ErasureErrors } from './errors.js';

export const ERASURE_CANCEL_PATH = '/api/v1/auth/gdpr/delete/cancel';

export async function pendingErasure(db: Db, userId: number): Promise<{ erase_after: Date | string } | undefined> {
  return db.selectFrom('gdpr_erasures').select('erase_after').where('user_id', '=', userId).where('state', '=', 'pending').executeTakeFirst();
}

/** 403 ACCOUNT_ERASURE_PENDING, whose details say how to cancel. */
export function erasurePendingError(e: { erase_after: Date | string }): AppError {
  return ErasureErrors.ACCOUNT_ERASURE_PENDING({
    erase_after: new Date(e.erase_after).toISOString(),
    cancel: `Use the link in the notice sent when the erasure was requested, or POST ${ERASURE_CANCEL_PATH} with {"username", "password"}; the account can then sign in again.`,
    cancel_path: ERASURE_CANCEL_PATH,
  });
}
