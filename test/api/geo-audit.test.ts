/**
 * Geolocation in the audit trail, /health and /metrics (issue 29 section 1), on the operator's
 * own databases: a city and an ASN database written by the test (test/harness/mmdb.ts), with
 * 41.90.0.0/16 in Nairobi (AS33771) and 85.138.0.0/16 in Lisbon. Clients reach the service
 * through a proxy on loopback (TRUST_PROXY=loopback), which names them in X-Forwarded-For.
 * Nothing here depends on the database, so it runs once, on PostgreSQL.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GEO_RELOAD_JOB } from '../../src/geo/module.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, withoutRiskResponses, WRONG_PASSWORD } from '../harness/fixtures.js';
import { asnRecord, buildMmdb, cityRecord, type MmdbNetwork } from '../harness/mmdb.js';

const DAY = 86_400_000;
const NAIROBI = '41.90.64.10';
const LISBON = '85.138.7.20';

const city = (nairobi: 'KE' | 'TZ'): MmdbNetwork[] => [
  { cidr: '41.90.0.0/16', data: cityRecord(nairobi, nairobi === 'KE' ? 'Nairobi' : 'Arusha', -1.2864, 36.8172, 20) },
  { cidr: '85.138.0.0/16', data: cityRecord('PT', 'Lisbon', 38.7223, -9.1393, 50) },
];

interface Entry { event_type: string; username: string | null; location: Record<string, unknown> | null }
interface Page { entries: Entry[]; total: number }

let t: TestApp;
let dir: string;
let cityFile: string;
let adminToken: string;
let builtAt: Date;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-geo-api-'));
  cityFile = path.join(dir, 'GeoLite2-City.mmdb');
  const asnFile = path.join(dir, 'GeoLite2-ASN.mmdb');
  const clock = new ManualClock(Date.now());
  builtAt = new Date(Math.floor(clock.now() / 1000) * 1000 - 2 * DAY); // build_epoch counts whole seconds
  writeFileSync(cityFile, buildMmdb(city('KE'), { builtAt, databaseType: 'GeoLite2-City' }));
  writeFileSync(asnFile, buildMmdb([{ cidr: '41.90.0.0/16', data: asnRecord(33771, 'Safaricom Limited') }], { builtAt, databaseType: 'GeoLite2-ASN' }));
  t = await createTestApp({ clock, env: { TRUST_PROXY: 'loopback', GEOIP_CITY_DB: cityFile, GEOIP_ASN_DB: asnFile } });
  await withoutRiskResponses(t.s); // the customer hops countries here: where, not what follows, is tested
  await seedUser(t.s, 'geo.admin', { roles: ['admin'] });
  await seedUser(t.s, 'geo.customer');
  adminToken = (await signIn(t.app, 'geo.admin')).access_token; // from loopback, no proxy header: internal
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const from = (address: string) => ({ 'x-forwarded-for': address });
const audit = async (query: string): Promise<Page> => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/audit?${query}`, headers: bearer(adminToken) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Page>();
};

describe('the audit trail locates each client', () => {
  beforeAll(async () => {
    // A second between events: the trail is ordered by time, and the clock is frozen.
    t.clock.advance(1000);
    expect((await login(t.app, 'geo.customer', STRONG_PASSWORD, {}, from(NAIROBI))).statusCode).toBe(200);
    t.clock.advance(1000);
    expectError(await login(t.app, 'geo.customer', WRONG_PASSWORD, {}, from(NAIROBI)), 401, 'INVALID_CREDENTIALS');
    t.clock.advance(1000);
    expect((await login(t.app, 'geo.customer', STRONG_PASSWORD, {}, from(LISBON))).statusCode).toBe(200);
  });

  it('a sign-in from Nairobi carries the country, network, city and coordinates; one from Lisbon its own', async () => {
    const logins = (await audit('event_type=USER_LOGIN')).entries.filter((e) => e.username === 'geo.customer');
    expect(logins.map((e) => e.location)).toEqual([
      { country: 'PT', city: 'Lisbon', latitude: 38.7223, longitude: -9.1393, accuracy_km: 50 },
      { country: 'KE', asn: 33771, as_org: 'Safaricom Limited', city: 'Nairobi', latitude: -1.2864, longitude: 36.8172, accuracy_km: 20 },
    ]);
  });

  it('a client on the bank\'s own network (here loopback, no proxy header) is internal, never a country', async () => {
    const own = (await audit('event_type=USER_LOGIN')).entries.filter((e) => e.username === 'geo.admin');
    expect(own.map((e) => e.location)).toEqual([{ internal: true }]);
  });

  it('?country=KE answers only the entries located in Kenya: the sign-in and the failed attempt', async () => {
    const page = await audit('country=KE');
    expect(page.entries.map((e) => [e.event_type, e.location?.country])).toEqual([['FAILED_LOGIN_ATTEMPT', 'KE'], ['USER_LOGIN', 'KE']]);
    expect(page.total).toBe(2);
    expect((await audit('country=PT&event_type=USER_LOGIN')).entries.map((e) => e.location?.city)).toEqual(['Lisbon']);
    expect((await audit('country=BR')).entries).toEqual([]);
  });

  it('a country that is not ISO 3166-1 alpha-2 in upper case is 422 VALIDATION_ERROR naming country', async () => {
    for (const bad of ['ke', 'KEN', 'K', '12', 'internal']) {
      const body = expectError(await t.app.inject({ method: 'GET', url: `/api/v1/admin/audit?country=${bad}`, headers: bearer(adminToken) }), 422, 'VALIDATION_ERROR');
      expect(body.details).toMatchObject({ fields: [expect.objectContaining({ location: 'querystring', field: 'country' })] });
    }
  });
});

describe('/health and /metrics', () => {
  it('/health names each database and its build date; a stale one is a warning and /health stays 200', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/health' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().geoip).toMatchObject({
      status: 'ok', max_age_days: 35, warnings: [],
      databases: [
        { database: 'city', setting: 'GEOIP_CITY_DB', source: 'operator', type: 'GeoLite2-City', age_days: 2, stale: false },
        { database: 'asn', setting: 'GEOIP_ASN_DB', source: 'operator', type: 'GeoLite2-ASN', age_days: 2, stale: false },
      ],
    });

    t.clock.advance(34 * DAY); // 36 days old now
    const stale = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(stale.statusCode).toBe(200);
    expect(stale.json()).toMatchObject({ status: 'ok', geoip: { status: 'warning', databases: [{ database: 'city', age_days: 36, stale: true }, { database: 'asn', stale: true }] } });
    expect(stale.json().geoip.warnings).toEqual([
      expect.stringMatching(/^GEOIP_CITY_DB: the city database \(GeoLite2-City\) was built on \d{4}-\d\d-\d\d, 36 days ago, more than GEOIP_MAX_AGE_DAYS \(35\)/),
      expect.stringMatching(/^GEOIP_ASN_DB: the asn database/),
    ]);
    t.clock.advance(-34 * DAY);
  });

  it('/metrics has each database\'s age in seconds', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    const age = (database: string) => Number(new RegExp(`^strongroom_geoip_database_age_seconds\\{database="${database}"\\} (\\d+)$`, 'm').exec(res.body)?.[1]);
    expect(age('city')).toBe(Math.round((t.clock.now() - builtAt.getTime()) / 1000));
    expect(age('asn')).toBe(age('city'));
  });
});

describe('a database file replaced on disk', () => {
  it('is reloaded by the next run of the background check, without a restart: later entries are located from the new file', async () => {
    const next = `${cityFile}.new`;
    writeFileSync(next, buildMmdb(city('TZ'), { builtAt: new Date(t.clock.now()), databaseType: 'GeoLite2-City' }));
    renameSync(next, cityFile); // as an operator's mv
    const reloaded = t.s.geo.nextReload();
    expect(await t.scheduler.runNow(GEO_RELOAD_JOB)).toBe(true);
    expect(await reloaded).toMatchObject({ database: 'city', outcome: 'reloaded' });

    expect((await login(t.app, 'geo.customer', STRONG_PASSWORD, {}, from(NAIROBI))).statusCode).toBe(200);
    expect((await audit('country=TZ')).entries.map((e) => [e.event_type, e.location?.city])).toEqual([['USER_LOGIN', 'Arusha']]);
    expect((await t.app.inject({ method: 'GET', url: '/health' })).json().geoip.databases[0]).toMatchObject({ database: 'city', age_days: 0 });
  });
});
