/**
 * TOTP core (RFC 6238 over the HOTP of RFC 4226), on `otpauth`: secrets, codes, verification
 * inside a window, and the Key Uri Format of an enrolment. Pure: time is passed in (the
 * service reads it from the injected clock), so tests freeze it.
 *
 * `otpauth`'s `validate` compares each candidate with `crypto.timingSafeEqual` after a length
 * check and returns the offset (`delta`) of the matching step from the current one, or null.
 */
import { randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';

/** SHA1 and SHA256 are offered to users; SHA512 is here for the RFC 6238 Appendix B vectors. */
export type TotpAlgorithm = 'SHA1' | 'SHA256' | 'SHA512';

export interface TotpParams {
  algorithm: TotpAlgorithm;
  digits: number;
  /** Seconds per step (RFC 6238 4.1 "X"). */
  period: number;
}

/** SPEC "Second factors": 30-second step, 6 digits, SHA-1 unless configured otherwise. */
export const TOTP_DEFAULTS: TotpParams = { algorithm: 'SHA1', digits: 6, period: 30 };

/**
 * Secret length per algorithm: the HMAC output size (RFC 4226 4 R6 asks for at least 128 bits
 * and recommends 160; RFC 6238 erratum 2866 seeds SHA-256 with 32 bytes and SHA-512 with 64).
 */
const SECRET_BYTES: Record<TotpAlgorithm, number> = { SHA1: 20, SHA256: 32, SHA512: 64 };

function secretOf(secret: Uint8Array | string): OTPAuth.Secret {
  if (typeof secret === 'string') return OTPAuth.Secret.fromBase32(secret);
  return new OTPAuth.Secret({ buffer: Uint8Array.from(secret).buffer }); // a copy: a Buffer may share a pool
}

/** A fresh secret from the CSPRNG, base32 (RFC 4648, unpadded) as authenticator apps expect. */
export function newSecret(algorithm: TotpAlgorithm): string {
  return toBase32(randomBytes(SECRET_BYTES[algorithm]));
}

export function toBase32(bytes: Uint8Array): string {
  return secretOf(bytes).base32;
}

export function fromBase32(base32: string): Uint8Array {
  return OTPAuth.Secret.fromBase32(base32).bytes;
}

/** The time step (RFC 6238 4.2 "T") that a moment in milliseconds falls in. */
export function stepAt(timeMs: number, period = TOTP_DEFAULTS.period): number {
  return OTPAuth.TOTP.counter({ period, timestamp: timeMs });
}

/** The code for the step of `timeMs` (base32 string or raw bytes as the secret). */
export function generateCode(secret: Uint8Array | string, timeMs: number, params: Partial<TotpParams> = {}): string {
  const p = { ...TOTP_DEFAULTS, ...params };
  return OTPAuth.TOTP.generate({ secret: secretOf(secret), algorithm: p.algorithm, digits: p.digits, period: p.period, timestamp: timeMs });
}

/**
 * The time step `code` belongs to, if it matches one within `window` steps either side of the
 * step of `timeMs` (RFC 6238 5.2); null otherwise. The caller refuses a step already used.
 */
export function verifyCode(secret: Uint8Array | string, code: string, timeMs: number, window: number, params: Partial<TotpParams> = {}): number | null {
  const p = { ...TOTP_DEFAULTS, ...params };
  if (!/^[0-9]+$/.test(code) || code.length !== p.digits) return null;
  const delta = OTPAuth.TOTP.validate({ token: code, secret: secretOf(secret), algorithm: p.algorithm, digits: p.digits, period: p.period, timestamp: timeMs, window });
  return delta === null ? null : stepAt(timeMs, p.period) + delta;
}

/**
 * `otpauth://totp/Issuer:account?secret=..&issuer=..&algorithm=..&digits=..&period=..`
 * (Google Authenticator Key Uri Format; label and issuer percent-encoded).
 */
export function otpauthUri(secret: string, issuer: string, account: string, params: Partial<TotpParams> = {}): string {
  const p = { ...TOTP_DEFAULTS, ...params };
  return new OTPAuth.TOTP({ issuer, label: account, issuerInLabel: true, secret: secretOf(secret), algorithm: p.algorithm, digits: p.digits, period: p.period }).toString();
}
