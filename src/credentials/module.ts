/**
 * Credentials: password hashing (bcrypt, off the event loop), the password rules and history,
 * the encrypted copy, expiry warnings, and the password routes.
 */
import type { Logger } from 'pino';
import type { Mailer } from '../mail/mailer.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Module } from '../platform/module.js';
import { ExpiryWarnings } from './expiry-warnings.js';
import { ExternalPasswords } from './external.js';
import { PasswordHasher } from './hashing.js';
import { PasswordPolicy } from './policy.js';
import { credentialRoutes, type CredentialRouteDeps } from './routes.js';
import { CredentialService } from './service.js';

/** What the routes use, less what this module builds, and what its services need besides. */
export type CredentialsDeps = Omit<CredentialRouteDeps, keyof CredentialsProvides | 'config'> & {
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'passwords' | 'signin' | 'rateLimits'>;
  keys: KeyMaterial;
  mailer: Mailer;
};

export interface CredentialsProvides {
  /** bcrypt at BCRYPT_COST, off the event loop. */
  hasher: PasswordHasher;
  /** The password rules per account class (password_restrictions). */
  policy: PasswordPolicy;
  credentials: CredentialService;
  expiryWarnings: ExpiryWarnings;
  /** Where a module that keeps passwords elsewhere (LDAP) registers its check. */
  externalPasswords: ExternalPasswords;
}

const HOUR = 3_600_000;

export function credentialsModule(deps: CredentialsDeps): Module<CredentialsProvides> {
  const { db, clock } = deps;
  const hasher = new PasswordHasher(deps.config.passwords.bcryptCost, undefined, deps.config.signin.maxQueued);
  const policy = new PasswordPolicy(db);
  const externalPasswords = new ExternalPasswords(db);
  const credentials = new CredentialService({ db, hasher, policy, cipher: deps.keys.cipher(ENCRYPTED_COLUMNS.passwordCopy.purpose), clock, users: deps.users, external: externalPasswords });
  const expiryWarnings = new ExpiryWarnings({ db, clock, users: deps.users, mailer: deps.mailer, audit: deps.audit, log: deps.log });
  return {
    name: 'credentials',
    provides: { hasher, policy, credentials, expiryWarnings, externalPasswords },
    tags: [{ name: 'Credential management', description: 'Passwords' }],
    routes: credentialRoutes({ ...deps, hasher, credentials }),
    // Every node: each warning is claimed atomically before it is sent, so none goes twice.
    jobs: [{ name: 'password expiry warnings', everyMs: HOUR, scope: 'every-node', run: () => expiryWarnings.run() }],
    close: () => policy.close(),
  };
}
