import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { retryDelaySec } from './delivery.js';
import { signatureHeader, verifySignature } from './webhook.js';

const SECRET = 'b'.repeat(64);
const BODY = '{"type":"security_alert","delivery_id":"d1","alert":{"rule":"impossible_travel"}}';
const T = 1_772_615_100;

describe('the webhook signature (Stripe-style: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">)', () => {
  it('is the HMAC-SHA256 of the timestamp, a full stop and the raw body, as a receiver computes it independently', () => {
    const expected = createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex');
    expect(signatureHeader(SECRET, BODY, T)).toBe(`t=${T},v1=${expected}`);
  });

  it('verifies within the tolerance, either side of the receiver\'s clock', () => {
    const h = signatureHeader(SECRET, BODY, T);
    expect(verifySignature(h, BODY, SECRET, T)).toBe('valid');
    expect(verifySignature(h, BODY, SECRET, T + 300)).toBe('valid');
    expect(verifySignature(h, BODY, SECRET, T - 300)).toBe('valid');
  });

  it('threat: a captured delivery replayed later is refused as stale', () => {
    expect(verifySignature(signatureHeader(SECRET, BODY, T), BODY, SECRET, T + 301)).toBe('stale');
    expect(verifySignature(signatureHeader(SECRET, BODY, T), BODY, SECRET, T - 301)).toBe('stale');
  });

  it('threat: an altered body, another secret or a re-stamped timestamp do not verify', () => {
    const h = signatureHeader(SECRET, BODY, T);
    expect(verifySignature(h, BODY.replace('impossible_travel', 'nothing'), SECRET, T)).toBe('mismatch');
    expect(verifySignature(h, BODY, 'c'.repeat(64), T)).toBe('mismatch');
    expect(verifySignature(h.replace(`t=${T}`, `t=${T + 60}`), BODY, SECRET, T + 60)).toBe('mismatch');
  });

  it('refuses a header without a timestamp or a v1 signature; accepts any one matching v1 among several (a secret rotation)', () => {
    const v1 = signatureHeader(SECRET, BODY, T).split(',')[1]!;
    expect(verifySignature(undefined, BODY, SECRET, T)).toBe('malformed');
    expect(verifySignature(v1, BODY, SECRET, T)).toBe('malformed');
    expect(verifySignature(`t=${T}`, BODY, SECRET, T)).toBe('malformed');
    expect(verifySignature(`t=${T},v1=zz`, BODY, SECRET, T)).toBe('malformed');
    expect(verifySignature(`t=${T},v1=${'0'.repeat(64)},${v1}`, BODY, SECRET, T)).toBe('valid');
  });
});

describe('retries', () => {
  it('back off from 30 s doubling to an hour, ±20%, never before the receiver\'s Retry-After (capped at an hour)', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 8, 20].map((n) => retryDelaySec(n, undefined, mid))).toEqual([30, 60, 120, 240, 3600, 3600]);
    expect(retryDelaySec(1, undefined, () => 0)).toBe(24);
    expect(retryDelaySec(1, undefined, () => 1)).toBe(36);
    expect(retryDelaySec(1, 600, mid)).toBe(600);
    expect(retryDelaySec(1, 999_999, mid)).toBe(3600);
  });
});
