/**
 * Errors of erasure: the request, its cancel, the operators' hold, and the sign-in of an account
 * whose erasure is pending.
 */
import { defineErrors } from '../../platform/errors.js';

export const ErasureErrors = defineErrors({
  /** `details.erase_after`: when it is due; `details.requested_at`. */
  ERASURE_ALREADY_PENDING: { status: 409, message: 'An erasure of this account is pending already.' },
  /** An account of a service (an integration) is retired by its administrators, not erased by itself. */
  ERASURE_NOT_ALLOWED_SERVICE_ACCOUNT: { status: 409, message: 'A service account cannot be erased this way; its administrators retire it.' },
  /** `details.erase_after`, `details.cancel`: how to cancel (the notice's link, or `POST /api/v1/auth/gdpr/delete/cancel` with the username and password). Answered only to a sign-in whose credentials are right. */
  ACCOUNT_ERASURE_PENDING: { status: 403, message: 'This account is to be erased; it cannot sign in. Cancel the erasure to use it again.' },
  /** The cancel token or the request names no pending erasure (cancelled, erased, or never issued). */
  ERASURE_NOT_FOUND: { status: 404, message: 'No pending erasure matches.' },
  /** A legal hold is already on the request (`hold`), or none is there to release (`release`). */
  ERASURE_HOLD_CONFLICT: { status: 409, message: 'The erasure is not in a state this allows.' },
});
