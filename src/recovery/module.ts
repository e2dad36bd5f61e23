/**
 * Self-service account recovery (issue 27): a customer who lost their password or PIN proves who
 * they are with the proofs the bank's matrix accepts and sets a new one; one who lost their
 * second factors or a bound device proves it (a branch's approval among the proofs, four eyes:
 * approvals.ts), waits out a cooling-off while every contact is told and can stop it with one
 * click (cooling-off.ts, cancel.ts), then enrols again or has the new device bound by an
 * administrator (rebinding.ts). Built on the one-time codes, security questions, authenticator
 * and backup codes, PINs, factor store, device bindings, push outbox, SMS gateway, the lockout
 * and the rate limits that exist.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { PasswordHasher } from '../credentials/hashing.js';
import type { CredentialService } from '../credentials/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { OtpService } from '../mfa/otp/service.js';
import type { SecurityQuestionService } from '../mfa/security-questions/service.js';
import type { MfaAttempts } from '../mfa/attempts.js';
import type { TotpService } from '../mfa/totp/service.js';
import type { AccessPolicyEngine } from '../access/engine.js';
import type { PinService } from '../pins/service.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { InFlightLimit } from '../policy/in-flight.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { RateLimiter } from '../policy/rate-limit.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { TokenService } from '../tokens/service.js';
import type { UserStore } from '../users/store.js';
import type { DeviceBindings } from '../access/devices.js';
import type { FactorStore } from '../mfa/factors.js';
import type { PushProvider } from '../notifications/fcm.js';
import type { PushOutbox } from '../notifications/outbox.js';
import { BackgroundWork } from '../platform/background.js';
import { RecoveryNotifier } from './notify.js';
import { ProofChecks } from './proofs.js';
import { recoveryRoutes } from './routes.js';
import { RecoveryService } from './service.js';

export interface RecoveryModuleDeps {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  keys: KeyMaterial;
  ipHasher: Hasher;
  users: UserStore;
  tokens: TokenService;
  sessions: SessionService;
  audit: AuditLog;
  mailer: Mailer;
  hasher: PasswordHasher;
  credentials: CredentialService;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  inFlight: InFlightLimit;
  otp: OtpService;
  securityQuestions: SecurityQuestionService;
  /** The authenticator and backup codes, and the second factors' counters: checked and counted as at sign-in. */
  totp: TotpService;
  mfaAttempts: MfaAttempts;
  /** The channels' failed-attempt limits (a PIN counts as at USSD sign-in). */
  accessPolicy: AccessPolicyEngine;
  pins: PinService;
  guard: Guard;
  factors: FactorStore;
  deviceBindings: DeviceBindings;
  push: PushProvider | undefined;
  pushOutbox: PushOutbox;
  bus: EventBus;
}

export interface RecoveryProvides {
  recovery: RecoveryService;
}

const EXPIRY_MS = 10 * 60_000;
const CLEAN_UP_MS = 60 * 60_000;
const COMPLETION_MS = 5 * 60_000;

export function recoveryModule(deps: RecoveryModuleDeps): Module<RecoveryProvides> {
  const { keys } = deps;
  const proofs = new ProofChecks({ ...deps, seeds: keys.hasher('field', 'recovery-seeds') });
  const background = new BackgroundWork();
  const notifier = new RecoveryNotifier({ ...deps, background });
  const recovery = new RecoveryService({
    ...deps, proofs, notifier, background, cancelTokens: keys.hasher('field', 'recovery-cancel'), handles: keys.hasher('field', 'recovery-handle'), accounts: keys.hasher('field', 'recovery-account'),
  });
  return {
    name: 'recovery',
    provides: { recovery },
    tags: [{ name: 'Account recovery', description: 'Self-service recovery of a lost password, PIN, second factors or bound device: proofs of identity the bank\'s matrix accepts (a branch\'s approval among them), a cooling-off the owner can stop from any notice, the same answers whether an account exists or not' }],
    routes: recoveryRoutes({ recovery, guard: deps.guard, users: deps.users }),
    jobs: [
      { name: 'account recovery expiry', everyMs: EXPIRY_MS, scope: 'one-node', run: () => recovery.expireDue() },
      { name: 'account recovery completion', everyMs: COMPLETION_MS, scope: 'one-node', run: (stopping) => recovery.completeDue(stopping) },
      { name: 'account recovery clean-up', everyMs: CLEAN_UP_MS, scope: 'one-node', run: (stopping) => recovery.purgeEnded(stopping) },
    ],
    close: () => recovery.settled(),
  };
}
