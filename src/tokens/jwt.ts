/**
 * Compact HS256 JWTs (RFC 7519) signed and verified synchronously with node:crypto's HMAC.
 *
 * The validate route runs this on every request of the platform; jose goes through WebCrypto,
 * whose work is queued on the libuv thread pool (shared with bcrypt) and costs about a third of
 * the route's CPU (docs/benchmarks.md). Only what Strongroom issues is accepted: exactly three
 * base64url parts, header `{alg: "HS256", typ: "JWT", kid}` and nothing critical (RFC 7515
 * 4.1.11), a canonical 32-byte signature compared in constant time, then the registered claims
 * in SPEC's order: exp, nbf, iss, aud.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type JwtFailure = 'malformed' | 'unknown_key' | 'bad_signature' | 'expired' | 'not_yet_valid' | 'bad_claims';

export class JwtError extends Error {
  constructor(readonly reason: JwtFailure) {
    super(`jwt ${reason}`);
    this.name = 'JwtError';
  }
}

const B64URL = /^[A-Za-z0-9_-]+$/;
const MAX_TOKEN_LENGTH = 8192;

export function hs256(key: Buffer, signingInput: string): Buffer {
  return createHmac('sha256', key).update(signingInput).digest();
}

function decodeJsonObject(part: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new JwtError('malformed');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new JwtError('malformed');
  return value as Record<string, unknown>;
}

export function signHs256(kid: string, key: Buffer, payload: Record<string, unknown>): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid })).toString('base64url');
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const input = `${header}.${body}`;
  return `${input}.${hs256(key, input).toString('base64url')}`;
}

export interface VerifyOptions {
  /** Seconds since the epoch. */
  now: number;
  issuer: string;
  audience: string[];
  /** The key for a `kid`, or undefined when unknown. */
  keyFor(kid: string): Buffer | undefined;
}

/** Returns the verified payload, or throws a JwtError saying why not. */
export function verifyHs256(token: string, opts: VerifyOptions): Record<string, unknown> {
  return verifyDetailed(token, opts).claims;
}

/** verifyHs256, also naming the key that verified the token. */
function verifyDetailed(token: string, opts: VerifyOptions): { claims: Record<string, unknown>; kid: string; key: Buffer } {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw new JwtError('malformed');
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) throw new JwtError('malformed');
  const [h, p, s] = parts as [string, string, string];

  const header = decodeJsonObject(h);
  if (header.alg !== 'HS256' || header.typ !== 'JWT' || 'crit' in header) throw new JwtError('malformed');
  if (typeof header.kid !== 'string' || header.kid.length === 0 || header.kid.length > 64) throw new JwtError('malformed');
  const key = opts.keyFor(header.kid);
  if (!key) throw new JwtError('unknown_key');

  const given = Buffer.from(s, 'base64url');
  // Only the canonical encoding of exactly 32 bytes: no second spelling of one signature.
  if (given.length !== 32 || given.toString('base64url') !== s) throw new JwtError('bad_signature');
  if (!timingSafeEqual(given, hs256(key, `${h}.${p}`))) throw new JwtError('bad_signature');

  const claims = decodeJsonObject(p);
  const { exp, nbf, iat, iss, aud, jti } = claims;
  if (typeof exp !== 'number' || typeof nbf !== 'number' || typeof iat !== 'number' || typeof jti !== 'string') throw new JwtError('bad_claims');
  if (opts.now >= exp) throw new JwtError('expired'); // RFC 7519 4.1.4
  if (opts.now < nbf) throw new JwtError('not_yet_valid'); // RFC 7519 4.1.5
  if (iss !== opts.issuer) throw new JwtError('bad_claims');
  const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  if (!audiences.some((a) => typeof a === 'string' && opts.audience.includes(a))) throw new JwtError('bad_claims');
  return { claims, kid: header.kid, key };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

interface Remembered {
  kid: string;
  key: Buffer;
  /** The signature part as sent, compared in constant time on a hit. */
  signature: Buffer;
  claims: Readonly<Record<string, unknown>>;
  issuer: string;
  audience: readonly string[];
}

/**
 * verifyHs256 with a bounded memory of tokens it has verified, keyed by the signing input
 * (`header.payload`). Resource servers validate one access token many times, and the HMAC and
 * the two JSON decodes were about a fifth of a validate's CPU (docs/benchmarks.md). A hit
 * still needs: the same key object in the keyring for that kid (a key rotated out or reloaded
 * is a miss, then verified afresh), the same issuer and audiences, the signature text equal in
 * constant time to the one verified, and exp and nbf against now. Only a token that verified
 * is remembered, so nobody can plant an entry; the claims are frozen because every request of
 * a token shares them. What follows verification (token type, denylist, bindings, session)
 * runs on every request as before.
 */
export class VerifiedTokens {
  private readonly seen = new Map<string, Remembered>();

  constructor(private readonly max = 10_000) {}

  verify(token: string, opts: VerifyOptions): Readonly<Record<string, unknown>> {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw new JwtError('malformed');
    const dot = token.lastIndexOf('.');
    const input = dot > 0 ? token.slice(0, dot) : '';
    const hit = input === '' ? undefined : this.seen.get(input);
    const given = Buffer.from(token.slice(dot + 1), 'latin1');
    // Anything but the exact token verified before goes through the full check, and fails as it would have.
    if (hit !== undefined && hit.key === opts.keyFor(hit.kid) && hit.issuer === opts.issuer && hit.audience === opts.audience
      && given.length === hit.signature.length && timingSafeEqual(given, hit.signature)) {
      if (opts.now >= (hit.claims.exp as number)) throw new JwtError('expired');
      if (opts.now < (hit.claims.nbf as number)) throw new JwtError('not_yet_valid');
      return hit.claims;
    }
    const { claims, kid, key } = verifyDetailed(token, opts);
    if (this.seen.size >= this.max) this.seen.delete(this.seen.keys().next().value!); // the oldest goes
    this.seen.set(input, { kid, key, signature: given, claims: deepFreeze(claims), issuer: opts.issuer, audience: opts.audience });
    return claims;
  }
}
