import { defineErrors } from '../platform/errors.js';

export const SessionErrors = defineErrors({
  SESSION_INVALID: { status: 401, message: 'The session has ended; sign in again.' },
  SESSION_EXPIRED: { status: 401, message: 'The session expired after inactivity; sign in again.' },
});
