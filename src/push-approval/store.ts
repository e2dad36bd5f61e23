/** What other capabilities do to an account's push approval. */
import type { Db } from '../platform/db/database.js';

/**
 * Deletes the account's push-approval key and the `push_approval` factor, and denies its pending
 * requests, in `trx` (a recovery, a lifted "this was not me" lock: a lost phone, or one an
 * intruder enrolled, must not approve a sign-in afterwards). Whether there was a key.
 */
export async function removePushApproval(trx: Db, userId: number, now: Date): Promise<boolean> {
  const keys = await trx.deleteFrom('push_approval_keys').where('user_id', '=', userId).returning('id').execute();
  await trx.deleteFrom('mfa_factors').where('user_id', '=', userId).where('method', '=', 'push_approval').execute();
  await trx.updateTable('push_approval_requests').set({ state: 'denied', deny_reason: 'denied', answered_at: now })
    .where('user_id', '=', userId).where('state', '=', 'pending').execute();
  return keys.length > 0;
}
