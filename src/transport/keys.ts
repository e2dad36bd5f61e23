/**
 * The server's RSA-2048 transport key pair, loaded at start-up (SPEC Transport encryption 2).
 * This module only loads it and describes its public half; encryption of bodies is the
 * transport plugin's.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import type { Clock } from '../platform/clock.js';

export const TRANSPORT_KEY_LIFETIME_DAYS = 90;

export class TransportKeys {
  readonly privateKey: KeyObject;
  readonly publicKeyPem: string;
  readonly keyId: string;
  readonly expiresAt: string;

  constructor(privatePem: string, clock: Clock) {
    this.privateKey = createPrivateKey(privatePem);
    const details = this.privateKey.asymmetricKeyDetails;
    if (this.privateKey.asymmetricKeyType !== 'rsa' || (details?.modulusLength ?? 0) < 2048) {
      throw new Error('The transport key must be an RSA private key of at least 2048 bits');
    }
    const publicKey = createPublicKey(this.privateKey);
    this.publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    this.keyId = createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
    this.expiresAt = new Date(clock.now() + TRANSPORT_KEY_LIFETIME_DAYS * 86_400_000).toISOString();
  }
}
