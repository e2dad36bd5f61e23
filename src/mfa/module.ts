/**
 * Second factors (SPEC "Second factors", "MFA and 2FA"), as two modules because the sign-in
 * pipeline sits between them:
 *
 * - `secondFactorModule`, before the pipeline: enrolled factors and the gate that decides, after
 *   the password, whether a second factor must follow (`secondFactor`).
 * - `mfaModule`, after it: challenges that finish a sign-in through the pipeline, TOTP with
 *   backup codes, one-time codes by email, SMS and push, security questions, MFA reset, their routes.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { PasswordHasher } from '../credentials/hashing.js';
import type { CredentialService } from '../credentials/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { InFlightLimit } from '../policy/in-flight.js';
import type { RateLimiter } from '../policy/rate-limit.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { AccessPolicyCheck, SecondFactorGate, SignInPipeline } from '../signin/pipeline.js';
import type { Denylist } from '../tokens/denylist.js';
import type { TokenService } from '../tokens/service.js';
import type { UserStore } from '../users/store.js';
import { MfaAttempts } from './attempts.js';
import { ChallengeService, MfaGate, type SecondFactorPolicy } from './challenge.js';
import type { MfaDeps } from './deps.js';
import { FactorStore } from './factors.js';
import { otpRoutes } from './otp/routes.js';
import { OtpService } from './otp/service.js';
import { mfaResetRoutes } from './reset/routes.js';
import { MfaResetService } from './reset/service.js';
import { securityQuestionRoutes } from './security-questions/routes.js';
import { SecurityQuestionService } from './security-questions/service.js';
import type { PushCodeChannel } from './otp/push-channel.js';
import { totpRoutes } from './totp/routes.js';
import { TotpService } from './totp/service.js';

export interface SecondFactorDeps {
  db: Db;
  config: Config;
  mailer: Mailer;
  audit: AuditLog;
  tokens: TokenService;
  /** Which channels and roles the access policy says need a second factor (LoginFactor). */
  accessPolicy: SecondFactorPolicy;
  /** One-time codes by push (the notifications capability). */
  pushCodes: PushCodeChannel;
}

export interface SecondFactorProvides {
  /** Each user's enrolled factors. */
  factors: FactorStore;
  /** The sign-in pipeline's second-factor step. */
  secondFactor: SecondFactorGate;
}

export function secondFactorModule(deps: SecondFactorDeps): Module<SecondFactorProvides> {
  const factors = new FactorStore({ db: deps.db, config: deps.config, mailer: deps.mailer, audit: deps.audit, pushCodes: deps.pushCodes });
  return { name: 'second-factor', provides: { factors, secondFactor: new MfaGate({ config: deps.config, tokens: deps.tokens, factors, audit: deps.audit, policy: deps.accessPolicy }) } };
}

export interface MfaModuleDeps {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  keys: KeyMaterial;
  ipHasher: Hasher;
  users: UserStore;
  tokens: TokenService;
  denylist: Denylist;
  sessions: SessionService;
  guard: Guard;
  audit: AuditLog;
  mailer: Mailer;
  hasher: PasswordHasher;
  credentials: CredentialService;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  inFlight: InFlightLimit;
  factors: FactorStore;
  pipeline: SignInPipeline;
  accessPolicy: AccessPolicyCheck;
  pushCodes: PushCodeChannel;
  metrics: Metrics;
  /** Wakes the pages waiting on a push approval an MFA reset denies. */
  bus: EventBus;
}

export interface MfaProvides {
  /** Attempt counters of the second factors (reserved before each comparison). */
  mfaAttempts: MfaAttempts;
  challenges: ChallengeService;
  totp: TotpService;
  otp: OtpService;
  securityQuestions: SecurityQuestionService;
  mfaReset: MfaResetService;
}

const CLEAN_UP_MS = 10 * 60_000;

export function mfaModule(deps: MfaModuleDeps): Module<MfaProvides> {
  const { db, clock } = deps;
  const mfaAttempts = new MfaAttempts({ db, clock });
  const challenges = new ChallengeService({
    db, clock, tokens: deps.tokens, users: deps.users, pipeline: deps.pipeline, accessPolicy: deps.accessPolicy, loginAttempts: deps.attempts, sessions: deps.sessions,
    audit: deps.audit, guard: deps.guard, ipHasher: deps.ipHasher, denylist: deps.denylist, metrics: deps.metrics,
  });
  const services: MfaDeps = {
    db, clock, config: deps.config, log: deps.log, users: deps.users, tokens: deps.tokens, denylist: deps.denylist, sessions: deps.sessions,
    audit: deps.audit, mailer: deps.mailer, hasher: deps.hasher, factors: deps.factors, attempts: mfaAttempts, challenges,
    secretCipher: deps.keys.cipher(ENCRYPTED_COLUMNS.totpSecret.purpose),
    codeHasher: deps.keys.hasher('ip', 'mfa-codes'), // not the field key: rotating it must not void backup codes
    pushCodes: deps.pushCodes,
  };
  const totp = new TotpService(services);
  const otp = new OtpService(services);
  const securityQuestions = new SecurityQuestionService(services);
  const mfaReset = new MfaResetService({ ...services, bus: deps.bus });
  const routeDeps = { ...deps, challenges, totp, otp, securityQuestions, mfaReset };
  return {
    name: 'mfa',
    provides: { mfaAttempts, challenges, totp, otp, securityQuestions, mfaReset },
    tags: [
      { name: 'MFA and 2FA', description: 'Second factors: TOTP with backup codes, one-time codes by email, SMS and push, MFA reset' },
      { name: 'Security questions', description: 'Knowledge-based answers for recovery and step-up (never the only factor of a sign-in)' },
    ],
    async routes(app) {
      await app.register(totpRoutes(routeDeps));
      await app.register(otpRoutes(routeDeps));
      await app.register(securityQuestionRoutes(routeDeps));
      await app.register(mfaResetRoutes(routeDeps));
    },
    jobs: [
      { name: 'MFA reset expiry', everyMs: CLEAN_UP_MS, scope: 'one-node', run: () => mfaReset.expireDue() },
      { name: 'one-time code clean-up', everyMs: CLEAN_UP_MS, scope: 'one-node', run: () => otp.purgeOld() },
      { name: 'security-question challenge clean-up', everyMs: CLEAN_UP_MS, scope: 'one-node', run: () => securityQuestions.purgeExpiredChallenges() },
    ],
  };
}
