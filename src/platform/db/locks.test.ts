import { describe, expect, it } from 'vitest';
import { ADVISORY_LOCKS } from './locks.js';

describe('advisory lock keys', () => {
  it('are distinct 32-bit integers, so no two features share a lock by accident', () => {
    const keys = Object.values(ADVISORY_LOCKS);
    expect(new Set(keys).size).toBe(keys.length);
    for (const k of keys) expect(Number.isInteger(k) && k > 0 && k <= 2 ** 31 - 1).toBe(true);
  });
});
