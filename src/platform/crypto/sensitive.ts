/**
 * At-rest protection of sensitive columns (SPEC Transport encryption 9). With
 * DB_FIELD_ENCRYPTION=1 values are written encrypted (AES-256-GCM, bound to their column);
 * with 0 they are written as they are. Reading accepts both, so the switch can be flipped
 * either way and a re-encryption pass converts what is already stored.
 */
import type { FieldCipher } from './field-cipher.js';

export class SensitiveColumns {
  constructor(
    private readonly cipher: FieldCipher,
    private readonly enabled: boolean,
  ) {}

  protect(value: string, column: string): string {
    return this.enabled ? this.cipher.encrypt(value, column) : value;
  }

  reveal(stored: string, column: string): string {
    return this.cipher.isEncrypted(stored) ? this.cipher.decrypt(stored, column) : stored;
  }
}
