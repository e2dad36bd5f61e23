/**
 * LDAP directory sign-in (issue 11): the configuration (stored singleton over LDAP_*
 * variables), the strategy of the one sign-in pipeline, just-in-time provisioning, and the
 * routes `POST /api/v1/auth/ldap/login` and `POST /api/v1/auth/ldap/config`.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { ExternalPasswords } from '../credentials/external.js';
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
import type { Guard } from '../sessions/guard.js';
import type { SignInPipeline } from '../signin/pipeline.js';
import type { UserStore } from '../users/store.js';
import { groupRoleProblems } from './groups.js';
import { LdapProvisioning } from './provision.js';
import { ldapRoutes } from './routes.js';
import { LdapSettingsStore } from './settings.js';
import { LdapStrategy } from './strategy.js';

export interface LdapDeps {
  db: Db;
  clock: Clock;
  bus: EventBus;
  keys: KeyMaterial;
  config: Pick<Config, 'env' | 'ldap'>;
  log: Logger;
  metrics: Metrics;
  users: UserStore;
  audit: AuditLog;
  attempts: LoginAttempts;
  pipeline: SignInPipeline;
  guard: Guard;
  ipHasher: Hasher;
  externalPasswords: ExternalPasswords;
}

export interface LdapProvides {
  ldapSettings: LdapSettingsStore;
  ldapStrategy: LdapStrategy;
}

export function ldapModule(deps: LdapDeps): Module<LdapProvides> {
  const ldapSettings = new LdapSettingsStore({ db: deps.db, clock: deps.clock, bus: deps.bus, cipher: deps.keys.cipher(ENCRYPTED_COLUMNS.ldapBindPassword.purpose), env: deps.config.ldap.env });
  const provisioning = new LdapProvisioning({ db: deps.db, clock: deps.clock, users: deps.users, audit: deps.audit });
  const ldapStrategy = new LdapStrategy({ settings: ldapSettings, provisioning, attempts: deps.attempts, log: deps.log, metrics: deps.metrics, timeoutMs: deps.config.ldap.timeoutMs, poolSize: deps.config.ldap.poolSize });
  // A directory user's current password is checked in the directory (src/credentials/external.ts).
  deps.externalPasswords.register('LDAP', (link, password) => ldapStrategy.verifyPassword(link.subject, password));
  return {
    name: 'ldap',
    provides: { ldapSettings, ldapStrategy },
    tags: [{ name: 'LDAP', description: 'Sign-in with the bank\'s directory, and its configuration.' }],
    routes: ldapRoutes({ ...deps, ldapSettings, ldapStrategy, production: deps.config.env === 'production' }),
    init: async () => {
      // A CA file that cannot be read stops the start, naming it, rather than failing every sign-in.
      const caFile = deps.config.ldap.env?.caFile;
      if (caFile !== undefined) {
        try {
          readFileSync(caFile, 'utf8');
        } catch (err) {
          throw new Error(`LDAP_CA_FILE ${caFile} cannot be read: ${(err as Error).message}`);
        }
      }
      // A group map written before short names needed a groups base keeps working for full DNs;
      // the rest grants nothing until fixed, and says so.
      const current = await ldapSettings.current();
      if (!current) return;
      const where = current.source === 'database' ? 'the stored LDAP configuration (POST /api/v1/auth/ldap/config)' : 'LDAP_GROUP_ROLES / LDAP_GROUPS_BASE_DN';
      for (const p of groupRoleProblems(current.settings.groupRoles, current.settings.groupsBaseDn)) {
        deps.log.warn({ field: p.field }, `In ${where}, ${p.field}: ${p.message}. Until then those groups grant no role.`);
      }
    },
    close: () => ldapStrategy.close(),
  };
}
