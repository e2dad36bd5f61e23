import { describe, expect, it } from 'vitest';
import { purgeInBatches } from './purge.js';

describe('purgeInBatches', () => {
  it('deletes batch after batch until one comes back short, and adds them up', async () => {
    let left = 25;
    const calls: number[] = [];
    const total = await purgeInBatches(async (limit) => {
      calls.push(limit);
      const n = Math.min(limit, left);
      left -= n;
      return n;
    }, undefined, 10);
    expect(total).toBe(25);
    expect(calls).toEqual([10, 10, 10]);
  });

  it('stops after the batch under way when the scheduler stops', async () => {
    const stop = new AbortController();
    let batches = 0;
    const total = await purgeInBatches(async (limit) => {
      batches += 1;
      if (batches === 2) stop.abort();
      return limit;
    }, stop.signal, 5);
    expect([batches, total]).toEqual([2, 10]);
  });
});
