/**
 * Errors of the export, portability and request-log routes. A missing re-authentication is 403
 * (the caller is known, the action needs a fresher proof), as STEP_UP_REQUIRED is.
 */
import { defineErrors } from '../../platform/errors.js';

export const GdprExportErrors = defineErrors({
  /** `details.within_minutes`: how recent the sign-in must be; `details.signed_in_at`: this session's. */
  GDPR_REAUTHENTICATION_REQUIRED: { status: 403, message: 'A copy of your data needs a recent sign-in: sign in again, then ask within 10 minutes.' },
});
