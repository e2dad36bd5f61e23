import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BlindIndex } from './blind-index.js';

describe('BlindIndex (HMAC-SHA256 of the normalised value, key id in front)', () => {
  const a = randomBytes(32);
  const b = randomBytes(32);
  const index = new BlindIndex([a]);

  it('is deterministic and ignores case and surrounding blanks, nothing else', () => {
    const v = index.of('Amina@Bank.example');
    expect(v).toMatch(/^[0-9a-f]{8}:[0-9a-f]{64}$/);
    expect(index.of('  amina@bank.EXAMPLE\t')).toBe(v);
    expect(index.of('amina@bank.example.')).not.toBe(v);
    expect(index.of('amina @bank.example')).not.toBe(v);
  });

  it('names the key that made it, and a new key makes another index', () => {
    const rotated = new BlindIndex([b, a]);
    expect(index.keyIdOf(index.of('x@y.z'))).toBe(index.currentKeyId);
    expect(rotated.currentKeyId).not.toBe(index.currentKeyId);
    expect(rotated.of('x@y.z')).not.toBe(index.of('x@y.z'));
    expect(rotated.keyIdOf(rotated.of('x@y.z'))).toBe(rotated.currentKeyId);
  });

  it('during a rotation, lookups match an index made under the current key or a previous one', () => {
    const rotated = new BlindIndex([b, a]);
    const candidates = rotated.candidates('X@Y.z');
    expect(candidates).toEqual([rotated.of('x@y.z'), index.of('x@y.z')]);
    expect(new BlindIndex([b]).candidates('x@y.z')).toEqual([rotated.of('x@y.z')]);
  });

  it('depends on the purpose and is not a plain hash of the value', () => {
    const other = new BlindIndex([a], 'other-purpose');
    expect(other.of('x@y.z').split(':')[1]).not.toBe(index.of('x@y.z').split(':')[1]);
    expect(new BlindIndex([randomBytes(32)]).of('x@y.z')).not.toBe(index.of('x@y.z'));
  });

  it('reads back no key id from anything but its own format', () => {
    for (const v of ['', 'abc', `${'0'.repeat(8)}:${'g'.repeat(64)}`, `x${index.of('a')}`]) expect(index.keyIdOf(v)).toBeUndefined();
  });

  it('lists a repeated master key once', () => {
    expect(new BlindIndex([a, a]).candidates('x')).toHaveLength(1);
  });
});
