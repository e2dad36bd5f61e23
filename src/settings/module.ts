/**
 * The operator's settings screens' routes: the directory connection test, the rate limits in
 * force with their routes, and the keys with their ages (src/settings/routes.ts).
 */
import type { AuditLog } from '../audit/service.js';
import type { LdapSettingsStore } from '../ldap/settings.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { TransportKeySource } from '../transport/keys.js';
import type { UserStore } from '../users/store.js';
import { KeyInventory } from './keys.js';
import { RateLimitCatalogue } from './rate-limits.js';
import { settingsRoutes } from './routes.js';

export interface SettingsDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'secrets' | 'tokens' | 'transport' | 'rateLimits' | 'ldap'>;
  keys: KeyMaterial;
  guard: Guard;
  ldapSettings: LdapSettingsStore;
  transportKeys: TransportKeySource;
  audit: AuditLog;
  users: UserStore;
}

export function settingsModule(deps: SettingsDeps): Module {
  const rateLimits = new RateLimitCatalogue(deps.config.rateLimits);
  const inventory = new KeyInventory(deps);
  return {
    name: 'settings',
    provides: {},
    tags: [{ name: 'Settings', description: 'The directory connection test, the rate limits in force and the keys with their ages (permission config.manage)' }],
    setup: (app) => rateLimits.install(app),
    routes: settingsRoutes({ guard: deps.guard, audit: deps.audit, users: deps.users, ldapSettings: deps.ldapSettings, ldapTimeoutMs: deps.config.ldap.timeoutMs, rateLimits, inventory }),
  };
}
