/**
 * The one sign-in pipeline (ARCHITECTURE 4) and its routes: every strategy and channel goes
 * through identify -> access policy -> second factor -> tokens + session -> audit. The access
 * policy and second-factor steps are what earlier modules provide (`accessPolicy`,
 * `secondFactor`); strategies are built here from the same dependencies.
 */
import type { AuditLog } from '../audit/service.js';
import type { PasswordHasher } from '../credentials/hashing.js';
import type { CredentialService } from '../credentials/service.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { RateLimiter } from '../policy/rate-limit.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { Denylist } from '../tokens/denylist.js';
import type { TokenService } from '../tokens/service.js';
import type { UserStore } from '../users/store.js';
import { SignInPipeline, type AccessPolicyCheck, type SecondFactorGate } from './pipeline.js';
import { RefreshService } from './refresh.js';
import { signinRoutes } from './routes.js';
import { LocalStrategy } from './strategies/local.js';

export interface SigninDeps {
  db: Db;
  clock: Clock;
  config: Config;
  keys: KeyMaterial;
  ipHasher: Hasher;
  metrics: Metrics;
  users: UserStore;
  credentials: CredentialService;
  hasher: PasswordHasher;
  tokens: TokenService;
  denylist: Denylist;
  sessions: SessionService;
  guard: Guard;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  audit: AuditLog;
  accessPolicy: AccessPolicyCheck;
  secondFactor: SecondFactorGate;
}

export interface SigninProvides {
  pipeline: SignInPipeline;
  /** The username-or-email and password strategy. */
  local: LocalStrategy;
  refresh: RefreshService;
}

export function signinModule(deps: SigninDeps): Module<SigninProvides> {
  const { db, clock } = deps;
  const pipeline = new SignInPipeline({ ...deps, subCipher: deps.keys.cipher('token-sub') });
  const local = new LocalStrategy(deps);
  const refresh = new RefreshService({ db, clock, tokens: deps.tokens, sessions: deps.sessions, users: deps.users, audit: deps.audit, pipeline });
  return {
    name: 'signin',
    provides: { pipeline, local, refresh },
    routes: signinRoutes({ ...deps, pipeline, local, refresh }),
    jobs: [{ name: 'refresh token clean-up', everyMs: 10 * 60_000, scope: 'one-node', run: () => refresh.purgeExpired() }],
  };
}
