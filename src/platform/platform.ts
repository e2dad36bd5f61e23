/**
 * What the platform offers every capability module: configuration, clock, logger, the database
 * and its event bus, metrics, key material, and the client-IP hasher. `src/app.ts` starts the
 * module chain from it.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Hasher } from './crypto/field-cipher.js';
import { KeyMaterial } from './crypto/key-material.js';
import type { Secrets } from './crypto/secrets.js';
import type { Db, DatabaseHandle } from './db/database.js';
import type { EventBus } from './db/bus.js';
import { Metrics } from './observability/metrics.js';
import { createTracing, type Tracing } from './observability/tracing.js';

export interface Platform {
  config: Config;
  clock: Clock;
  log: Logger;
  database: DatabaseHandle;
  /** `database.db`, for modules that only run SQL. */
  db: Db;
  /** `database.bus`: LISTEN/NOTIFY between nodes (in-process on PGlite). */
  bus: EventBus;
  metrics: Metrics;
  keys: KeyMaterial;
  /** HMAC-SHA256 of client IPs (SPEC: `ip_address` is hashed), keyed by the IP-hash secret. */
  ipHasher: Hasher;
  /** OpenTelemetry traces (OTEL_*): started with the HTTP app, flushed on close. */
  tracing: Tracing;
}

export function createPlatform(deps: { config: Config; secrets: Secrets; database: DatabaseHandle; clock: Clock; log: Logger; defaultMetrics?: boolean }): Platform {
  const keys = new KeyMaterial(deps.secrets);
  const metrics = new Metrics({ defaultMetrics: deps.defaultMetrics ?? false });
  metrics.databasePools(() => deps.database.pools());
  return {
    config: deps.config,
    clock: deps.clock,
    log: deps.log,
    database: deps.database,
    db: deps.database.db,
    bus: deps.database.bus,
    metrics,
    keys,
    ipHasher: keys.hasher('ip', 'ip-hash'),
    tracing: createTracing(deps.config.tracing, deps.log),
  };
}
