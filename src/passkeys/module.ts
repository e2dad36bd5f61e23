/**
 * Passkeys (issue 30, section 3; docs/passkeys.md): WebAuthn credentials through
 * @simplewebauthn/server, as passwordless sign-in (a strategy of the one sign-in pipeline) and as
 * the `passkey` second factor; registered, renamed and deleted by their owner (step-up), listed
 * and deleted by administrators. Relying party and origins: WEBAUTHN_RP_ID, WEBAUTHN_RP_NAME,
 * WEBAUTHN_ORIGINS.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { PasswordHasher } from '../credentials/hashing.js';
import type { CredentialService } from '../credentials/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { MfaAttempts } from '../mfa/attempts.js';
import type { ChallengeService } from '../mfa/challenge.js';
import type { FactorStore } from '../mfa/factors.js';
import type { OtpService } from '../mfa/otp/service.js';
import { BackgroundWork } from '../platform/background.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { InFlightLimit } from '../policy/in-flight.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { RateLimiter } from '../policy/rate-limit.js';
import type { AlertService } from '../risk/alerts/service.js';
import type { Guard } from '../sessions/guard.js';
import type { SignInPipeline } from '../signin/pipeline.js';
import type { UserStore } from '../users/store.js';
import { passkeyAdminRoutes } from './admin-routes.js';
import { PasskeyNotifier } from './notices.js';
import { passkeyRoutes } from './routes.js';
import { PasskeyService } from './service.js';
import { passkeySigninRoutes } from './signin-routes.js';
import { PasskeyStore } from './store.js';
import { PasskeyStrategy } from './strategy.js';

export interface PasskeysDeps {
  db: Db;
  clock: Clock;
  config: Config;
  audit: AuditLog;
  users: UserStore;
  guard: Guard;
  ipHasher: Hasher;
  factors: FactorStore;
  challenges: ChallengeService;
  mfaAttempts: MfaAttempts;
  pipeline: SignInPipeline;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  inFlight: InFlightLimit;
  credentials: CredentialService;
  hasher: PasswordHasher;
  alerts: AlertService;
  /** The holder's notices when a passkey is added or removed: by email, else SMS. */
  mailer: Mailer;
  otp: OtpService;
  log: Logger;
}

export interface PasskeysProvides {
  passkeys: PasskeyService;
  /** The passwordless sign-in strategy. */
  passkeyStrategy: PasskeyStrategy;
}

/** Expired challenges go this often (a challenge lives 5 minutes). */
const PURGE_EVERY_MS = 10 * 60_000;

export function passkeysModule(deps: PasskeysDeps): Module<PasskeysProvides> {
  const store = new PasskeyStore({ db: deps.db, clock: deps.clock });
  const notices = new PasskeyNotifier({ config: deps.config, mailer: deps.mailer, otp: deps.otp, log: deps.log, background: new BackgroundWork() });
  const passkeys = new PasskeyService({ db: deps.db, clock: deps.clock, config: deps.config, store, factors: deps.factors, audit: deps.audit, alerts: deps.alerts, notices });
  const passkeyStrategy = new PasskeyStrategy({ passkeys, users: deps.users, attempts: deps.attempts });
  const routeDeps = { ...deps, passkeys, passkeyStrategy };
  return {
    name: 'passkeys',
    provides: { passkeys, passkeyStrategy },
    tags: [{ name: 'Passkeys', description: 'WebAuthn passkeys (the device\'s fingerprint, face or screen lock): passwordless sign-in, a second factor and a step-up; registered, renamed and deleted by their owner, listed and deleted by administrators.' }],
    async routes(app) {
      await app.register(passkeyRoutes(routeDeps));
      await app.register(passkeySigninRoutes(routeDeps));
      await app.register(passkeyAdminRoutes(routeDeps));
    },
    jobs: [{ name: 'passkey challenge clean-up', everyMs: PURGE_EVERY_MS, scope: 'one-node', run: () => store.purgeChallenges(new Date(deps.clock.now())).then(() => undefined) }],
    close: () => passkeys.settled(),
  };
}
