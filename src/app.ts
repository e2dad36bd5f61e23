/**
 * Composition root: the capability modules in dependency order, one line each. Every module is
 * built from what the platform and the modules before it provide (its factory's parameter names
 * exactly what it uses; a missing dependency does not compile). No capability imports this file.
 * To add a capability: write its folder with a `<capability>Module(deps)` factory, add one `.use`
 * line here (docs/decisions.md "Capability modules").
 */
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import { accessModule } from './access/module.js';
import { adminModule } from './admin/module.js';
import { auditModule } from './audit/module.js';
import { auditSummaryModule } from './audit/summary-module.js';
import { consoleModule } from './console/module.js';
import { credentialsModule } from './credentials/module.js';
import { mailModule } from './mail/module.js';
import type { Mailer } from './mail/mailer.js';
import { mfaModule, secondFactorModule } from './mfa/module.js';
import { passkeysModule } from './passkeys/module.js';
import { pushApprovalModule } from './push-approval/module.js';
import type { Clock } from './platform/clock.js';
import type { Config } from './platform/config.js';
import type { Secrets } from './platform/crypto/secrets.js';
import type { DatabaseHandle } from './platform/db/database.js';
import { createHttpApp, type App } from './platform/http/app.js';
import { opsModule } from './platform/http/ops-module.js';
import { Composition } from './platform/module.js';
import { createPlatform } from './platform/platform.js';
import { Scheduler } from './platform/scheduler.js';
import { pinsModule } from './pins/module.js';
import { recoveryModule } from './recovery/module.js';
import { realtimeModule } from './realtime/module.js';
import { profileModule } from './gdpr/profile/module.js';
import { gdprExportModule } from './gdpr/export/module.js';
import { consentModule } from './gdpr/consent/module.js';
import { breachesModule } from './gdpr/breaches/module.js';
import { erasureModule } from './gdpr/erasure/module.js';
import { riskModule } from './risk/module.js';
import { rolesModule } from './roles/module.js';
import { entitiesModule } from './entities/module.js';
import { devicesModule } from './devices/module.js';
import { faqModule } from './faq/module.js';
import { geoModule } from './geo/module.js';
import { notificationsModule } from './notifications/module.js';
import { alertsModule } from './risk/alerts/module.js';
import { riskResponsesModule } from './risk/responses/module.js';
import { openapiOptions } from './openapi.js';
import { ldapModule } from './ldap/module.js';
import { samlModule } from './saml/module.js';
import { thirdPartyModule } from './third-party/module.js';
import { policyModule } from './policy/module.js';
import { sessionsModule } from './sessions/module.js';
import { ownSessionsModule } from './sessions/own-module.js';
import { settingsModule } from './settings/module.js';
import { signinModule } from './signin/module.js';
import { tokensModule } from './tokens/module.js';
import { transportModule } from './transport/module.js';
import { usersModule } from './users/module.js';

export interface StrongroomOptions {
  config: Config;
  secrets: Secrets;
  database: DatabaseHandle;
  clock: Clock;
  log: Logger;
  /** Process metrics (CPU, memory, event loop) on /metrics: the server's, not the tests'. */
  defaultMetrics?: boolean;
  /** A mailer instead of the one SMTP_URL describes (tests). */
  mailer?: Mailer;
}

function compose(opts: StrongroomOptions) {
  return Composition.from({ ...createPlatform(opts), mailerOverride: opts.mailer })
    .use(geoModule)
    .use(auditModule)
    .use(mailModule)
    .use(usersModule)
    .use(tokensModule)
    .use(sessionsModule)
    .use(accessModule)
    .use(transportModule)
    .use(policyModule)
    .use(credentialsModule)
    .use(devicesModule)
    .use(notificationsModule)
    .use(alertsModule)
    .use(secondFactorModule)
    .use(riskModule)
    .use(signinModule)
    .use(ownSessionsModule)
    .use(pinsModule)
    .use(ldapModule)
    .use(entitiesModule)
    .use(samlModule)
    .use(thirdPartyModule)
    .use(mfaModule)
    .use(passkeysModule)
    .use(riskResponsesModule)
    .use(recoveryModule)
    .use(realtimeModule)
    .use(pushApprovalModule)
    .use(profileModule)
    .use(gdprExportModule)
    .use(consentModule)
    .use(breachesModule)
    .use(erasureModule)
    .use(adminModule)
    .use(auditSummaryModule)
    .use(rolesModule)
    .use(settingsModule)
    .use(faqModule)
    .use(consoleModule)
    .use(opsModule);
}

/** Everything the modules provide, by name: for the server, the CLI and tests, never for routes. */
export type Registry = ReturnType<typeof compose>['deps'];

export interface Strongroom {
  registry: Registry;
  /** Every module's background jobs; `start()` it in a server, `runNow(name)` in a test. */
  scheduler: Scheduler;
  /** Loads what each module needs before the first request (keys, caches), in module order. */
  init(): Promise<void>;
  /** The HTTP app with every module's routes. */
  buildApp(): Promise<App>;
  /** The management listener's app (MANAGEMENT_PORT): every module's `managementRoutes`, nothing else. */
  buildManagementApp(): Promise<App>;
  /** Stops the jobs and releases what the modules hold, in reverse order (not the database); sends the last spans. */
  close(): Promise<void>;
}

export function createStrongroom(opts: StrongroomOptions): Strongroom {
  const { deps: registry, modules } = compose(opts);
  const scheduler = new Scheduler({ db: registry.db, kind: registry.database.kind, log: registry.log });
  for (const m of modules) for (const job of m.jobs ?? []) scheduler.add(job);
  return {
    registry,
    scheduler,
    async init() {
      for (const m of modules) await m.init?.();
    },
    async buildApp() {
      const app = createHttpApp({
        config: registry.config, log: registry.log, metrics: registry.metrics, envelope: modules.find((m) => m.envelope)?.envelope,
        requestUser: (request) => request.auth?.claims.user_id, tracer: await registry.tracing.start(),
      });
      await app.register(swagger, openapiOptions(modules.flatMap((m) => m.tags ?? [])));
      for (const m of modules) m.setup?.(app);
      for (const m of modules) if (m.routes) await app.register(m.routes);
      return app;
    },
    async buildManagementApp() {
      const app = createHttpApp({ config: registry.config, log: registry.log, metrics: registry.metrics });
      for (const m of modules) if (m.managementRoutes) await app.register(m.managementRoutes);
      return app;
    },
    async close() {
      await scheduler.stop(); // waits for the runs under way
      for (const m of [...modules].reverse()) await m.close?.();
      await registry.tracing.shutdown(); // the last spans, once the requests that made them are over
    },
  };
}
