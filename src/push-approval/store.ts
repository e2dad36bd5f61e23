/** What other capabilities do to an account's push approval. */
import type { Db } from '../platform/db/database.js';

/**
 * Deletes the account's push-approval key and the `push_approval` factor, and denies (reason
 * `factor_removed`) its pending requests and its approved ones not used yet (a sign-in whose 2FA
 * token was not spent, a step-up not completed), in `trx` (a recovery, an MFA reset, a lifted
 * "this was not me" lock, the phone's device token removed: a lost phone, or one an intruder
 * enrolled, must not approve a sign-in afterwards, nor an approval outlive the factor). Whether
 * there was a key, and the requests it denied.
 */
export async function removePushApprovalFactor(trx: Db, userId: number, now: Date): Promise<{ removed: boolean; denied: string[] }> {
  const keys = await trx.deleteFrom('push_approval_keys').where('user_id', '=', userId).returning('id').execute();
  await trx.deleteFrom('mfa_factors').where('user_id', '=', userId).where('method', '=', 'push_approval').execute();
  const denied = await trx.updateTable('push_approval_requests').set({ state: 'denied', deny_reason: 'factor_removed', answered_at: now })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([
      eb('state', '=', 'pending'),
      eb.and([
        eb('state', '=', 'approved'), eb('completed_at', 'is', null),
        // A step-up's jti is null: no denylist row matches it.
        eb.not(eb.exists(eb.selectFrom('token_denylist').select('jti').whereRef('token_denylist.jti', '=', 'push_approval_requests.two_factor_jti'))),
      ]),
    ]))
    .returning('id')
    .execute();
  return { removed: keys.length > 0, denied: denied.map((r) => r.id) };
}

/** `removePushApprovalFactor`, for callers that need only whether there was a key. */
export async function removePushApproval(trx: Db, userId: number, now: Date): Promise<boolean> {
  return (await removePushApprovalFactor(trx, userId, now)).removed;
}
