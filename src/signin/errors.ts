import { defineErrors } from '../platform/errors.js';

export const SignInErrors = defineErrors({
  INVALID_CREDENTIALS: { status: 401, message: 'The username or password is incorrect.' },
  ACCOUNT_DISABLED: { status: 403, message: 'This account is disabled; contact the bank.' },
  /** `details.fields` (username, email) or `details.reason`: an account already holds this identity, or may only be linked by an administrator (LDAP, SAML). Audited. */
  IDENTITY_CONFLICT: { status: 409, message: 'An account already uses this username or email; an administrator must link or rename it before sign-in with the identity provider works.' },
  CHANNEL_MISMATCH: { status: 403, message: 'This token was issued on another channel; validate it on that channel\'s route.' },
});
