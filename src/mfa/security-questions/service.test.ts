import { describe, expect, it } from 'vitest';
import { pickRandom } from './service.js';

describe('pickRandom', () => {
  it('picks `count` distinct items of the list', () => {
    for (let i = 0; i < 50; i++) {
      const picked = pickRandom([11, 22, 33, 44, 55], 3);
      expect(picked).toHaveLength(3);
      expect(new Set(picked).size).toBe(3);
      for (const p of picked) expect([11, 22, 33, 44, 55]).toContain(p);
    }
  });

  it('never picks more than there are', () => {
    expect(pickRandom([1, 2], 3).sort()).toEqual([1, 2]);
  });

  it('follows the random source (partial Fisher-Yates)', () => {
    const always0 = () => 0;
    expect(pickRandom([1, 2, 3, 4], 2, always0)).toEqual([1, 2]);
    const last = (max: number) => max - 1;
    expect(pickRandom([1, 2, 3, 4], 2, last)).toEqual([4, 1]); // swap 0<->3, then 1<->3
  });

  it('reaches every pair of 5 questions (the CSPRNG default is not stuck)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(pickRandom([1, 2, 3, 4, 5], 2).sort().join(','));
    expect(seen.size).toBe(10);
  });
});
