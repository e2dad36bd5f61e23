/**
 * One-time code errors (email, SMS and push). Shared second-factor codes (MFA_LOCKED,
 * MFA_METHOD_UNAVAILABLE) live in ../errors.ts. A wrong code, a spent one and one replaced by a
 * newer code are one answer (`OTP_INVALID`, SPEC: "wrong or already used"); only expiry and the
 * exhausted attempts get their own code, because the client must then request a new one.
 */
import { defineErrors } from '../../platform/errors.js';

export const OtpErrors = defineErrors({
  OTP_INVALID: { status: 401, message: 'The code is wrong or was already used.' },
  OTP_EXPIRED: { status: 401, message: 'The code has expired; request a new one.' },
  OTP_ATTEMPTS_EXCEEDED: { status: 429, message: 'Too many wrong attempts for this code; request a new one.' },
  OTP_RESEND_THROTTLED: { status: 429, message: 'A code was sent moments ago; wait before requesting another.' },
  OTP_SEND_LIMIT: { status: 429, message: 'Too many codes were requested; try again later.' },
  OTP_DELIVERY_FAILED: { status: 503, message: 'The code could not be delivered; try again in a moment.' },
  OTP_FACTOR_ALREADY_ENROLLED: { status: 409, message: 'This method is already enrolled as a second factor.' },
});
