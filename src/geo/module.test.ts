import { describe, expect, it } from 'vitest';
import { ManualClock } from '../platform/clock.js';
import { bundledGeoDatabase, type GeoConfig } from '../platform/config-geo.js';
import { Metrics } from '../platform/observability/metrics.js';
import { GEO_RELOAD_EVERY_MS, GEO_RELOAD_JOB, geoModule } from './module.js';
import { captureLog } from '../../test/harness/log-capture.js';

const capture = () => captureLog();

const BUNDLED: GeoConfig = { maxAgeDays: 35, databases: [{ kind: 'country', setting: 'GEOIP_COUNTRY_DB', path: bundledGeoDatabase(), bundled: true }] };
const WARN = 40;
const INFO = 30;

async function start(env: 'production' | 'development') {
  const { log, lines } = capture();
  const metrics = new Metrics();
  const m = geoModule({ config: { env, geo: BUNDLED }, clock: new ManualClock(Date.UTC(2026, 11, 6)), log, metrics });
  await m.init!();
  return { m, lines: lines.filter((l) => l.msg.startsWith('Geolocation:')), metrics };
}

describe('the geo module', () => {
  it('production never runs on the bundled database silently: start-up warns, naming it and the settings to set', async () => {
    const { lines } = await start('production');
    const warnings = lines.filter((l) => l.level === WARN).map((l) => l.msg);
    expect(warnings).toEqual([
      expect.stringMatching(/^Geolocation: The country database is the development copy bundled from the npm package @ip-location-db\/geo-whois-asn-country-mmdb .*set GEOIP_COUNTRY_DB or GEOIP_CITY_DB \(and GEOIP_ASN_DB\)/),
      expect.stringMatching(/^Geolocation: The bundled country database \(country ipvAll\) was built on 2026-06-17, \d+ days ago, more than GEOIP_MAX_AGE_DAYS \(35\)/),
    ]);
  });

  it('in development the bundled database is expected: the same lines, as information', async () => {
    const { lines } = await start('development');
    expect(lines.map((l) => l.level)).toEqual([INFO, INFO, INFO]);
    expect(lines[0]!.msg).toBe('Geolocation: country from the bundled development database (country ipvAll, built 2026-06-17)');
  });

  it('provides the locator, a reload check on every node every few seconds, and the age gauge on /metrics', async () => {
    const { m, metrics } = await start('development');
    expect(m.provides.geo.lookup('197.248.0.1')).toEqual({ country: 'KE' });
    expect(m.jobs).toEqual([expect.objectContaining({ name: GEO_RELOAD_JOB, everyMs: GEO_RELOAD_EVERY_MS, scope: 'every-node' })]);
    expect(GEO_RELOAD_EVERY_MS).toBeLessThanOrEqual(10_000);
    expect(await m.jobs![0]!.run(new AbortController().signal)).toEqual([]); // nothing replaced
    const text = await metrics.registry.metrics();
    const built = Date.UTC(2026, 5, 17, 19, 51, 40);
    expect(text).toContain(`strongroom_geoip_database_age_seconds{database="country"} ${Math.round((Date.UTC(2026, 11, 6) - built) / 1000)}`);
  });
});
