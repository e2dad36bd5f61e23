/**
 * The error codes routes share, for their `errors(...)` in the OpenAPI document: what signing in
 * can answer (every sign-in route, whatever proves the identity), and what a `two_factor_token`
 * can answer where a route accepts one.
 */
import { AccessErrors } from '../access/errors.js';
import { CredentialErrors } from '../credentials/errors.js';
import { MfaErrors } from '../mfa/errors.js';
import type { DeclaredError } from '../platform/http/schemas.js';
import { PolicyErrors } from '../policy/errors.js';
import { SessionErrors } from '../sessions/errors.js';
import { TokenErrors } from '../tokens/errors.js';
import { LdapErrors } from '../ldap/errors.js';
import { SignInErrors } from './errors.js';
import { ErasureErrors } from '../gdpr/erasure/errors.js';

/** The account's state, the access policy and the second factor, after the identity is proven. */
export const ADMISSION_ERRORS: DeclaredError[] = [
  SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, CredentialErrors.PASSWORD_CHANGE_REQUIRED,
  MfaErrors['2FA_REQUIRED'], MfaErrors.MFA_SETUP_INCOMPLETE, AccessErrors.POLICY_RESTRICTED, ErasureErrors.ACCOUNT_ERASURE_PENDING,
];

/** A sign-in with a secret (password, PIN): a wrong one, then the admission. */
export const SIGN_IN_ERRORS: DeclaredError[] = [SignInErrors.INVALID_CREDENTIALS, ...ADMISSION_ERRORS];

/** A token in the body or the `Authorization` header that a route checks itself. */
export const TOKEN_CHECK_ERRORS: DeclaredError[] = [
  TokenErrors.TOKEN_MISSING, TokenErrors.TOKEN_INVALID, TokenErrors.TOKEN_EXPIRED, TokenErrors.TOKEN_NOT_YET_VALID, TokenErrors.TOKEN_REVOKED,
  TokenErrors.FINGERPRINT_REQUIRED, TokenErrors.FINGERPRINT_MISMATCH, TokenErrors.IP_MISMATCH, SessionErrors.SESSION_INVALID, SessionErrors.SESSION_EXPIRED,
];

/** A route that takes a `two_factor_token` (or a bearer token) and finishes a sign-in with a factor. */
export const SECOND_FACTOR_ERRORS: DeclaredError[] = [
  ...TOKEN_CHECK_ERRORS, SignInErrors.ACCOUNT_DISABLED, PolicyErrors.ACCOUNT_LOCKED, MfaErrors.MFA_METHOD_UNAVAILABLE, MfaErrors.MFA_LOCKED,
  CredentialErrors.PASSWORD_CHANGE_REQUIRED, AccessErrors.POLICY_RESTRICTED, ErasureErrors.ACCOUNT_ERASURE_PENDING,
];

/** A sign-in whose password the bank's directory checks (LDAP, and third-party sign-in that routes to it). */
export const IDENTITY_ERRORS_LDAP: DeclaredError[] = [
  ...SIGN_IN_ERRORS, LdapErrors.LDAP_CREDENTIALS_MISSING, LdapErrors.LDAP_NOT_CONFIGURED, LdapErrors.LDAP_UNAVAILABLE, SignInErrors.IDENTITY_CONFLICT,
];
