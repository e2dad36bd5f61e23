/**
 * SAML 2.0 sign-in (issue 12): the configuration (the stored singleton over SAML_CONFIG_FILE
 * and the SAML_* variables), the service provider's metadata, and the sign-in: AuthnRequests
 * recorded in PostgreSQL, the assertion consumer (src/saml/response.ts, src/saml/consumer.ts)
 * and a strategy of the one sign-in pipeline with just-in-time provisioning.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { EntityStore } from '../entities/store.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { Denylist } from '../tokens/denylist.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { SignInPipeline } from '../signin/pipeline.js';
import type { UserStore } from '../users/store.js';
import { SamlCodes } from './codes.js';
import { samlConfigRoutes } from './config-routes.js';
import { SamlConsumer } from './consumer.js';
import { SamlProvisioning } from './provision.js';
import { SamlAssertionCache } from './replay.js';
import { SamlRequests } from './requests.js';
import { SamlSettingsStore } from './settings.js';
import { samlSignInRoutes, samlStarter, type SamlStart } from './signin-routes.js';
import type { SamlLogout } from './logout.js';
import { samlLogoutRoutes } from './logout-routes.js';
import { SamlSpKeys } from './sp-keys.js';
import { SamlStrategy } from './strategy.js';

export interface SamlDeps {
  db: Db;
  clock: Clock;
  bus: EventBus;
  config: Pick<Config, 'env' | 'saml'>;
  users: UserStore;
  entities: EntityStore;
  audit: AuditLog;
  guard: Guard;
  log: Logger;
  metrics: Metrics;
  attempts: LoginAttempts;
  pipeline: SignInPipeline;
  ipHasher: Hasher;
  keys: KeyMaterial;
  sessions: SessionService;
  denylist: Denylist;
}

export interface SamlProvides {
  samlSettings: SamlSettingsStore;
  samlStrategy: SamlStrategy;
  samlSpKeys: SamlSpKeys;
  /** Starts a SAML sign-in (the unified third-party login uses it). */
  samlStart: SamlStart;
}

export function samlModule(deps: SamlDeps): Module<SamlProvides> {
  const samlSettings = new SamlSettingsStore({ db: deps.db, clock: deps.clock, bus: deps.bus, env: deps.config.saml.env });
  const samlRequests = new SamlRequests({ db: deps.db, clock: deps.clock });
  const replay = new SamlAssertionCache({ db: deps.db, clock: deps.clock });
  const codes = new SamlCodes({ db: deps.db, clock: deps.clock });
  const consumer = new SamlConsumer({ clock: deps.clock, requests: samlRequests, replay, log: deps.log, metrics: deps.metrics });
  const provisioning = new SamlProvisioning({ db: deps.db, clock: deps.clock, users: deps.users, entities: deps.entities, audit: deps.audit });
  const samlStrategy = new SamlStrategy({ provisioning, attempts: deps.attempts });
  const samlSpKeys = new SamlSpKeys({
    db: deps.db, clock: deps.clock, bus: deps.bus, cipher: deps.keys.cipher(ENCRYPTED_COLUMNS.samlSpKey.purpose),
    // The certificate names this service by its entity id's host (what an IdP administrator recognises).
    commonName: async () => {
      const id = (await samlSettings.current())?.settings.spEntityId ?? '';
      return URL.canParse(id) ? new URL(id).host || 'strongroom-saml-sp' : 'strongroom-saml-sp';
    },
  });
  const samlStart = samlStarter(samlSettings, samlRequests);
  // A session opened by a SAML sign-in (directly or after its second factor) remembers its IdP session.
  deps.pipeline.registerOrigin('saml', async (trx, session, user, origin) => {
    if (!origin.issuer || !origin.name_id) return;
    await trx.insertInto('saml_sessions').values({ session_id: session.sessionId, user_id: user.id, issuer: origin.issuer, name_id: origin.name_id, session_index: origin.session_index ?? null, created_at: new Date(deps.clock.now()) }).execute();
  });
  // The SAML library (@node-saml/node-saml, xmldom, xml-crypto) is imported on first use, not at start:
  // a bank without SAML never holds it (docs/benchmarks.md "Idle memory").
  let loadedLogout: Promise<SamlLogout> | undefined;
  const logout = (): Promise<SamlLogout> => (loadedLogout ??= import('./logout.js').then(({ SamlLogout }) => new SamlLogout({ db: deps.db, clock: deps.clock, sessions: deps.sessions, audit: deps.audit, requests: samlRequests, replay, spKeys: samlSpKeys })));
  return {
    name: 'saml',
    provides: { samlSettings, samlStrategy, samlSpKeys, samlStart },
    tags: [{ name: 'SAML', description: 'Single sign-on with the bank\'s identity provider (SAML 2.0), and its configuration.' }],
    routes: async (app) => {
      await app.register(samlConfigRoutes({ ...deps, samlSettings, samlSpKeys, production: deps.config.env === 'production' }));
      await app.register(samlLogoutRoutes({ ...deps, samlSettings, logout }));
      await app.register(samlSignInRoutes({ ...deps, samlSettings, samlStart, consumer, codes, samlStrategy }));
    },
    jobs: [{
      name: 'SAML clean-up', everyMs: 10 * 60_000, scope: 'one-node',
      run: async () => {
        await samlRequests.purgeExpired();
        await replay.purgeExpired();
        await codes.purgeExpired();
      },
    }],
  };
}
