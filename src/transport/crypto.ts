/**
 * The primitives of transport encryption (SPEC "Transport encryption" 2-5, ARCHITECTURE ruling 4):
 * RSA-OAEP with SHA-256 for both the hash and MGF1 (RFC 8017 7.1) to carry AES keys, and
 * AES-256-GCM with a fresh random 12-byte IV and a 16-byte tag (NIST SP 800-38D) for bodies.
 *
 * Every decoding step is strict (standard base64 only, exact lengths) and every failure is the
 * same `TransportDecryptError`, so the caller can answer one identical message: no oracle.
 */
import { constants, createCipheriv, createDecipheriv, createPublicKey, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';

export const AES_KEY_BYTES = 32;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const MIN_CLIENT_RSA_BITS = 2048;
/** Larger keys would let a client make every answer cost the server milliseconds. */
export const MAX_CLIENT_RSA_BITS = 4096;
/** The only public exponent accepted from clients (F4). */
export const CLIENT_RSA_EXPONENT = 65537n;

/** One failure for every way decryption can fail. Carries no detail on purpose. */
export class TransportDecryptError extends Error {
  constructor() {
    super('decryption failed');
    this.name = 'TransportDecryptError';
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Standard base64 (RFC 4648 4) with padding, in its canonical form (the unused bits of the last
 * digit zero, RFC 4648 3.5); anything else, or a wrong length, fails.
 */
export function strictBase64(value: unknown, exactBytes?: number, maxBytes = 1 << 20): Buffer {
  if (typeof value !== 'string' || value.length > Math.ceil(maxBytes / 3) * 4 || !BASE64.test(value)) throw new TransportDecryptError();
  const buf = Buffer.from(value, 'base64');
  if (exactBytes !== undefined && buf.length !== exactBytes) throw new TransportDecryptError();
  if (buf.toString('base64') !== value) throw new TransportDecryptError();
  return buf;
}

export interface Sealed {
  iv: string;
  ciphertext: string;
  tag: string;
}

/** `aad`: additional data the tag authenticates and the ciphertext does not carry (the real-time channel's type and sequence). */
export function aesGcmSeal(key: Buffer, plaintext: Buffer | string, aad?: Buffer): Sealed {
  const iv = randomBytes(IV_BYTES);
  const c = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  if (aad) c.setAAD(aad);
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return { iv: iv.toString('base64'), ciphertext: ct.toString('base64'), tag: c.getAuthTag().toString('base64') };
}

export function aesGcmOpen(key: Buffer, iv: unknown, ciphertext: unknown, tag: unknown, aad?: Buffer): Buffer {
  const ivBuf = strictBase64(iv, IV_BYTES);
  const tagBuf = strictBase64(tag, TAG_BYTES);
  const ctBuf = strictBase64(ciphertext);
  if (key.length !== AES_KEY_BYTES) throw new TransportDecryptError();
  try {
    const d = createDecipheriv('aes-256-gcm', key, ivBuf, { authTagLength: TAG_BYTES });
    d.setAuthTag(tagBuf);
    if (aad) d.setAAD(aad);
    return Buffer.concat([d.update(ctBuf), d.final()]);
  } catch {
    throw new TransportDecryptError();
  }
}

const OAEP = { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' } as const;

/** Unwraps an AES-256 key wrapped with RSA-OAEP-SHA256 (a key wrapped with SHA-1 OAEP fails). */
export function rsaUnwrap(privateKey: KeyObject, wrapped: unknown): Buffer {
  const bytes = strictBase64(wrapped, (privateKey.asymmetricKeyDetails?.modulusLength ?? 2048) / 8);
  let key: Buffer;
  try {
    key = privateDecrypt({ key: privateKey, ...OAEP }, bytes);
  } catch {
    throw new TransportDecryptError();
  }
  if (key.length !== AES_KEY_BYTES) throw new TransportDecryptError();
  return key;
}

export function rsaWrap(publicKey: KeyObject, key: Buffer): string {
  return publicEncrypt({ key: publicKey, ...OAEP }, key).toString('base64');
}

/**
 * Parses a client's public key: PEM, RSA, at least 2048 bits, and usable. A key that parses can
 * still be refused by OpenSSL when the answer is wrapped (e >= n, an even modulus, a large
 * exponent on a large modulus): one trial wrap here refuses it before the route runs.
 */
export function parseClientPublicKey(pem: unknown): KeyObject {
  if (typeof pem !== 'string' || pem.length > 4096) throw new TransportDecryptError();
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new TransportDecryptError();
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa' || bits < MIN_CLIENT_RSA_BITS || bits > MAX_CLIENT_RSA_BITS) throw new TransportDecryptError();
  // Only F4 (65537), what every RSA library generates: a huge exponent makes each public
  // operation as slow as a private one, on the event loop (issue 9, section 4).
  if (key.asymmetricKeyDetails?.publicExponent !== CLIENT_RSA_EXPONENT) throw new TransportDecryptError();
  try {
    publicEncrypt({ key, ...OAEP }, Buffer.alloc(AES_KEY_BYTES));
  } catch {
    throw new TransportDecryptError();
  }
  return key;
}

export interface PreAuthEnvelope {
  encrypted_key: string;
  ciphertext: string;
  nonce: string;
  tag: string;
}

/** Encrypts `plaintext` under `aesKey`, and wraps `aesKey` for `recipient`. */
export function sealForRecipient(recipient: KeyObject, aesKey: Buffer, plaintext: Buffer | string): PreAuthEnvelope {
  const s = aesGcmSeal(aesKey, plaintext);
  return { encrypted_key: rsaWrap(recipient, aesKey), ciphertext: s.ciphertext, nonce: s.iv, tag: s.tag };
}

export function newAesKey(): Buffer {
  return randomBytes(AES_KEY_BYTES);
}
