import { defineErrors } from '../platform/errors.js';

/** The operator's settings screens: the directory connection test. */
export const SettingsErrors = defineErrors({
  LDAP_TEST_NOT_CONFIGURED: { status: 409, message: 'Directory sign-in is not configured: there is no directory to test. Configure it first (POST /api/v1/auth/ldap/config).' },
});
