import { defineErrors } from '../platform/errors.js';

export const TokenErrors = defineErrors({
  TOKEN_MISSING: { status: 401, message: 'A bearer token is required.' },
  TOKEN_INVALID: { status: 401, message: 'The token is invalid.' },
  TOKEN_EXPIRED: { status: 401, message: 'The token has expired.' },
  TOKEN_NOT_YET_VALID: { status: 401, message: 'The token is not valid yet.' },
  TOKEN_REVOKED: { status: 401, message: 'The token has been revoked.' },
  /** The token (or its session) is bound to a device and the request has no `X-Device-Fingerprint`. */
  FINGERPRINT_REQUIRED: { status: 401, message: 'This token is bound to a device: send the device\'s fingerprint in the X-Device-Fingerprint header, as at sign-in.' },
  FINGERPRINT_MISMATCH: { status: 401, message: 'The token is bound to another device.' },
  IP_MISMATCH: { status: 401, message: 'The token is bound to another network address.' },
  REFRESH_TOKEN_REUSED: { status: 401, message: 'The refresh token was already used; the session has been ended.' },
});
