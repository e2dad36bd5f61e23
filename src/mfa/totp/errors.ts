/**
 * TOTP and backup-code errors. Shared second-factor codes (MFA_LOCKED, MFA_METHOD_UNAVAILABLE)
 * live in ../errors.ts. A wrong, out-of-window and replayed code are one answer: telling them
 * apart would tell an attacker which codes were once valid.
 */
import { defineErrors } from '../../platform/errors.js';

export const TotpErrors = defineErrors({
  TOTP_INVALID: { status: 401, message: 'The authenticator code is wrong, outside the accepted time window, or was already used.' },
  BACKUP_CODE_INVALID: { status: 401, message: 'The backup code is wrong or was already used.' },
  TOTP_ALREADY_ENROLLED: { status: 409, message: 'An authenticator app is already enrolled for this account.' },
  TOTP_SETUP_NOT_STARTED: { status: 409, message: 'Start authenticator setup first (POST /api/v1/2fa/totp/setup).' },
});
