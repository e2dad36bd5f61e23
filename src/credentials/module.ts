/**
 * Credentials: password hashing (bcrypt, off the event loop), the password rules and history,
 * the breach corpus (BREACHED_PASSWORDS_FILTER), the encrypted copy, expiry warnings, and the
 * password routes.
 */
import type { Logger } from 'pino';
import type { Mailer } from '../mail/mailer.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Module } from '../platform/module.js';
import { BreachedPasswordFilter } from './breached/corpus.js';
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
  config: Pick<Config, 'env' | 'passwords' | 'signin' | 'rateLimits' | 'breachedPasswords'>;
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
  /**
   * The breach corpus (BREACHED_PASSWORDS_FILTER), loaded before the first request and reloaded
   * when its file is replaced: the password rules refuse what it holds, and the sign-in risk
   * signal asks it (through the `BreachedPasswords` interface). `isBreached` is false for
   * everything while the setting is unset (`enabled`).
   */
  breachedPasswords: BreachedPasswordFilter;
}

/** How often each node looks at the filter file's identity (a stat: nothing is read unless it changed). */
export const BREACHED_RELOAD_EVERY_MS = 5_000;
export const BREACHED_RELOAD_JOB = 'breached password filter reload';

const HOUR = 3_600_000;

export function credentialsModule(deps: CredentialsDeps): Module<CredentialsProvides> {
  const { db, clock } = deps;
  const hasher = new PasswordHasher(deps.config.passwords.bcryptCost, undefined, deps.config.signin.maxQueued);
  const breachedPasswords = new BreachedPasswordFilter({ path: deps.config.breachedPasswords.filter, log: deps.log });
  const policy = new PasswordPolicy(db, breachedPasswords);
  const externalPasswords = new ExternalPasswords(db);
  const credentials = new CredentialService({ db, hasher, policy, cipher: deps.keys.cipher(ENCRYPTED_COLUMNS.passwordCopy.purpose), clock, users: deps.users, external: externalPasswords });
  const expiryWarnings = new ExpiryWarnings({ db, clock, users: deps.users, mailer: deps.mailer, audit: deps.audit, log: deps.log });
  return {
    name: 'credentials',
    provides: { hasher, policy, credentials, expiryWarnings, externalPasswords, breachedPasswords },
    tags: [{ name: 'Credential management', description: 'Passwords' }],
    routes: credentialRoutes({ ...deps, hasher, credentials }),
    // Every node: each warning is claimed atomically before it is sent, so none goes twice.
    jobs: [
      { name: 'password expiry warnings', everyMs: HOUR, scope: 'every-node', run: () => expiryWarnings.run() },
      // Every node holds its own copy of the filter: each looks at the file (does nothing without the setting).
      { name: BREACHED_RELOAD_JOB, everyMs: BREACHED_RELOAD_EVERY_MS, scope: 'every-node', run: () => breachedPasswords.refresh() },
    ],
    // A corrupt or unreadable filter stops start-up here, naming the setting and the path.
    init: async () => {
      await breachedPasswords.load();
      breachedPasswords.announce(deps.config.env === 'production');
    },
    close: () => policy.close(),
  };
}
