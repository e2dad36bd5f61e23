import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FieldCipher, FieldCipherError } from './field-cipher.js';

/**
 * Each check `FieldCipher.open` makes, pinned on its own (issue 9 section 10). The sealed form is
 * base64url(key id (4) || iv (12) || ciphertext || tag (16)), with the context as AAD.
 */
const ID = 4;
const IV = 12;
const TAG = 16;
const master = randomBytes(32);
const other = randomBytes(32);
const cipher = new FieldCipher([master], 'test');
const PLAINTEXT = 'JBSWY3DPEHPK3PXP-totp-secret';
const CONTEXT = 'mfa_factors.secret';
const sealed = cipher.seal(PLAINTEXT, CONTEXT);
const raw = (): Buffer => Buffer.from(sealed, 'base64url');
const enc = (b: Buffer): string => b.toString('base64url');

function flipBit(at: number, bit: number): string {
  const b = raw();
  b[at]! ^= 1 << bit;
  return enc(b);
}

function refused(open: () => unknown, label: string): void {
  expect(open, label).toThrow(FieldCipherError);
  expect(open, label).toThrow('A stored value could not be decrypted.');
}

describe('FieldCipher.open', () => {
  const tagStart = raw().length - TAG;

  it('control: the untouched value opens, by seal/open and by encrypt/decrypt', () => {
    expect(cipher.open(sealed, CONTEXT)).toBe(PLAINTEXT);
    expect(cipher.decrypt(cipher.encrypt(PLAINTEXT, CONTEXT), CONTEXT)).toBe(PLAINTEXT);
    expect(new FieldCipher([other, master], 'test').open(sealed, CONTEXT)).toBe(PLAINTEXT); // an older key still reads
  });

  it('forgery: any single flipped bit in the tag throws FieldCipherError', () => {
    for (let i = tagStart; i < tagStart + TAG; i++) for (let bit = 0; bit < 8; bit++) refused(() => cipher.open(flipBit(i, bit), CONTEXT), `tag byte ${i - tagStart} bit ${bit}`);
  });

  it('tag truncation: the value cut by 1 to 16 bytes (and below the minimum length) throws FieldCipherError', () => {
    const b = raw();
    for (let cut = 1; cut <= TAG; cut++) refused(() => cipher.open(enc(b.subarray(0, b.length - cut)), CONTEXT), `cut by ${cut}`);
    // Only the key id, IV and tag left (no ciphertext), and less than that.
    refused(() => cipher.open(enc(Buffer.concat([b.subarray(0, ID + IV), b.subarray(tagStart)])), CONTEXT), 'ciphertext removed');
    refused(() => cipher.open(enc(b.subarray(0, ID + IV + TAG - 1)), CONTEXT), 'below the minimum length');
    refused(() => cipher.open('', CONTEXT), 'empty');
  });

  it('tampering: any single flipped bit in the ciphertext throws FieldCipherError', () => {
    for (let i = ID + IV; i < tagStart; i++) for (let bit = 0; bit < 8; bit++) refused(() => cipher.open(flipBit(i, bit), CONTEXT), `ciphertext byte ${i} bit ${bit}`);
  });

  it('wrong IV: any single flipped bit in the IV throws FieldCipherError', () => {
    for (let i = ID; i < ID + IV; i++) for (let bit = 0; bit < 8; bit++) refused(() => cipher.open(flipBit(i, bit), CONTEXT), `iv byte ${i - ID} bit ${bit}`);
  });

  it('wrong key: a value relabelled with another known key\'s id, or an unknown key id, or read under another purpose, throws FieldCipherError', () => {
    const both = new FieldCipher([other, master], 'test');
    const otherId = Buffer.from(both.currentKeyId, 'hex');
    expect(both.currentKeyId).not.toBe(cipher.currentKeyId);
    const relabelled = raw();
    otherId.copy(relabelled, 0);
    refused(() => both.open(enc(relabelled), CONTEXT), 'relabelled with the other key id');
    for (let bit = 0; bit < ID * 8; bit++) refused(() => cipher.open(flipBit(bit >> 3, bit & 7), CONTEXT), `key id bit ${bit}`);
    refused(() => new FieldCipher([other], 'test').open(sealed, CONTEXT), 'another master key');
    refused(() => new FieldCipher([master], 'other-purpose').open(sealed, CONTEXT), 'another purpose');
  });

  it('wrong context (AAD): a value moved to another column, or read without its context, throws FieldCipherError', () => {
    for (const ctx of ['users.username', '', `${CONTEXT} `, CONTEXT.toUpperCase(), `${CONTEXT}\u0000`]) refused(() => cipher.open(sealed, ctx), `context ${JSON.stringify(ctx)}`);
    refused(() => cipher.decrypt(cipher.encrypt(PLAINTEXT, CONTEXT), 'users.email'), 'decrypt under another context');
  });
});
