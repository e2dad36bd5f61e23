/** What other capabilities do to an account's push approval. */
import type { Db } from '../platform/db/database.js';

/**
 * Deletes the account's push-approval key and the `push_approval` factor, and denies (reason
 * `factor_removed`) its pending requests and its approved ones whose 2FA token was not spent
 * yet, in `trx` (a recovery, an MFA reset, a lifted "this was not me" lock: a lost phone, or one
 * an intruder enrolled, must not approve a sign-in afterwards, nor an approval outlive the
 * factor). Whether there was a key.
 */
export async function removePushApproval(trx: Db, userId: number, now: Date): Promise<boolean> {
  const keys = await trx.deleteFrom('push_approval_keys').where('user_id', '=', userId).returning('id').execute();
  await trx.deleteFrom('mfa_factors').where('user_id', '=', userId).where('method', '=', 'push_approval').execute();
  await trx.updateTable('push_approval_requests').set({ state: 'denied', deny_reason: 'factor_removed', answered_at: now })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([
      eb('state', '=', 'pending'),
      eb.and([eb('state', '=', 'approved'), eb.not(eb.exists(eb.selectFrom('token_denylist').select('jti').whereRef('token_denylist.jti', '=', 'push_approval_requests.two_factor_jti')))]),
    ]))
    .execute();
  return keys.length > 0;
}
