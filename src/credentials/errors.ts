import { defineErrors } from '../platform/errors.js';

export const CredentialErrors = defineErrors({
  PASSWORD_POLICY_VIOLATION: { status: 422, message: 'The new password does not meet the password rules.' },
  PASSWORD_CHANGE_REQUIRED: { status: 403, message: 'The password must be changed before signing in.' },
});
