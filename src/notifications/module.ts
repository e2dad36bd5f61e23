/**
 * Push notifications (issue 14): the provider client (Firebase Cloud Messaging HTTP v1) when
 * PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH are set, and the test-notification route.
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
import { FcmClient, type PushProvider } from './fcm.js';
import { pushRoutes } from './routes.js';

export interface NotificationsDeps {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  deviceTokens: DeviceTokenStore;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
}

export interface NotificationsProvides {
  /** Undefined when push is not configured. */
  push: PushProvider | undefined;
}

export function notificationsModule(deps: NotificationsDeps): Module<NotificationsProvides> {
  const { projectId, credentials, apiUrl, timeoutMs } = deps.config.push;
  const push = projectId !== undefined && credentials !== undefined ? new FcmClient({ projectId, credentials, apiUrl, timeoutMs, clock: deps.clock, log: deps.log }) : undefined;
  return {
    name: 'notifications',
    provides: { push },
    routes: pushRoutes({ ...deps, push }),
  };
}
