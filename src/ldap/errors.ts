import { defineErrors } from '../platform/errors.js';

/**
 * LDAP sign-in and configuration. A wrong password and an unknown directory user answer
 * SignInErrors.INVALID_CREDENTIALS, and a locked name PolicyErrors.ACCOUNT_LOCKED, as every
 * sign-in does.
 */
export const LdapErrors = defineErrors({
  LDAP_NOT_CONFIGURED: { status: 401, message: 'Directory sign-in is not configured on this server.' },
  LDAP_UNAVAILABLE: { status: 401, message: 'The directory cannot be reached; try again later. This attempt was not counted against the account.' },
  LDAP_CONFIG_INVALID: { status: 400, message: 'The LDAP configuration is not valid.' },
  LDAP_CREDENTIALS_MISSING: { status: 400, message: 'Send both username and password.' },
});
