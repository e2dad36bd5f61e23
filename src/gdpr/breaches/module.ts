/**
 * Personal-data breaches (issue 28): the register an operator records a breach in, the affected
 * accounts found from the audit trail, notices to them in their language sent in the background,
 * and the 72-hour deadline to notify the supervisory authority, on `/metrics` and in the list.
 */
import { Counter, Gauge } from 'prom-client';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/service.js';
import type { Mailer } from '../../mail/mailer.js';
import type { OtpService } from '../../mfa/otp/service.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { Module } from '../../platform/module.js';
import type { Metrics } from '../../platform/observability/metrics.js';
import type { Guard } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { breachRoutes } from './routes.js';
import { BreachNoticeSender } from './sender.js';
import { BreachService } from './service.js';
import type { BreachStore } from './store.js';

export interface BreachModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'breaches'>;
  log: Logger;
  audit: AuditLog;
  users: UserStore;
  guard: Guard;
  mailer: Mailer;
  otp: OtpService;
  metrics: Metrics;
}

export interface BreachProvides {
  breaches: BreachService;
  breachNotices: BreachNoticeSender;
}

/** How often each node looks for queued notices. */
const NOTICES_EVERY_MS = 10_000;

/**
 * `strongroom_breach_deadline_seconds`: seconds until the earliest deadline of an open breach
 * (negative once overdue; no sample when none is open); `strongroom_breaches_unreported`: how
 * many are open; `strongroom_breach_notices_total{channel,outcome}`: notices by outcome.
 */
function breachMetrics(metrics: Metrics, store: BreachStore, clock: Clock): Counter<'channel' | 'outcome'> {
  const registers = [metrics.registry];
  new Gauge({
    name: 'strongroom_breach_deadline_seconds', help: 'Seconds until the earliest deadline to notify the supervisory authority of an open personal-data breach (negative: overdue); no sample when none is open', registers,
    async collect() {
      this.reset();
      const { earliest } = await store.unreported();
      if (earliest) this.set(Math.floor((earliest.getTime() - clock.now()) / 1000));
    },
  });
  new Gauge({
    name: 'strongroom_breaches_unreported', help: 'Personal-data breaches open: recorded, neither reported to the supervisory authority nor closed', registers,
    async collect() {
      this.set((await store.unreported()).count);
    },
  });
  return metrics.counter('strongroom_breach_notices_total', 'Breach notices by channel (email, sms) and outcome (sent, failed, no_contact, retry)', ['channel', 'outcome']);
}

export function breachesModule(deps: BreachModuleDeps): Module<BreachProvides> {
  const breaches = new BreachService({ db: deps.db, clock: deps.clock, audit: deps.audit, maxAffected: deps.config.breaches.maxAffected });
  const notices = breachMetrics(deps.metrics, breaches.store, deps.clock);
  const breachNotices = new BreachNoticeSender({
    store: breaches.store, users: deps.users, mailer: deps.mailer, otp: deps.otp, clock: deps.clock, log: deps.log,
    onOutcome: (channel, outcome) => notices.inc({ channel, outcome }),
  });
  return {
    name: 'breaches',
    provides: { breaches, breachNotices },
    tags: [{ name: 'Personal-data breaches', description: 'The breach register (permission `breach.manage`): a breach recorded with what was exposed, the affected accounts found from the audit trail and told in their language, the 72-hour deadline to notify the supervisory authority, and the record the authority asks for.' }],
    routes: breachRoutes({ breaches, guard: deps.guard, users: deps.users }),
    jobs: [{ name: 'breach notices', everyMs: NOTICES_EVERY_MS, scope: 'every-node', run: (stopping) => breachNotices.run(stopping) }],
  };
}
