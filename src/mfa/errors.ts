/**
 * Errors shared by every second factor (SPEC "Error codes named": 2FA_REQUIRED,
 * MFA_SETUP_INCOMPLETE). Each factor keeps its own codes beside it (totp/, otp/,
 * security-questions/, reset/). Statuses are recorded in docs/errors.md and docs/decisions.md.
 */
import { defineErrors } from '../platform/errors.js';

export const MfaErrors = defineErrors({
  '2FA_REQUIRED': { status: 401, message: 'A second factor is required to finish signing in.' },
  MFA_SETUP_INCOMPLETE: { status: 403, message: 'Your account must set up a second factor before it can sign in.' },
  MFA_METHOD_UNAVAILABLE: { status: 400, message: 'This second factor is not available for this account.' },
  MFA_LOCKED: { status: 429, message: 'Too many failed second-factor attempts; try again later.' },
  /**
   * Moving a factor to another device needs the factor first: a step-up in the last
   * `details.within_minutes`; `details.step_up` lists each enrolled factor's routes to call.
   */
  STEP_UP_REQUIRED: { status: 403, message: 'Confirm it is you with your current second factor first (POST /api/v1/auth/totp/verify, or POST /api/v1/auth/2fa/request then /api/v1/auth/2fa/verify), then try again.' },
});
