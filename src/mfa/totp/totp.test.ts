import { randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { describe, expect, it, vi } from 'vitest';
import { fromBase32, generateCode, newSecret, otpauthUri, stepAt, toBase32, verifyCode, type TotpAlgorithm } from './totp.js';

/** RFC 6238 Appendix B seeds; SHA-256 and SHA-512 use 32- and 64-byte seeds (RFC erratum 2866). */
const SEEDS: Record<TotpAlgorithm, Buffer> = {
  SHA1: Buffer.from('12345678901234567890', 'ascii'),
  SHA256: Buffer.from('12345678901234567890123456789012', 'ascii'),
  SHA512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234', 'ascii'),
};

/** RFC 6238 Appendix B: [time (s), T (hex), SHA1, SHA256, SHA512], 8 digits, X = 30. */
const VECTORS: [number, string, string, string, string][] = [
  [59, '0000000000000001', '94287082', '46119246', '90693936'],
  [1111111109, '00000000023523EC', '07081804', '68084774', '25091201'],
  [1111111111, '00000000023523ED', '14050471', '67062674', '99943326'],
  [1234567890, '000000000273EF07', '89005924', '91819424', '93441116'],
  [2000000000, '0000000003F940AA', '69279037', '90698825', '38618901'],
  [20000000000, '0000000027BC86AA', '65353130', '77737706', '47863826'],
];

describe('RFC 6238 Appendix B test vectors (all 18 rows)', () => {
  for (const [time, t, ...codes] of VECTORS) {
    (['SHA1', 'SHA256', 'SHA512'] as const).forEach((algorithm, i) => {
      it(`${algorithm} at ${time}s is ${codes[i]}`, () => {
        expect(stepAt(time * 1000)).toBe(parseInt(t, 16));
        expect(generateCode(SEEDS[algorithm], time * 1000, { algorithm, digits: 8 })).toBe(codes[i]);
        // The same vector through the base32 form a user's app would hold, and back through verification.
        expect(generateCode(toBase32(SEEDS[algorithm]), time * 1000, { algorithm, digits: 8 })).toBe(codes[i]);
        expect(verifyCode(SEEDS[algorithm], codes[i]!, time * 1000, 0, { algorithm, digits: 8 })).toBe(parseInt(t, 16));
      });
    });
  }
});

describe('verification window (TOTP_WINDOW=1)', () => {
  const secret = newSecret('SHA1');
  const now = 1_700_000_015_000; // inside a step
  const step = stepAt(now);
  const codeAt = (offset: number) => generateCode(secret, now + offset * 30_000);

  it('accepts the previous, current and next step and returns the matched step', () => {
    expect(verifyCode(secret, codeAt(-1), now, 1)).toBe(step - 1);
    expect(verifyCode(secret, codeAt(0), now, 1)).toBe(step);
    expect(verifyCode(secret, codeAt(1), now, 1)).toBe(step + 1);
  });

  it('refuses codes two steps away on either side', () => {
    expect(verifyCode(secret, codeAt(-2), now, 1)).toBeNull();
    expect(verifyCode(secret, codeAt(2), now, 1)).toBeNull();
  });

  it('with window 0 accepts only the current step', () => {
    expect(verifyCode(secret, codeAt(0), now, 0)).toBe(step);
    expect(verifyCode(secret, codeAt(1), now, 0)).toBeNull();
  });

  it('step edges follow the 30-second boundaries', () => {
    const start = step * 30_000;
    expect(stepAt(start)).toBe(step);
    expect(stepAt(start - 1)).toBe(step - 1);
    expect(stepAt(start + 29_999)).toBe(step);
  });

  it('refuses malformed codes without comparing', () => {
    const good = codeAt(0);
    const fullWidth = good.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d))); // '１２３４５６'
    const malformed = [
      good.slice(0, 5), // too short
      `${good}0`, // too long
      ` ${good}`, `${good} `, // padded
      ` ${good.slice(1)}`, `${good.slice(0, 5)} `, `${good.slice(0, 5)}\n`, // 6 characters, not 6 digits
      fullWidth, // 6 characters, not ASCII digits (and 18 bytes: a byte compare would throw)
      `${good.slice(0, 5)}a`, '',
    ];
    const validate = vi.spyOn(OTPAuth.TOTP, 'validate');
    try {
      for (const code of malformed) expect(verifyCode(secret, code, now, 1), JSON.stringify(code)).toBeNull();
      expect(validate).not.toHaveBeenCalled(); // the guard refuses before otpauth compares anything
      expect(verifyCode(secret, good, now, 1)).toBe(step); // positive control: the spy sees a comparison
      expect(validate).toHaveBeenCalledTimes(1);
    } finally {
      validate.mockRestore();
    }
  });

  it('SHA-256 secrets verify with their own algorithm only', () => {
    const s256 = toBase32(SEEDS.SHA256); // fixed, so the SHA-1 codes of the window are known not to collide by chance
    const code = generateCode(s256, now, { algorithm: 'SHA256' });
    expect(verifyCode(s256, code, now, 1, { algorithm: 'SHA256' })).toBe(step);
    expect(generateCode(s256, now, { algorithm: 'SHA1' })).not.toBe(code);
    for (const offset of [-1, 0, 1]) expect(generateCode(s256, now + offset * 30_000, { algorithm: 'SHA1' })).not.toBe(code);
    expect(verifyCode(s256, code, now, 1, { algorithm: 'SHA1' })).toBeNull();
  });
});

describe('secrets and base32', () => {
  it('round-trips bytes through base32 (RFC 4648 alphabet, unpadded)', () => {
    expect(toBase32(Buffer.from('foobar'))).toBe('MZXW6YTBOI'); // RFC 4648 section 10
    expect(Buffer.from(fromBase32('MZXW6YTBOI')).toString()).toBe('foobar');
    for (let i = 0; i < 20; i++) {
      const bytes = randomBytes(1 + i * 3);
      expect(Buffer.from(fromBase32(toBase32(bytes))).equals(bytes)).toBe(true);
    }
  });

  it('makes 160-bit secrets for SHA-1 and 256-bit ones for SHA-256, each different', () => {
    expect(fromBase32(newSecret('SHA1'))).toHaveLength(20);
    expect(fromBase32(newSecret('SHA256'))).toHaveLength(32);
    expect(newSecret('SHA1')).toMatch(/^[A-Z2-7]{32}$/);
    expect(newSecret('SHA1')).not.toBe(newSecret('SHA1'));
  });
});

describe('otpauth URI (Key Uri Format)', () => {
  it('carries issuer in label and parameter, secret, algorithm, digits and period', () => {
    const uri = new URL(otpauthUri('JBSWY3DPEHPK3PXP', 'Strong Room', 'amina.otieno', { algorithm: 'SHA256' }));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/Strong Room:amina.otieno');
    expect(Object.fromEntries(uri.searchParams)).toEqual({ secret: 'JBSWY3DPEHPK3PXP', issuer: 'Strong Room', algorithm: 'SHA256', digits: '6', period: '30' });
  });
});
