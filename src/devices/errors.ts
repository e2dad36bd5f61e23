import { defineErrors } from '../platform/errors.js';

export const DeviceErrors = defineErrors({
  /** Unknown id, or another user's token: the same answer, so ids say nothing about other users. */
  DEVICE_TOKEN_NOT_FOUND: { status: 404, message: 'You have no device token with this id.' },
});
