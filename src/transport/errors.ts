import { defineErrors } from '../platform/errors.js';

export const TransportErrors = defineErrors({
  DECRYPTION_FAILED: { status: 400, message: 'The encrypted payload could not be decrypted.' },
  ENCRYPTION_REQUIRED: { status: 422, message: 'This request must be encrypted: send x-encrypted: true with an encrypted body.' },
});
