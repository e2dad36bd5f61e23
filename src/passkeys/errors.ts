/**
 * Errors of the passkeys (WebAuthn). A passwordless sign-in that fails for any reason (an unknown
 * credential, a wrong signature, a spent challenge, a counter that went back) answers the same
 * `401 INVALID_CREDENTIALS` as a wrong password: nothing tells which. The owner's routes and the
 * second-factor step have their own codes.
 */
import { defineErrors } from '../platform/errors.js';

export const PasskeyErrors = defineErrors({
  PASSKEY_NOT_FOUND: { status: 404, message: 'No such passkey.' },
  /** The challenge is unknown, belongs to another request, has expired (5 minutes) or was used: ask for new options. */
  PASSKEY_CHALLENGE_INVALID: { status: 400, message: 'This passkey challenge is unknown, expired or already used; ask for new options.' },
  /** `details.reason`: why the device's answer was refused (origin, relying party, user verification, signature). */
  PASSKEY_REGISTRATION_FAILED: { status: 400, message: 'The passkey could not be registered: the device\'s answer did not verify.' },
  PASSKEY_ALREADY_REGISTERED: { status: 409, message: 'This passkey is already registered.' },
  /** As a second factor or a step-up: the answer did not verify (also a counter that went back: a cloned authenticator). */
  PASSKEY_INVALID: { status: 401, message: 'The passkey could not be verified.' },
});
