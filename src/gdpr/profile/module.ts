/**
 * Profile rectification (issue 28): the signed-in person reads and corrects their own profile;
 * a new email or phone takes effect only once the code sent to it is entered. Provides the store
 * (`profiles.profileOf(db, userId)`: what an export of the person's data takes) and the service.
 */
import { BackgroundWork } from '../../platform/background.js';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/service.js';
import type { ExternalPasswords } from '../../credentials/external.js';
import type { PasswordHasher } from '../../credentials/hashing.js';
import type { CredentialService } from '../../credentials/service.js';
import type { Mailer } from '../../mail/mailer.js';
import type { ChallengeService } from '../../mfa/challenge.js';
import type { FactorStore } from '../../mfa/factors.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Hasher } from '../../platform/crypto/field-cipher.js';
import type { KeyMaterial } from '../../platform/crypto/key-material.js';
import type { SensitiveColumns } from '../../platform/crypto/sensitive.js';
import type { Db } from '../../platform/db/database.js';
import type { Module } from '../../platform/module.js';
import type { InFlightLimit } from '../../policy/in-flight.js';
import type { LoginAttempts } from '../../policy/lockout.js';
import type { RateLimiter } from '../../policy/rate-limit.js';
import type { Guard } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { ContactCodes } from './codes.js';
import { ContactDelivery } from './delivery.js';
import { profileRoutes } from './routes.js';
import { ProfileService } from './service.js';
import { ProfileStore } from './store.js';

export interface ProfileModuleDeps {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  keys: KeyMaterial;
  ipHasher: Hasher;
  users: UserStore;
  sensitive: SensitiveColumns;
  audit: AuditLog;
  mailer: Mailer;
  hasher: PasswordHasher;
  credentials: CredentialService;
  externalPasswords: ExternalPasswords;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  inFlight: InFlightLimit;
  challenges: ChallengeService;
  factors: FactorStore;
  guard: Guard;
}

export interface ProfileProvides {
  profiles: ProfileStore;
  profile: ProfileService;
}

const CLEAN_UP_MS = 60 * 60_000;

export function profileModule(deps: ProfileModuleDeps): Module<ProfileProvides> {
  const profiles = new ProfileStore(deps);
  const profile = new ProfileService({
    ...deps, store: profiles, codes: new ContactCodes(deps.keys.hasher('ip', 'profile-contact-codes')), delivery: new ContactDelivery(deps), background: new BackgroundWork(),
  });
  return {
    name: 'profile',
    provides: { profiles, profile },
    tags: [{ name: 'Profile', description: 'Your own profile: read it and correct it; a new email or phone takes effect once the code sent to it is entered' }],
    routes: profileRoutes({ ...deps, profile }),
    close: () => profile.settled(),
    jobs: [{ name: 'contact change clean-up', everyMs: CLEAN_UP_MS, scope: 'one-node', run: (stopping) => profile.purgeOld(stopping).then(() => undefined) }],
  };
}
