/**
 * Push notifications: the provider client (Firebase Cloud Messaging HTTP v1) when
 * PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH are set, the development outbox (the log) when they
 * are not and PUSH_DEV_OUTBOX is on (outside production), the queue and its worker, templates.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { DeviceTokenStore } from '../devices/store.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { DevPushOutbox } from './dev-outbox.js';
import { FcmClient, type PushProvider } from './fcm.js';
import { PushOutbox } from './outbox.js';
import { PushCodes } from './push-codes.js';
import { notificationRoutes } from './routes.js';
import { templateRoutes } from './templates/routes.js';
import { TemplateService } from './templates/service.js';

export interface NotificationsDeps {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  deviceTokens: DeviceTokenStore;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
  metrics: Metrics;
}

export interface NotificationsProvides {
  /** Undefined when push is not configured (and the development outbox is off). */
  push: PushProvider | undefined;
  /** Where notifications are queued (in the caller's transaction) and delivered from. */
  pushOutbox: PushOutbox;
  /** Push templates in the users' languages. */
  templates: TemplateService;
  /** One-time codes by push, for the MFA work. */
  pushCodes: PushCodes;
}

/** How often each node's worker looks for due messages. */
const DELIVERY_EVERY_MS = 1000;

export function notificationsModule(deps: NotificationsDeps): Module<NotificationsProvides> {
  const { projectId, credentials, apiUrl, timeoutMs, devOutbox } = deps.config.push;
  const push = projectId !== undefined && credentials !== undefined
    ? new FcmClient({ projectId, credentials, apiUrl, timeoutMs, clock: deps.clock, log: deps.log })
    : devOutbox ? new DevPushOutbox(deps.log) : undefined;
  const sent = deps.metrics.counter('strongroom_push_sent_total', 'Push messages the provider accepted');
  const failed = deps.metrics.counter('strongroom_push_failed_total', 'Push messages given up on, by reason', ['reason']);
  const retried = deps.metrics.counter('strongroom_push_retried_total', 'Push sends to be tried again, by reason', ['reason']);
  const latency = deps.metrics.histogram('strongroom_push_delivery_seconds', 'Push messages from queued to accepted by the provider', [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900]);
  const pushOutbox = new PushOutbox({
    db: deps.db, clock: deps.clock, log: deps.log, audit: deps.audit, deviceTokens: deps.deviceTokens, push,
    onResult: (r) => {
      if (r.outcome === 'sent') {
        sent.inc();
        latency.observe((r.latencyMs ?? 0) / 1000);
      } else (r.outcome === 'retry' ? retried : failed).inc({ reason: r.reason ?? 'unknown' });
    },
  });
  deps.metrics.gauge('strongroom_push_queue_depth', 'Push messages pending delivery', () => pushOutbox.depth());
  const templates = new TemplateService({ db: deps.db, clock: deps.clock, audit: deps.audit });
  const pushCodes = new PushCodes({ db: deps.db, push, deviceTokens: deps.deviceTokens, templates, audit: deps.audit });
  return {
    name: 'notifications',
    provides: { push, pushOutbox, templates, pushCodes },
    tags: [{ name: 'Notification templates', description: 'The wording of push notifications in en, pt and fr (permission `notifications.templates`).' }],
    routes: async (app) => {
      await app.register(notificationRoutes({ ...deps, push, outbox: pushOutbox, templates }));
      await app.register(templateRoutes({ templates, users: deps.users, guard: deps.guard }));
    },
    // Registered either way (a server without push leaves the queue alone: `deliver` returns at once).
    jobs: [
      { name: 'push delivery', everyMs: DELIVERY_EVERY_MS, scope: 'every-node', run: (stopping) => pushOutbox.drain(stopping) },
      {
        name: 'push record clean-up', everyMs: 60 * 60_000, scope: 'one-node',
        run: (stopping) => pushOutbox.purgeDone(new Date(deps.clock.now() - deps.config.retention.recordDays * 86_400_000), stopping),
      },
    ],
  };
}
