/** Errors of the access policy (SPEC "Access policy": a violation returns 403). */
import { defineErrors } from '../platform/errors.js';

export const AccessErrors = defineErrors({
  POLICY_RESTRICTED: { status: 403, message: 'The bank\'s access policy does not allow this sign-in here or now.' },
  ACCESS_POLICY_NOT_FOUND: { status: 404, message: 'No access policy has this id.' },
  ACCESS_POLICY_EXISTS: { status: 409, message: 'An access policy with this name exists.' },
});
