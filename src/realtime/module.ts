/**
 * The real-time channel (issue 30, section 1): `GET /api/v1/ws`, a WebSocket authenticated by the
 * access token in its first message and bound to that session, every frame after it sealed under
 * the session's AES-256-GCM key; events published by any capability with
 * `realtime.publish(target, event)`, stored and announced to every node (NOTIFY), delivered by the
 * node holding the socket, and kept REALTIME_RESUME_MINUTES for a client that reconnects.
 */
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { BackgroundWork } from '../platform/background.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { RecoveryService } from '../recovery/service.js';
import type { AlertService } from '../risk/alerts/service.js';
import type { Guard, SessionPolicy } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { UserStore } from '../users/store.js';
import { installHooks } from './hooks.js';
import { RealtimeHub } from './hub.js';
import { realtimeRoutes } from './routes.js';
import { RealtimeStore } from './store.js';
import { REALTIME_EVENT_TYPES } from './types.js';

export interface RealtimeDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'realtime'>;
  metrics: Metrics;
  guard: Guard;
  /** The access policy (schedule, addresses, device) that each heartbeat checks again for every socket. */
  accessPolicy: SessionPolicy;
  sessions: SessionService;
  users: UserStore;
  alerts: AlertService;
  recovery: RecoveryService;
}

export interface RealtimeProvides {
  /** `publish(target, event)`: an event to a user's (or one session's) sockets, on whichever node holds them. */
  realtime: RealtimeHub;
}

export const HEARTBEAT_JOB = 'realtime heartbeat';
export const PURGE_JOB = 'realtime event clean-up';

export function realtimeModule(deps: RealtimeDeps): Module<RealtimeProvides> {
  const settings = deps.config.realtime;
  const events = deps.metrics.counter('strongroom_realtime_events_total', 'Real-time events published, by type (once per event, by the node that published it)', ['type']);
  for (const type of REALTIME_EVENT_TYPES) events.inc({ type }, 0);
  const store = new RealtimeStore(deps.db);
  const realtime = new RealtimeHub({
    store, bus: deps.bus, clock: deps.clock, sessions: deps.sessions, policy: deps.accessPolicy, log: deps.log, settings, onPublished: (type) => events.inc({ type }),
  });
  deps.metrics.gauge('strongroom_realtime_sockets', 'Authenticated real-time sockets (GET /api/v1/ws) open on this node', async () => realtime.size);
  const background = new BackgroundWork();
  installHooks({ hub: realtime, db: deps.db, log: deps.log, background, sessions: deps.sessions, alerts: deps.alerts, recovery: deps.recovery, users: deps.users });
  return {
    name: 'realtime',
    provides: { realtime },
    tags: [{ name: 'Real-time channel', description: 'A WebSocket that tells the signed-in client of its approvals, sessions, security alerts and recoveries as they happen, every message encrypted under the session key (docs/realtime.md, docs/asyncapi.yaml).' }],
    routes: realtimeRoutes({ hub: realtime, guard: deps.guard, sessions: deps.sessions, clock: deps.clock, log: deps.log, settings }),
    jobs: [
      // Ends idle or expired sessions, checks the access policy again, pings, and closes what expired by the service clock (token, key) or fell silent.
      { name: HEARTBEAT_JOB, everyMs: settings.heartbeatSec * 1000, scope: 'every-node', run: async () => realtime.sweep() },
      {
        name: PURGE_JOB, everyMs: 5 * 60_000, scope: 'one-node',
        run: (stopping) => store.purge(new Date(deps.clock.now() - settings.resumeMinutes * 60_000), stopping),
      },
    ],
    close: async () => {
      realtime.closeAll();
      await background.settled();
      await realtime.settled();
    },
  };
}
