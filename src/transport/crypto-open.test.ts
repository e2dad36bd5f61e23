import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { aesGcmOpen, aesGcmSeal, IV_BYTES, TAG_BYTES, TransportDecryptError, type Sealed } from './crypto.js';

/**
 * Each check `aesGcmOpen` makes, pinned on its own (issue 9 section 10): the tag is verified
 * (every bit, its exact length), the ciphertext, the IV (its bits and its exact length) and the
 * key are authenticated, and every failure is the one TransportDecryptError.
 */
const key = randomBytes(32);
const PLAINTEXT = '{"username":"amina.otieno","password":"Vt7#qLm2!xRp9$"}';
const sealed: Sealed = aesGcmSeal(key, PLAINTEXT);
const bytes = (b64: string): Buffer => Buffer.from(b64, 'base64');
const b64 = (b: Buffer): string => b.toString('base64');

function flipBit(b64value: string, bit: number): string {
  const b = bytes(b64value);
  b[bit >> 3]! ^= 1 << (bit & 7);
  return b64(b);
}

function refused(open: () => unknown, label: string): void {
  expect(open, label).toThrow(TransportDecryptError);
  expect(open, label).toThrow('decryption failed');
}

/** AES-256-GCM with an IV and tag of any length, to forge what aesGcmSeal never makes. */
function sealRaw(k: Buffer, iv: Buffer, plaintext: string, tagLength = TAG_BYTES): Sealed {
  const c = createCipheriv('aes-256-gcm', k, iv, { authTagLength: tagLength });
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return { iv: b64(iv), ciphertext: b64(ct), tag: b64(c.getAuthTag()) };
}

describe('aesGcmOpen', () => {
  it('control: the untouched envelope opens to its plaintext', () => {
    expect(aesGcmOpen(key, sealed.iv, sealed.ciphertext, sealed.tag).toString('utf8')).toBe(PLAINTEXT);
    const own = sealRaw(key, randomBytes(IV_BYTES), PLAINTEXT);
    expect(aesGcmOpen(key, own.iv, own.ciphertext, own.tag).toString('utf8')).toBe(PLAINTEXT);
  });

  it('forgery: any single flipped bit in the tag throws TransportDecryptError', () => {
    for (let bit = 0; bit < TAG_BYTES * 8; bit++) refused(() => aesGcmOpen(key, sealed.iv, sealed.ciphertext, flipBit(sealed.tag, bit)), `tag bit ${bit}`);
  });

  it('tag truncation: a shortened genuine tag (15, 12, 8, 4, 1 bytes) or an over-long one throws TransportDecryptError', () => {
    const tag = bytes(sealed.tag);
    for (const n of [15, 12, 8, 4, 1]) refused(() => aesGcmOpen(key, sealed.iv, sealed.ciphertext, b64(tag.subarray(0, n))), `tag of ${n} bytes`);
    refused(() => aesGcmOpen(key, sealed.iv, sealed.ciphertext, ''), 'empty tag');
    refused(() => aesGcmOpen(key, sealed.iv, sealed.ciphertext, b64(Buffer.concat([tag, Buffer.alloc(1)]))), 'tag of 17 bytes');
    // A message sealed with a genuinely short tag (valid for that length) is refused as well.
    const short = sealRaw(key, randomBytes(IV_BYTES), PLAINTEXT, 12);
    refused(() => aesGcmOpen(key, short.iv, short.ciphertext, short.tag), 'honest 12-byte tag');
  });

  it('tampering: any single flipped bit in the ciphertext, or a cut or extended ciphertext, throws TransportDecryptError', () => {
    const ctBits = bytes(sealed.ciphertext).length * 8;
    for (let bit = 0; bit < ctBits; bit++) refused(() => aesGcmOpen(key, sealed.iv, flipBit(sealed.ciphertext, bit), sealed.tag), `ciphertext bit ${bit}`);
    const ct = bytes(sealed.ciphertext);
    refused(() => aesGcmOpen(key, sealed.iv, b64(ct.subarray(0, ct.length - 1)), sealed.tag), 'ciphertext cut by one byte');
    refused(() => aesGcmOpen(key, sealed.iv, b64(Buffer.concat([ct, Buffer.alloc(1)])), sealed.tag), 'ciphertext extended by one byte');
  });

  it('wrong IV: any single flipped IV bit, or another IV, throws TransportDecryptError', () => {
    for (let bit = 0; bit < IV_BYTES * 8; bit++) refused(() => aesGcmOpen(key, flipBit(sealed.iv, bit), sealed.ciphertext, sealed.tag), `iv bit ${bit}`);
    refused(() => aesGcmOpen(key, b64(randomBytes(IV_BYTES)), sealed.ciphertext, sealed.tag), 'random iv');
  });

  it('IV length: a message genuinely sealed under a 16-, 13- or 8-byte IV (GCM accepts any length) throws TransportDecryptError', () => {
    for (const n of [16, 8, 13]) {
      const odd = sealRaw(key, randomBytes(n), PLAINTEXT);
      refused(() => aesGcmOpen(key, odd.iv, odd.ciphertext, odd.tag), `iv of ${n} bytes`);
    }
  });

  it('wrong key: another AES-256 key, or a key of the wrong length, throws TransportDecryptError', () => {
    refused(() => aesGcmOpen(randomBytes(32), sealed.iv, sealed.ciphertext, sealed.tag), 'another key');
    const flipped = Buffer.from(key);
    flipped[31]! ^= 0x80;
    refused(() => aesGcmOpen(flipped, sealed.iv, sealed.ciphertext, sealed.tag), 'key with one flipped bit');
    refused(() => aesGcmOpen(key.subarray(0, 16), sealed.iv, sealed.ciphertext, sealed.tag), '16-byte key');
  });

  it('mix and match: the tag of another message under the same key and IV throws TransportDecryptError', () => {
    const iv = randomBytes(IV_BYTES);
    const a = sealRaw(key, iv, PLAINTEXT);
    const b = sealRaw(key, iv, PLAINTEXT.replace('amina', 'omari'));
    refused(() => aesGcmOpen(key, a.iv, a.ciphertext, b.tag), 'tag of another message');
    refused(() => aesGcmOpen(key, a.iv, b.ciphertext, a.tag), 'ciphertext of another message');
  });
});
