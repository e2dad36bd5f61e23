/**
 * Errors of the responses to a suspicious sign-in. A "this was not me" token that names nothing
 * is 404, one used already 409, one past its days 410; a sign-in of an account its holder locked
 * with such a token is 403 with the way out (an account recovery) in `details`.
 */
import { defineErrors } from '../../platform/errors.js';

export const RiskResponseErrors = defineErrors({
  /** `details.locked_at`; `details.recover`, `details.recover_path`: how the holder gets the account back. */
  ACCOUNT_SECURITY_LOCKED: { status: 403, message: 'This account is locked because a sign-in to it was reported as not the account holder\'s. Recover the account to unlock it, or contact the bank.' },
  NOT_ME_TOKEN_INVALID: { status: 404, message: 'This "this was not me" link is not valid.' },
  /** `details.used_at`: when it was used. */
  NOT_ME_TOKEN_USED: { status: 409, message: 'This "this was not me" link has been used already: the account was locked then.' },
  /** `details.expired_at`. */
  NOT_ME_TOKEN_EXPIRED: { status: 410, message: 'This "this was not me" link has expired. If a sign-in was not yours, contact the bank.' },
});
