/**
 * Geolocation: `geo` locates client addresses for the other capabilities (the audit trail now,
 * the risk signals later). Its databases are loaded before the first request; a background job
 * on every node checks every few seconds whether a file was replaced and reloads it; /metrics
 * shows each database's age and /health its build dates and warnings.
 */
import { Gauge } from 'prom-client';
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { GeoLocator } from './locator.js';

export interface GeoDeps {
  config: Pick<Config, 'env' | 'geo'>;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
}

/** How often each node looks at the files' identity (a stat each: nothing is read unless one changed). */
export const GEO_RELOAD_EVERY_MS = 5_000;
export const GEO_RELOAD_JOB = 'geoip reload';

/** `strongroom_geoip_database_age_seconds{database}`: now minus each loaded database's build date. */
function ageGauge(metrics: Metrics, geo: GeoLocator): void {
  new Gauge({
    name: 'strongroom_geoip_database_age_seconds',
    help: 'Age of each loaded geolocation database (country, asn, city): seconds since its build date (the MMDB metadata\'s build_epoch)',
    labelNames: ['database'] as const,
    registers: [metrics.registry],
    collect() {
      this.reset();
      for (const a of geo.ages()) this.set({ database: a.database }, a.seconds);
    },
  });
}

/**
 * The start-up lines: what answers, and each warning. In production every warning is a warning
 * (the bundled copy must not serve unnoticed); in development the bundled copy is expected, and
 * what is said about it is information.
 */
function announce(geo: GeoLocator, production: boolean, log: Logger): void {
  const { databases, notes } = geo.survey();
  for (const d of databases) {
    log.info({ geoip: { database: d.database, type: d.type, built: d.build_date, source: d.source } }, `Geolocation: ${d.database} from ${d.source === 'bundled' ? 'the bundled development database' : d.setting} (${d.type}, built ${d.build_date.slice(0, 10)})`);
  }
  for (const n of notes) {
    if (production || !n.bundled) log.warn({ geoip: 'warning' }, `Geolocation: ${n.text}`);
    else log.info({ geoip: 'development database' }, `Geolocation: ${n.text}`);
  }
}

export function geoModule(deps: GeoDeps): Module<{ geo: GeoLocator }> {
  const geo = new GeoLocator({ sources: deps.config.geo.databases, maxAgeDays: deps.config.geo.maxAgeDays, clock: deps.clock, log: deps.log });
  ageGauge(deps.metrics, geo);
  return {
    name: 'geo',
    provides: { geo },
    init: async () => {
      await geo.load();
      announce(geo, deps.config.env === 'production', deps.log);
    },
    jobs: [{ name: GEO_RELOAD_JOB, everyMs: GEO_RELOAD_EVERY_MS, scope: 'every-node', run: () => geo.refresh() }],
  };
}
