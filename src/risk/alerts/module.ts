/**
 * Security alerts (issue 29, section 3): alerts as records, raised by any capability with
 * `alerts.raise(db, input)`, delivered to the bank's security team by email and a signed webhook
 * through an outbox, counted on /metrics, and administered at /api/v1/admin/alerts.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/service.js';
import type { Mailer } from '../../mail/mailer.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { Module } from '../../platform/module.js';
import type { Metrics } from '../../platform/observability/metrics.js';
import type { Guard } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { AlertDelivery, DELIVERY_CHANNELS, DELIVERY_OUTCOMES } from './delivery.js';
import { alertRoutes } from './routes.js';
import { AlertService } from './service.js';

export interface AlertsDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'alerts' | 'retention' | 'env'>;
  log: Logger;
  audit: AuditLog;
  users: UserStore;
  guard: Guard;
  mailer: Mailer;
  metrics: Metrics;
}

export interface AlertsProvides {
  /** Raise an alert (`raise(db, input)`), list and administer them. */
  alerts: AlertService;
  /** The delivery worker (the `security alert delivery` job runs it). */
  alertDelivery: AlertDelivery;
}

/** How often each node looks for due deliveries. */
const DELIVERY_EVERY_MS = 5_000;

export function alertsModule(deps: AlertsDeps): Module<AlertsProvides> {
  const config = deps.config.alerts;
  const raised = deps.metrics.counter('strongroom_security_alerts_total', 'Security alerts recorded, by rule and severity (one per event, whichever node saw it)', ['rule', 'severity']);
  const delivered = deps.metrics.counter('strongroom_security_alert_deliveries_total', 'Deliveries of security alerts to the security team, by channel (email, webhook) and outcome (sent, retry, failed)', ['channel', 'outcome']);
  // Every series exists from the start, so that rate() and the alert on failures see a 0 before the first one.
  for (const channel of DELIVERY_CHANNELS) for (const outcome of DELIVERY_OUTCOMES) delivered.inc({ channel, outcome }, 0);
  const alerts = new AlertService({ db: deps.db, clock: deps.clock, audit: deps.audit, config, onRaised: (rule, severity) => raised.inc({ rule, severity }) });
  deps.metrics.gauge('strongroom_security_alert_deliveries_pending', 'Deliveries of security alerts waiting to be sent (queued, or due again after a failure)', () => alerts.store.pending());
  const alertDelivery = new AlertDelivery({
    store: alerts.store, config, mailer: deps.mailer, clock: deps.clock, log: deps.log,
    onOutcome: (channel, outcome) => delivered.inc({ channel, outcome }),
  });
  return {
    name: 'alerts',
    provides: { alerts, alertDelivery },
    tags: [{ name: 'Security alerts', description: 'Security alerts as records (permission `alerts.manage`): each raised once per event, sent to the security team by email and a signed webhook, listed with filters, shown with the audit trail around it, acknowledged and resolved.' }],
    init: async () => {
      const to = [...(config.emails.length > 0 ? [`email to ${config.emails.length} address(es)`] : []), ...(config.webhook ? [`webhook to ${new URL(config.webhook.url).host}`] : [])];
      if (to.length > 0) deps.log.info(`security alerts (${config.minSeverity} and above) go to the security team by ${to.join(' and ')}`);
      // Production without either: alerts are recorded and counted, and nobody is told.
      else deps.log[deps.config.env === 'production' ? 'warn' : 'info']('security alerts are recorded but sent to nobody: set SECURITY_ALERT_EMAIL and/or SECURITY_WEBHOOK_URL with SECURITY_WEBHOOK_SECRET');
    },
    routes: alertRoutes({ alerts, guard: deps.guard, users: deps.users }),
    jobs: [
      { name: 'security alert delivery', everyMs: DELIVERY_EVERY_MS, scope: 'every-node', run: (stopping) => alertDelivery.run(stopping) },
      {
        name: 'security alert clean-up', everyMs: 60 * 60_000, scope: 'one-node',
        // Resolved alerts go when the audit trail they point into does (AUDIT_RETENTION_MONTHS).
        run: (stopping) => alerts.store.purgeResolved(new Date(deps.clock.now() - deps.config.retention.auditMonths * 31 * 86_400_000), stopping),
      },
    ],
  };
}
