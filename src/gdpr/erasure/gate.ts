/**
 * The sign-in's gate of a pending erasure (src/signin/pipeline.ts): once an account's erasure is
 * requested it cannot sign in, by any channel or method, until the erasure is cancelled. Asked
 * only after the credentials proved right, so the answer tells nothing to someone who does not
 * hold them (a wrong password is 401 INVALID_CREDENTIALS, as for an unknown user).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { AppError } from '../../platform/errors.js';
import { grantsOf, type Grants } from '../../users/store.js';
import { ErasureErrors } from './errors.js';

export const ERASURE_CANCEL_PATH = '/api/v1/auth/gdpr/delete/cancel';

/** A select-list item: `erase_after` of the pending erasure of the user whose id is `userId` (a column reference or value), else NULL. */
export function pendingErasureOf(userId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT e.erase_after FROM gdpr_erasures e WHERE e.user_id = ${userId} AND e.state = 'pending') AS erase_after`;
}

/**
 * What admission reads about a user whose credentials proved right, in one query: the pending
 * erasure (if any) and, unless the caller has them already, the user's grants.
 */
export async function admissionOf(db: Db, userId: number, known?: Grants): Promise<{ erasure?: { erase_after: Date | string }; grants: Grants }> {
  const id = sql`${userId}`;
  const r = await sql<{ erase_after: Date | string | null; roles?: string[]; permissions?: string[] }>`
    SELECT ${pendingErasureOf(id)}${known === undefined ? sql`, ${grantsOf(id)}` : sql``}`.execute(db);
  const row = r.rows[0];
  return {
    erasure: row?.erase_after == null ? undefined : { erase_after: row.erase_after },
    grants: known ?? { roles: row?.roles ?? [], permissions: row?.permissions ?? [] },
  };
}

/** 403 ACCOUNT_ERASURE_PENDING, whose details say how to cancel. */
export function erasurePendingError(e: { erase_after: Date | string }): AppError {
  return ErasureErrors.ACCOUNT_ERASURE_PENDING({
    erase_after: new Date(e.erase_after).toISOString(),
    cancel: `Use the link in the notice sent when the erasure was requested, or POST ${ERASURE_CANCEL_PATH} with {"username", "password"}; the account can then sign in again.`,
    cancel_path: ERASURE_CANCEL_PATH,
  });
}
