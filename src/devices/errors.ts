import { defineErrors } from '../platform/errors.js';

export const DeviceErrors = defineErrors({
  /** Unknown id, or another user's token: the same answer, so ids say nothing about other users. */
  DEVICE_TOKEN_NOT_FOUND: { status: 404, message: 'You have no device token with this id.' },
  /** The token was being registered and removed at the same instant; register it again. */
  DEVICE_TOKEN_BUSY: { status: 409, message: 'This device token changed while it was being registered; try again.' },
});
