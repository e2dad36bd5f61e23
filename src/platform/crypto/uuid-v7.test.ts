import { describe, expect, it } from 'vitest';
import { uuidV7 } from './uuid-v7.js';

describe('uuidV7', () => {
  it('lays out RFC 9562 version 7: the millisecond time in the first 48 bits, version 7, variant 10', () => {
    // RFC 9562 appendix A.6: 2022-02-22T19:22:22Z (0x017F22E279B0) begins 017f22e2-79b0-7...
    const id = uuidV7(Date.parse('2022-02-22T14:22:22-05:00'));
    expect(id).toMatch(/^017f22e2-79b0-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('sorts by time across milliseconds and differs within one', () => {
    const ids = [uuidV7(1_000), uuidV7(1_001), uuidV7(2 ** 40)];
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 1000 }, () => uuidV7(5)));
    expect(same.size).toBe(1000);
  });
});
