/**
 * Errors of the risk response policy: a sign-in refused for its risk, one from a network blocked
 * for credential stuffing, and an administrator's policy that cannot apply.
 */
import { defineErrors } from '../../platform/errors.js';

export const RiskDecisionErrors = defineErrors({
  /** `details.reason`: `score` (a refusal rule) or `no_second_factor` (a second factor is due, and the account has no factor nor a contact on file to send a code to). */
  RISK_TOO_HIGH: { status: 403, message: 'This sign-in was refused because it does not look like the account holder\'s. Sign in from a device and place you usually use, or contact the bank.' },
  /** Retry-After and `details.retry_after`: when the block ends. */
  ADDRESS_BLOCKED: { status: 429, message: 'Sign-ins from this network are paused for a while because many accounts failed from it. Try again later.' },
});
