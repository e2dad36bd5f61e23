/**
 * Errors of the profile (rectification). A wrong, used, expired or exhausted contact code answers
 * with the one-time code errors every client already knows (OTP_INVALID, OTP_EXPIRED,
 * OTP_ATTEMPTS_EXCEEDED), and a new address another account holds with IDENTIFIER_CONFLICT
 * (src/admin/errors.ts); only what is particular to the profile is here.
 */
import { defineErrors } from '../../platform/errors.js';

export const ProfileErrors = defineErrors({
  /**
   * A directory (LDAP) or identity-provider (SAML) account: its name and contacts are the
   * provider's, refreshed at each sign-in. `details.fields`: the fields refused; `details.idp_type`.
   */
  PROFILE_MANAGED_EXTERNALLY: { status: 409, message: 'Your name, email and phone number are kept by the bank\'s directory or identity provider; change them there. Language and date of birth can be changed here.' },
  /** `details.kind`: email or phone. Nothing was requested, or the last request was replaced or failed to be delivered. */
  CONTACT_CHANGE_NOT_PENDING: { status: 404, message: 'No change of this contact is waiting for a code; request it again with PUT /api/v1/auth/profile/update.' },
});
