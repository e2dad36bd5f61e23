/** Errors of the access policy (SPEC "Access policy": a violation returns 403). */
import { defineErrors } from '../platform/errors.js';

export const AccessErrors = defineErrors({
  POLICY_RESTRICTED: { status: 403, message: 'The bank\'s access policy does not allow this sign-in or request here or now.' },
  ACCESS_POLICY_NOT_FOUND: { status: 404, message: 'No access policy has this id.' },
  ACCESS_POLICY_EXISTS: { status: 409, message: 'An access policy with this name exists.' },
  DEVICE_BINDING_NOT_FOUND: { status: 404, message: 'No device binding has this id.' },
  DEVICE_BINDING_SELF_APPROVAL: { status: 403, message: 'An administrator cannot decide on a binding of their own devices; another administrator must.' },
  DEVICE_BINDING_UNCHANGED: { status: 409, message: 'The device binding already has this status.' },
});
