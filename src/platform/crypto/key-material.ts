/**
 * The keys every capability derives its own from: AES-256-GCM ciphers and blind indexes under
 * the field master keys (current first, then FIELD_ENCRYPTION_KEYS_PREVIOUS), and HMAC-SHA256
 * hashers under keys derived from the field key or the IP-hash key. A capability asks for one
 * purpose and never sees the master keys.
 */
import { BlindIndex } from './blind-index.js';
import { deriveKey, FieldCipher, Hasher } from './field-cipher.js';
import { fieldMasters, type Secrets } from './secrets.js';

export class KeyMaterial {
  private readonly masters: Buffer[];

  constructor(private readonly secrets: Secrets) {
    this.masters = fieldMasters(secrets);
  }

  /** AES-256-GCM for one purpose (ENCRYPTED_COLUMNS names them); reads values under previous keys too. */
  cipher(purpose: string): FieldCipher {
    return new FieldCipher(this.masters, purpose);
  }

  blindIndex(purpose: string): BlindIndex {
    return new BlindIndex(this.masters, purpose);
  }

  /**
   * Keyed HMAC-SHA256 for one purpose. `root` picks the secret it is derived from: `ip` for
   * values that must survive a field-key rotation (IP hashes, backup and one-time codes).
   */
  hasher(root: 'field' | 'ip', purpose: string): Hasher {
    return new Hasher(deriveKey(root === 'field' ? this.secrets.fieldKey : this.secrets.ipHashKey, purpose));
  }

  /** The transport RSA private key (configured, or generated for development). */
  get transportPrivateKeyPem(): string {
    return this.secrets.transportPrivateKeyPem;
  }
}
