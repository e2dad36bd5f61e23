import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FieldCipher, FieldCipherError, safeEqual } from './field-cipher.js';

describe('FieldCipher (AES-256-GCM, versioned, context-bound)', () => {
  const master = randomBytes(32);
  const cipher = new FieldCipher([master], 'test');

  it('round-trips and never repeats a ciphertext (random IV)', () => {
    const a = cipher.encrypt('amina.otieno', 'users.username');
    const b = cipher.encrypt('amina.otieno', 'users.username');
    expect(a).not.toBe(b);
    expect(a.startsWith('fe1:')).toBe(true);
    expect(cipher.decrypt(a, 'users.username')).toBe('amina.otieno');
  });

  it('refuses a value moved to another column (context is authenticated data)', () => {
    const v = cipher.encrypt('secret', 'a');
    expect(() => cipher.decrypt(v, 'b')).toThrow(FieldCipherError);
  });

  it('refuses any flipped bit', () => {
    const sealed = Buffer.from(cipher.seal('hello world', 'c'), 'base64url');
    for (let i = 0; i < sealed.length; i++) {
      const t = Buffer.from(sealed);
      t[i]! ^= 1;
      expect(() => cipher.open(t.toString('base64url'), 'c'), `byte ${i}`).toThrow(FieldCipherError);
    }
  });

  it('reads values written under an older key while writing under the new one', () => {
    const newer = randomBytes(32);
    const old = cipher.encrypt('kept', 'c');
    const rotated = new FieldCipher([newer, master], 'test');
    expect(rotated.decrypt(old, 'c')).toBe('kept');
    expect(rotated.keyIdOf(rotated.encrypt('x', 'c'))).toBe(rotated.currentKeyId);
    expect(rotated.keyIdOf(old)).not.toBe(rotated.currentKeyId);
  });

  it('derives distinct keys per purpose from one master key', () => {
    const other = new FieldCipher([master], 'other');
    expect(() => other.decrypt(cipher.encrypt('x', 'c'), 'c')).toThrow(FieldCipherError);
  });

  it('currentKeyPattern matches exactly the values whose key id is the current one', () => {
    // The sixth character of the payload carries the last two bits of the key id and four of
    // the IV: try all 64 values there and compare with what keyIdOf decodes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let k = 0; k < 20; k++) {
      const c = new FieldCipher([randomBytes(32)], 'test');
      const re = new RegExp(c.currentKeyPattern());
      const v = c.encrypt('x', 'c');
      expect(re.test(v)).toBe(true);
      for (let pos = 4; pos < 10; pos++) {
        for (const ch of alphabet) {
          const w = v.slice(0, pos) + ch + v.slice(pos + 1);
          expect(re.test(w), `${w} at ${pos}`).toBe(c.keyIdOf(w) === c.currentKeyId);
        }
      }
      expect(re.test(new FieldCipher([randomBytes(32)], 'test').encrypt('x', 'c'))).toBe(false);
      expect(re.test('plain@bank.example')).toBe(false);
    }
  });

  it('refuses garbage without throwing anything but FieldCipherError', () => {
    for (const v of ['', 'fe1:', 'fe1:!!!', 'fe2:abc', `fe1:${'A'.repeat(10)}`, 'plain']) expect(() => cipher.decrypt(v, 'c')).toThrow(FieldCipherError);
  });
});

describe('safeEqual', () => {
  it('compares by value', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});
