/** Schemas and description fragments every factor route shares. */
import Type from 'typebox';

/** The `two_factor_token` a route accepts instead of a bearer token. */
export const TwoFactorToken = Type.String({
  minLength: 1, maxLength: 4096,
  description: 'The `two_factor_token` of `401 2FA_REQUIRED` (or, for enrolment, of `403 MFA_SETUP_INCOMPLETE`); it lives `TWO_FACTOR_TOKEN_EXPIRE_MINUTES` (5 by default) and finishes one sign-in.',
  examples: ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0b2tlbl90eXBlIjoiMmZhIn0.sig'],
});

/** The answer of a signed-in step-up. */
export const StepUpResponse = Type.Object({
  verified: Type.Literal(true),
  method: Type.String({ examples: ['totp'] }),
  session_id: Type.String({ format: 'uuid' }),
  verified_at: Type.String({ format: 'date-time' }),
}, { title: 'Step-up' });

/** The 401s of a route that takes a bearer token or a `two_factor_token`. */
export const TOKEN_ERRORS = '`401 TOKEN_MISSING | TOKEN_INVALID | TOKEN_EXPIRED | TOKEN_REVOKED | FINGERPRINT_REQUIRED | FINGERPRINT_MISMATCH`, `401 SESSION_*`: no usable bearer token or `two_factor_token` (one of the wrong purpose is `TOKEN_INVALID`; one already used is `TOKEN_REVOKED`).';

/** What the account behind a `two_factor_token` may have become since the password step. */
export const ACCOUNT_ERRORS = '`403 ACCOUNT_DISABLED`, `429 ACCOUNT_LOCKED`: the account behind a `two_factor_token` can no longer sign in.';

/** On routes that finish a sign-in: a temporary or expired password is changed after the factor (issue 9, section 6). */
export const AFTER_FACTOR_PASSWORD_CHANGE = '`403 PASSWORD_CHANGE_REQUIRED`: the code was right, and the password is temporary or expired: `details.reset_token` (`RESET_TOKEN_EXPIRE_MINUTES`, 10 by default) goes to `POST /api/v1/auth/reset/password`; no session is created.';
