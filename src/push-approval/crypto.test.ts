import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { answerMessage, drawNumbers, enrolMessage, parsePublicKey, verifySignature } from './crypto.js';

describe('drawNumbers', () => {
  it('gives a two-digit number and three distinct two-digit choices that include it', () => {
    for (let i = 0; i < 500; i++) {
      const { number, choices } = drawNumbers();
      expect(number).toBeGreaterThanOrEqual(10);
      expect(number).toBeLessThanOrEqual(99);
      expect(choices).toHaveLength(3);
      expect(new Set(choices).size).toBe(3);
      expect(choices).toContain(number);
      for (const c of choices) expect(c >= 10 && c <= 99 && Number.isInteger(c)).toBe(true);
    }
  });

  it('draws again when a random number repeats, and shuffles (the number is not always first)', () => {
    const seq = [42, 42, 42, 17, 88, 0, 0]; // number 42, two repeats, then 17 and 88; shuffle picks: j=0 then j=0
    let i = 0;
    const { number, choices } = drawNumbers(() => seq[i++]!);
    expect(number).toBe(42);
    expect([...choices].sort()).toEqual([17, 42, 88]);
    expect(choices).toEqual([17, 88, 42]); // [42,17,88] -> swap(2,0): [88,17,42] -> swap(1,0): [17,88,42]
    const firsts = new Set(Array.from({ length: 200 }, () => { const d = drawNumbers(); return d.choices.indexOf(d.number); }));
    expect(firsts.size).toBe(3);
  });
});

describe('signatures', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
  const signed = (m: string, key = privateKey) => sign('sha256', Buffer.from(m), { key, dsaEncoding: 'der' }).toString('base64url');

  it('verifies a DER ECDSA P-256 SHA-256 signature of the exact message', () => {
    const m = answerMessage('u-1', '3f6c1a2b-8d4e-4f5a-9b6c-7d8e9f0a1b2c', 'approve', 47);
    expect(m).toBe('strongroom-push-approval:v1|u-1|3f6c1a2b-8d4e-4f5a-9b6c-7d8e9f0a1b2c|approve|47');
    expect(answerMessage('u-1', 'x', 'deny', undefined)).toBe('strongroom-push-approval:v1|u-1|x|deny|');
    expect(answerMessage('u-1', 'x', 'deny_fraud', undefined)).toBe('strongroom-push-approval:v1|u-1|x|deny_fraud|');
    expect(enrolMessage('u', 'c')).toBe('strongroom-push-approval-enrol|u|c');
    expect(verifySignature(spki, m, signed(m))).toBe(true);
    expect(verifySignature(spki, m.replace('|47', '|48'), signed(m))).toBe(false);
    // threat: a signed plain denial cannot be replayed as a fraud report (nor the reverse), nor for another user.
    const deny = answerMessage('u-1', 'x', 'deny', undefined);
    expect(verifySignature(spki, answerMessage('u-1', 'x', 'deny_fraud', undefined), signed(deny))).toBe(false);
    expect(verifySignature(spki, answerMessage('u-2', 'x', 'deny', undefined), signed(deny))).toBe(false);
  });

  it('refuses another key, a P1363 signature, garbage, and keys that are not P-256', () => {
    const m = enrolMessage('user', 'challenge');
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(verifySignature(spki, m, signed(m, other))).toBe(false);
    expect(verifySignature(spki, m, sign('sha256', Buffer.from(m), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url'))).toBe(false);
    expect(verifySignature(spki, m, 'not-a-signature')).toBe(false);
    expect(verifySignature('AAAA', m, signed(m))).toBe(false);
    expect(parsePublicKey(spki)).not.toBeNull();
    expect(parsePublicKey(generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'))).toBeNull();
    expect(parsePublicKey(generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'))).toBeNull();
  });
});
