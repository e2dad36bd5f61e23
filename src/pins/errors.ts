import { defineErrors } from '../platform/errors.js';

/**
 * PINs and the USSD gateway. A wrong PIN, an unknown phone number and a phone without a PIN
 * answer SignInErrors.INVALID_CREDENTIALS, and a locked PIN PolicyErrors.ACCOUNT_LOCKED, as
 * passwords do: the same meaning keeps the same code.
 */
export const PinErrors = defineErrors({
  PIN_POLICY_VIOLATION: { status: 422, message: 'The new PIN does not meet the PIN rules.' },
  PIN_NOT_SET: { status: 409, message: 'No PIN is set for this account; set one with the current password.' },
  GATEWAY_UNAUTHORIZED: { status: 401, message: 'The USSD gateway is not authenticated: send its key in X-Gateway-Key.' },
  /** No USSD gateway is configured on this server at all (USSD_GATEWAY_KEYS unset): no key could be right. */
  USSD_NOT_CONFIGURED: { status: 503, message: 'USSD is not available on this server: the operator has not configured any USSD gateway. Ask them to add the gateway and its key (USSD_GATEWAY_KEYS).' },
});
