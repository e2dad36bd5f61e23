import { defineErrors } from '../platform/errors.js';

export const SignInErrors = defineErrors({
  INVALID_CREDENTIALS: { status: 401, message: 'The username or password is incorrect.' },
  ACCOUNT_DISABLED: { status: 403, message: 'This account is disabled; contact the bank.' },
  CHANNEL_MISMATCH: { status: 403, message: 'This token was issued on another channel; validate it on that channel\'s route.' },
});
