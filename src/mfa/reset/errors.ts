/**
 * Errors of the MFA reset workflow (issue 4 section 5). Statuses: 403 when the caller may not do
 * this at all (no proof of a second factor, or deciding their own request), 404 for an unknown
 * request, 409 when the request's state forbids the step (one open request per user; a decision
 * only on a pending, unexpired request).
 */
import { defineErrors } from '../../platform/errors.js';

export const MfaResetErrors = defineErrors({
  MFA_RESET_PROOF_REQUIRED: { status: 403, message: 'To ask for a second-factor reset, sign in with your password and a second factor, or answer your security questions first.' },
  MFA_RESET_ALREADY_OPEN: { status: 409, message: 'A second-factor reset request is already open for this account.' },
  MFA_RESET_NOT_FOUND: { status: 404, message: 'No such second-factor reset request.' },
  MFA_RESET_NOT_PENDING: { status: 409, message: 'This second-factor reset request is no longer pending.' },
  MFA_RESET_SELF_APPROVAL: { status: 403, message: 'An administrator cannot decide their own second-factor reset request.' },
});
