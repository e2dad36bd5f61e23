/**
 * Credentials: password hashing (bcrypt, off the event loop), the password rules and history,
 * the encrypted copy, expiry warnings, and the password routes.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { RateLimiter } from '../policy/rate-limit.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { Denylist } from '../tokens/denylist.js';
import type { TokenService } from '../tokens/service.js';
import type { UserStore } from '../users/store.js';
import { ExpiryWarnings } from './expiry-warnings.js';
import { PasswordHasher } from './hashing.js';
import { PasswordPolicy } from './policy.js';
import { credentialRoutes } from './routes.js';
import { CredentialService } from './service.js';

export interface CredentialsDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'passwords' | 'signin'>;
  keys: KeyMaterial;
  ipHasher: Hasher;
  users: UserStore;
  audit: AuditLog;
  mailer: Mailer;
  tokens: TokenService;
  denylist: Denylist;
  sessions: SessionService;
  guard: Guard;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
}

export interface CredentialsProvides {
  /** bcrypt at BCRYPT_COST, off the event loop. */
  hasher: PasswordHasher;
  /** The password rules per account class (password_restrictions). */
  policy: PasswordPolicy;
  credentials: CredentialService;
  expiryWarnings: ExpiryWarnings;
}

const HOUR = 3_600_000;

export function credentialsModule(deps: CredentialsDeps): Module<CredentialsProvides> {
  const { db, clock } = deps;
  const hasher = new PasswordHasher(deps.config.passwords.bcryptCost);
  const policy = new PasswordPolicy(db);
  const credentials = new CredentialService({ db, hasher, policy, cipher: deps.keys.cipher(ENCRYPTED_COLUMNS.passwordCopy.purpose), clock, users: deps.users });
  const expiryWarnings = new ExpiryWarnings({ db, clock, users: deps.users, mailer: deps.mailer, audit: deps.audit, log: deps.log });
  return {
    name: 'credentials',
    provides: { hasher, policy, credentials, expiryWarnings },
    tags: [{ name: 'Credential management', description: 'Passwords' }],
    routes: credentialRoutes({ ...deps, hasher, credentials }),
    // Every node: each warning is claimed atomically before it is sent, so none goes twice.
    jobs: [{ name: 'password expiry warnings', everyMs: HOUR, scope: 'every-node', run: () => expiryWarnings.run() }],
    close: () => policy.close(),
  };
}
