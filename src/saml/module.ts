/**
 * SAML 2.0 sign-in (issue 12). So far the configuration (the stored singleton over
 * SAML_CONFIG_FILE and the SAML_* variables, `POST /api/v1/auth/saml/config`), the service
 * provider's metadata, and starting a sign-in (`POST /api/v1/auth/saml/login`, its AuthnRequests
 * recorded in PostgreSQL). The assertion consumer, exchange and logout routes follow, as a
 * strategy of the one sign-in pipeline.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { samlRoutes } from './routes.js';
import { SamlRequests } from './requests.js';
import { SamlSettingsStore } from './settings.js';

export interface SamlDeps {
  db: Db;
  clock: Clock;
  bus: EventBus;
  config: Pick<Config, 'env' | 'saml'>;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
  log: Logger;
}

export interface SamlProvides {
  samlSettings: SamlSettingsStore;
}

export function samlModule(deps: SamlDeps): Module<SamlProvides> {
  const samlSettings = new SamlSettingsStore({ db: deps.db, clock: deps.clock, bus: deps.bus, env: deps.config.saml.env });
  const samlRequests = new SamlRequests({ db: deps.db, clock: deps.clock });
  return {
    name: 'saml',
    provides: { samlSettings },
    tags: [{ name: 'SAML', description: 'Single sign-on with the bank\'s identity provider (SAML 2.0), and its configuration.' }],
    routes: samlRoutes({ ...deps, samlSettings, samlRequests, production: deps.config.env === 'production' }),
    jobs: [{ name: 'SAML request clean-up', everyMs: 10 * 60_000, scope: 'one-node', run: async () => { await samlRequests.purgeExpired(); } }],
  };
}
