import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Hasher } from '../../platform/crypto/field-cipher.js';
import { ContactCodes } from './codes.js';

describe('contact codes', () => {
  const codes = new ContactCodes(new Hasher(randomBytes(32)));

  it('are 6 digits, and not all the same', () => {
    const many = Array.from({ length: 50 }, () => codes.generate());
    for (const c of many) expect(c).toMatch(/^\d{6}$/);
    expect(new Set(many).size).toBeGreaterThan(40);
  });

  it('match only their own change: the hash binds the change id', () => {
    const stored = codes.hash('123456', 'change-a');
    expect(stored).not.toContain('123456');
    expect(codes.matches('123456', 'change-a', stored)).toBe(true);
    expect(codes.matches('123457', 'change-a', stored)).toBe(false);
    expect(codes.matches('123456', 'change-b', stored)).toBe(false);
  });

  it('a hash under another key does not match (the key is the server\'s secret)', () => {
    const other = new ContactCodes(new Hasher(randomBytes(32)));
    expect(codes.matches('123456', 'change-a', other.hash('123456', 'change-a'))).toBe(false);
  });
});
