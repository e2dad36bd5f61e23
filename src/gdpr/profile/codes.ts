/**
 * The codes that confirm a new email or phone: 6 random digits (CSPRNG), stored only as a keyed
 * hash of `code:change id` (a dump of the table cannot test guesses, and one code's hash says
 * nothing of another's), compared in constant time.
 */
import { randomInt, timingSafeEqual } from 'node:crypto';
import type { Hasher } from '../../platform/crypto/field-cipher.js';

export class ContactCodes {
  constructor(private readonly hasher: Hasher) {}

  /** Uniform over 000000-999999. */
  generate(): string {
    return randomInt(0, 1_000_000).toString().padStart(6, '0');
  }

  hash(code: string, id: string): string {
    return this.hasher.hex(`${code}:${id}`);
  }

  /** Whether `code` is the one hashed as `storedHex` for change `id`, in constant time. */
  matches(code: string, id: string, storedHex: string): boolean {
    const given = Buffer.from(this.hash(code, id), 'hex');
    const stored = Buffer.from(storedHex, 'hex');
    return given.length === stored.length && timingSafeEqual(given, stored);
  }
}
