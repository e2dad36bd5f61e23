import { describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors.js';
import { InFlightLimit } from './in-flight.js';

describe('InFlightLimit', () => {
  it('refuses the check past the bound with 429 RATE_LIMITED and Retry-After, entering no key', () => {
    const limit = new InFlightLimit(2);
    const leaves = [limit.enter(['ip:a', 'u:1']), limit.enter(['ip:a', 'u:2'])];
    let refused: unknown;
    try {
      limit.enter(['ip:a', 'u:3']);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED', headers: { 'retry-after': '1' } });
    // u:3 was not entered by the refused check: it still has its whole bound, both at once.
    const held = [limit.enter(['u:3']), limit.enter(['u:3'])];
    expect(() => limit.enter(['u:3'])).toThrow(AppError);
    for (const leave of held) leave();
    for (const leave of leaves) leave();
    expect(limit.size).toBe(0);
  });

  it('leaving twice counts once', () => {
    const limit = new InFlightLimit(1);
    const leave = limit.enter(['ip:a']);
    const other = limit.enter(['ip:b']);
    leave();
    leave();
    limit.enter(['ip:a']); // one slot, free again
    expect(() => limit.enter(['ip:a'])).toThrow(AppError);
    other();
  });
});
