import { defineErrors } from '../platform/errors.js';

export const PolicyErrors = defineErrors({
  ACCOUNT_LOCKED: { status: 429, message: 'Too many failed sign-ins; the account is temporarily locked.' },
});
