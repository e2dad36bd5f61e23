/**
 * Sessions (SPEC Authentication 5 and 6): creation, inactivity, the concurrency limit. The
 * bearer guard that checks them on every request (`request.auth`, src/sessions/guard.ts) is
 * built by the access module, whose policy it applies too.
 */
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { SensitiveColumns } from '../platform/crypto/sensitive.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { purgeSessionRecords } from './records.js';
import { SessionService } from './service.js';

export interface SessionsDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  config: Pick<Config, 'sessions' | 'tokens' | 'transport' | 'retention'>;
  sensitive: SensitiveColumns;
  metrics: Metrics;
}

export interface SessionsProvides {
  sessions: SessionService;
}

export function sessionsModule(deps: SessionsDeps): Module<SessionsProvides> {
  const { config } = deps;
  const sessions = new SessionService({
    db: deps.db, clock: deps.clock, bus: deps.bus, config: config.sessions, maxLifetimeSec: config.tokens.refreshTtlSec,
    sessionKeyTtlSec: config.transport.sessionKeyTtlSec, sensitive: deps.sensitive,
  });
  deps.metrics.gauge('strongroom_active_sessions', 'Sessions currently active', () => sessions.countActive());
  return {
    name: 'sessions',
    provides: { sessions },
    jobs: [
      // The safety net under LISTEN/NOTIFY: bounds a missed notification to CACHE_SYNC_MS.
      { name: 'session sync', everyMs: config.sessions.cacheSyncMs, scope: 'every-node', run: () => sessions.sync() },
      {
        name: 'session record clean-up', everyMs: 60 * 60_000, scope: 'one-node',
        run: (stopping) => purgeSessionRecords(deps.db, new Date(deps.clock.now() - config.retention.recordDays * 86_400_000), stopping),
      },
    ],
  };
}
