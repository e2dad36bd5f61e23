/**
 * Issues and verifies the four token types (SPEC "Access token (JWT)", "Bearer tokens").
 * HS256 only, `kid` in the header, every claim SPEC lists. Verification follows SPEC's order:
 * signature, exp, nbf, iss, aud, then the token type, the denylist, the device fingerprint and,
 * when enabled, the IP address.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify, type JWTHeaderParameters, type JWTPayload } from 'jose';
import type { Config } from '../platform/config.js';
import type { Clock } from '../platform/clock.js';
import { safeEqual } from '../platform/crypto/field-cipher.js';
import type { Denylist } from './denylist.js';
import { TokenErrors } from './errors.js';
import type { Keyring, TokenType } from './keyring.js';

/** Tokens larger than this are refused before any parsing. */
const MAX_TOKEN_LENGTH = 8192;

export interface AccessClaims extends JWTPayload {
  token_type: 'access';
  sub: string;
  user_id: string;
  roles: string[];
  permissions: string[];
  session_id: string;
  device_fingerprint: string;
  ip_address: string;
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
    const now = Math.floor(this.deps.clock.now() / 1000);
    const exp = now + this.ttl(type);
    const jti = randomUUID();
    const { kid, key } = this.deps.keyring.signingKey(type);
    const token = await new SignJWT({ ...claims, token_type: type })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid })
      .setIssuer(this.deps.config.issuer)
      .setAudience(this.deps.config.audience)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(exp)
      .setJti(jti)
      .sign(key);
    return { token, jti, expiresAt: exp * 1000 };
  }

  /** Verifies signature and registered claims; throws a TokenErrors error on any failure. */
  async verify<T extends TokenType>(token: string, type: T): Promise<ClaimsOf<T>> {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw TokenErrors.TOKEN_INVALID();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(
        token,
        async (header: JWTHeaderParameters) => {
          if (typeof header.kid !== 'string' || header.kid.length > 64) throw TokenErrors.TOKEN_INVALID();
          const key = await this.deps.keyring.verificationKey(header.kid, type);
          if (!key) throw TokenErrors.TOKEN_INVALID();
          return key;
        },
        {
          algorithms: ['HS256'],
          issuer: this.deps.config.issuer,
          audience: this.deps.config.audience,
          currentDate: new Date(this.deps.clock.now()),
          clockTolerance: 0,
          requiredClaims: ['exp', 'nbf', 'iat', 'jti'],
          typ: 'JWT',
        },
      ));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw TokenErrors.TOKEN_EXPIRED();
      if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'nbf') throw TokenErrors.TOKEN_NOT_YET_VALID();
      throw TokenErrors.TOKEN_INVALID(undefined, { cause: err });
    }
    if (payload.token_type !== type || typeof payload.jti !== 'string') throw TokenErrors.TOKEN_INVALID();
    if (this.deps.denylist.isDenied(payload.jti)) throw TokenErrors.TOKEN_REVOKED();
    return payload as ClaimsOf<T>;
  }

  /** SPEC Authentication 3, last two steps: device fingerprint, then (optional) IP address. */
  checkBinding(claims: { device_fingerprint?: string; ip_address?: string }, request: BindingCheck): void {
    const bound = claims.device_fingerprint ?? '';
    if (bound !== '' && !safeEqual(bound, request.fingerprint)) throw TokenErrors.FINGERPRINT_MISMATCH();
    if (this.deps.config.bindIp && !safeEqual(claims.ip_address ?? '', request.ipHash())) throw TokenErrors.IP_MISMATCH();
  }
}
