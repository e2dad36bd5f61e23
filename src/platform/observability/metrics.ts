/**
 * Prometheus metrics, one registry per app instance (no global default registry), served at
 * /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolStats } from '../db/database.js';

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'strongroom_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'strongroom_http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly signins = new Counter({
    name: 'strongroom_signins_total',
    help: 'Sign-in attempts by channel, strategy and outcome',
    labelNames: ['channel', 'strategy', 'outcome'] as const,
    registers: [this.registry],
  });

  /** An account (or PIN, or other counted secret) locked by this failure: one per lock, not per refused attempt. */
  readonly accountLocks = new Counter({
    name: 'strongroom_account_locks_total',
    help: 'Accounts locked by failed attempts, by channel and by what was guessed (the audit trail\'s ACCOUNT_LOCKED)',
    labelNames: ['channel', 'reason'] as const,
    registers: [this.registry],
  });

  /** Second-factor events as the audit trail records them (`event` is its event type). */
  readonly mfaEvents = new Counter({
    name: 'strongroom_mfa_events_total',
    help: 'Second-factor events by audit event type (MFA_VERIFIED, MFA_FAILED, OTP_SENT, OTP_DELIVERY_FAILED, ...) and method',
    labelNames: ['event', 'method'] as const,
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'strongroom_rate_limited_total',
    help: 'Requests refused 429 RATE_LIMITED by route group and by what ran out (client or account)',
    labelNames: ['group', 'dimension'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'strongroom_' });
  }

  /**
   * The database's connection pools, read at each scrape: `strongroom_db_pool_max`,
   * `strongroom_db_pool_connections{state="active"|"idle"}` and `strongroom_db_pool_waiting`
   * (queries waiting for a connection), each by `pool`. PGlite has no pool: no samples.
   */
  databasePools(read: () => readonly PoolStats[]): void {
    const registers = [this.registry];
    new Gauge({
      name: 'strongroom_db_pool_max', help: 'Connections a database pool may open', labelNames: ['pool'] as const, registers,
      collect() {
        this.reset();
        for (const p of read()) this.set({ pool: p.name }, p.max);
      },
    });
    new Gauge({
      name: 'strongroom_db_pool_connections', help: 'Open connections of a database pool, in use (active) or idle', labelNames: ['pool', 'state'] as const, registers,
      collect() {
        this.reset();
        for (const p of read()) {
          this.set({ pool: p.name, state: 'active' }, p.total - p.idle);
          this.set({ pool: p.name, state: 'idle' }, p.idle);
        }
      },
    });
    new Gauge({
      name: 'strongroom_db_pool_waiting', help: 'Queries waiting for a connection of a database pool (the pool is saturated)', labelNames: ['pool'] as const, registers,
      collect() {
        this.reset();
        for (const p of read()) this.set({ pool: p.name }, p.waiting);
      },
    });
  }

  /** A counter a module registers (no labels unless named). */
  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A histogram a module registers (seconds unless the name says otherwise). */
  histogram(name: string, help: string, buckets: number[]): Histogram {
    return new Histogram({ name, help, buckets, registers: [this.registry] });
  }

  /** A gauge read when /metrics is scraped (a module registers what it can count). */
  gauge(name: string, help: string, read: () => Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await read());
      },
    });
  }
}
