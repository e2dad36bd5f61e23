import { defineErrors } from '../platform/errors.js';

export const CredentialErrors = defineErrors({
  PASSWORD_POLICY_VIOLATION: { status: 422, message: 'The new password does not meet the password rules.' },
  PASSWORD_CHANGE_REQUIRED: { status: 403, message: 'The password must be changed before signing in.' },
  /** `details.idp_type`: where the password lives (LDAP). Nothing was counted or changed. */
  /** `Retry-After` and `details.retry_after_seconds`. No password was compared and no failed attempt counted. */
  SIGNIN_BUSY: { status: 503, message: 'The service is busy checking other sign-ins; try again in a few seconds.' },
  PASSWORD_MANAGED_EXTERNALLY: { status: 409, message: 'This account\'s password is kept by the bank\'s directory or identity provider; change or reset it there.' },
});
