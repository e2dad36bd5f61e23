import { describe, expect, it, vi } from 'vitest';
import { bcryptSafe, PasswordHasher } from './hashing.js';
import { hasKeyboardWalk } from './policy.js';

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher(4);
  const exactly72 = 'Aa1!'.repeat(18);

  it('verifies the right password and refuses a wrong one', async () => {
    const h = await hasher.hash('Vt7#qLm2!xRp9$');
    expect(h).toMatch(/^\$2[aby]\$04\$.{53}$/);
    expect(await hasher.verify('Vt7#qLm2!xRp9$', h)).toBe(true);
    expect(await hasher.verify('Vt7#qLm2!xRp9%', h)).toBe(false);
  });

  it('never lets "first 72 bytes + anything" match: longer inputs are refused outright', async () => {
    const h = await hasher.hash(exactly72);
    expect(await hasher.verify(exactly72, h)).toBe(true);
    expect(await hasher.verify(`${exactly72}X`, h)).toBe(false);
  });

  it('counts bytes, not characters (multi-byte UTF-8)', () => {
    expect(bcryptSafe('é'.repeat(36))).toBe(true); // 72 bytes
    expect(bcryptSafe('é'.repeat(37))).toBe(false);
    expect(bcryptSafe('abc\0def')).toBe(false);
  });

  it('spends a dummy bcrypt comparison when there is no hash to check', async () => {
    const spy = vi.spyOn(hasher, 'dummyVerify');
    expect(await hasher.verify('anything', null)).toBe(false);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('refuses to hash what bcrypt cannot hold whole', async () => {
    await expect(hasher.hash(`${exactly72}X`)).rejects.toThrow();
  });
});

describe('hasKeyboardWalk', () => {
  it.each(['qwerty99!', 'Xasdf#1', '9876zz', 'zxcvB', 'poiu'])('finds %s', (p) => expect(hasKeyboardWalk(p)).toBe(true));
  it.each(['Vt7#qLm2!xRp9$', 'qwe', 'a1s2d3f4'])('does not flag %s', (p) => expect(hasKeyboardWalk(p)).toBe(false));
});
