/**
 * Issues and verifies the four token types (SPEC "Access token (JWT)", "Bearer tokens").
 * HS256 only, `kid` in the header, every claim SPEC lists. Verification follows SPEC's order:
 * signature, exp, nbf, iss, aud, then the token type, the denylist, the device fingerprint and,
 * when enabled, the IP address.
 */
import type { Config } from '../platform/config.js';
import { seconds, type Clock } from '../platform/clock.js';
import { safeEqual } from '../platform/crypto/field-cipher.js';
import { uuidV7 } from '../platform/crypto/uuid-v7.js';
import type { Denylist } from './denylist.js';
import { TokenErrors } from './errors.js';
import { JwtError, signHs256, verifyHs256, VerifiedTokens } from './jwt.js';
import type { Keyring, TokenType } from './keyring.js';

/** Registered claims (RFC 7519 4.1) every token carries. */
interface JWTPayload {
  iss?: string;
  aud?: string | string[];
  iat?: number;
  nbf?: number;
  exp?: number;
  jti?: string;
  [claim: string]: unknown;
}

export interface AccessClaims extends JWTPayload {
  token_type: 'access';
  sub: string;
  user_id: string;
  roles: string[];
  permissions: string[];
  session_id: string;
  device_fingerprint: string;
  ip_address: string;
  /** The channel the session was opened on (web, mobile, ussd, agent); the session's is authoritative. */
  channel?: string;
  jti: string;
  exp: number;
  iat: number;
}

export interface RefreshClaims extends JWTPayload {
  token_type: 'refresh';
  user_id: string;
  session_id: string;
  family_id: string;
  jti: string;
  exp: number;
}

export interface ResetClaims extends JWTPayload {
  token_type: 'reset';
  user_id: string;
  purpose: string;
  /** Issued by a completed account recovery (src/recovery): the password set with it also lifts a "this was not me" lock. */
  recovered?: boolean;
  jti: string;
  exp: number;
}

export interface TwoFactorClaims extends JWTPayload {
  token_type: '2fa';
  user_id: string;
  jti: string;
  exp: number;
  [k: string]: unknown;
}

type ClaimsOf<T extends TokenType> = T extends 'access'
  ? AccessClaims
  : T extends 'refresh'
    ? RefreshClaims
    : T extends 'reset'
      ? ResetClaims
      : TwoFactorClaims;

export interface Issued {
  token: string;
  jti: string;
  expiresAt: number;
}

export interface BindingCheck {
  /** Value of X-Device-Fingerprint on this request ('' when absent). */
  fingerprint: string;
  /** HMAC of this request's client IP; computed only when IP binding is on. */
  ipHash: () => string;
}

export class TokenService {
  constructor(
    private readonly deps: { keyring: Keyring; denylist: Denylist; clock: Clock; config: Config['tokens'] },
  ) {}

  private ttl(type: TokenType): number {
    const c = this.deps.config;
    return { access: c.accessTtlSec, refresh: c.refreshTtlSec, reset: c.resetTtlSec, '2fa': c.twoFactorTtlSec }[type];
  }

  async issue<T extends TokenType>(type: T, claims: Omit<ClaimsOf<T>, 'token_type' | 'jti' | 'exp' | 'iat'>): Promise<Issued> {
    const now = seconds(this.deps.clock);
    const exp = now + this.ttl(type);
    // Time-ordered: the refresh-token and denylist indexes grow at their right edge (the id is inside a signed token; its time is the token's iat).
    const jti = uuidV7(this.deps.clock.now());
    const { kid, key } = this.deps.keyring.signingKey(type);
    const c = this.deps.config;
    const token = signHs256(kid, key, { ...claims, token_type: type, iss: c.issuer, aud: c.audience, iat: now, nbf: now, exp, jti });
    return { token, jti, expiresAt: exp * 1000 };
  }

  /** Verifies signature and registered claims; throws a TokenErrors error on any failure. */
  async verify<T extends TokenType>(token: string, type: T): Promise<ClaimsOf<T>> {
    let payload: Record<string, unknown>;
    try {
      payload = this.check(token, type);
    } catch (err) {
      // An unknown kid may be a key another node has just created.
      if (!(err instanceof JwtError && err.reason === 'unknown_key') || !(await this.deps.keyring.reloadForUnknownKid())) throw toTokenError(err);
      try {
        payload = this.check(token, type);
      } catch (again) {
        throw toTokenError(again);
      }
    }
    if (payload.token_type !== type) throw TokenErrors.TOKEN_INVALID();
    if (this.deps.denylist.isDenied(payload.jti as string)) throw TokenErrors.TOKEN_REVOKED();
    return payload as ClaimsOf<T>;
  }

  /** Access tokens are verified many times each (every validate): remembered once verified. */
  private readonly verifiedAccess = new VerifiedTokens();
  private readonly accessKey = (kid: string): Buffer | undefined => this.deps.keyring.verificationKey(kid, 'access');

  private check(token: string, type: TokenType): Record<string, unknown> {
    const c = this.deps.config;
    if (type === 'access') return this.verifiedAccess.verify(token, { now: seconds(this.deps.clock), issuer: c.issuer, audience: c.audience, keyFor: this.accessKey }) as Record<string, unknown>;
    return verifyHs256(token, {
      now: seconds(this.deps.clock), issuer: c.issuer, audience: c.audience,
      keyFor: (kid) => this.deps.keyring.verificationKey(kid, type),
    });
  }

  /** SPEC Authentication 3, last two steps: device fingerprint, then (optional) IP address. */
  checkBinding(claims: { device_fingerprint?: string; ip_address?: string }, request: BindingCheck): void {
    const bound = claims.device_fingerprint ?? '';
    if (bound !== '' && request.fingerprint === '') throw TokenErrors.FINGERPRINT_REQUIRED();
    if (bound !== '' && !safeEqual(bound, request.fingerprint)) throw TokenErrors.FINGERPRINT_MISMATCH();
    if (this.deps.config.bindIp && !safeEqual(claims.ip_address ?? '', request.ipHash())) throw TokenErrors.IP_MISMATCH();
  }
}

function toTokenError(err: unknown): Error {
  if (err instanceof JwtError) {
    if (err.reason === 'expired') return TokenErrors.TOKEN_EXPIRED();
    if (err.reason === 'not_yet_valid') return TokenErrors.TOKEN_NOT_YET_VALID();
    return TokenErrors.TOKEN_INVALID({}, { cause: err });
  }
  return TokenErrors.TOKEN_INVALID({}, { cause: err });
}
