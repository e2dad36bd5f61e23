import { timingSafeEqual } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UssdGateways } from './gateway.js';

const A = 'a'.repeat(40);
const B = `b-${'0123456789abcdef'.repeat(3)}`;

describe('USSD gateway keys', () => {
  const gateways = new UssdGateways([{ name: 'ussd-a', key: A }, { name: 'ussd-b', key: B }]);

  it('names the gateway whose key is presented', () => {
    expect(gateways.identify(A)).toBe('ussd-a');
    expect(gateways.identify(B)).toBe('ussd-b');
  });

  it('refuses a missing, empty, wrong, truncated or extended key', () => {
    for (const k of [undefined, '', 'nope', A.slice(0, -1), `${A}a`, A.toUpperCase(), ` ${A}`]) expect(gateways.identify(k), String(k)).toBeNull();
  });

  it('refuses every key when no gateway is configured', () => {
    const none = new UssdGateways([]);
    expect(none.identify(A)).toBeNull();
    expect(none.identify('')).toBeNull();
    expect(none.identify(undefined)).toBeNull();
  });

  it('compares against every key in constant time, whichever matches', () => {
    const calls: Array<[number, number]> = [];
    const counted = (a: Buffer, b: Buffer): boolean => {
      calls.push([a.byteLength, b.byteLength]);
      return timingSafeEqual(a, b);
    };
    const three = new UssdGateways([{ name: 'x', key: A }, { name: 'y', key: B }, { name: 'z', key: 'z'.repeat(32) }], counted);
    for (const [presented, name] of [[A, 'x'], [B, 'y'], ['wrong', null], [undefined, null]] as const) {
      calls.length = 0;
      expect(three.identify(presented)).toBe(name);
      expect(calls, String(presented)).toEqual([[32, 32], [32, 32], [32, 32]]); // every key, SHA-256 on both sides
    }
  });
});
