import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Reader } from 'mmdb-lib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asnRecord, buildMmdb, cityRecord, countryRecord, double, type MmdbNetwork } from '../../test/harness/mmdb.js';
import { ManualClock } from '../platform/clock.js';
import { bundledGeoDatabase, type GeoDatabaseSource } from '../platform/config-geo.js';
import { GeoDatabaseError } from './database.js';
import { GeoLocator } from './locator.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 6, 9, 0, 0);
const silent = pino({ level: 'silent' });

const CITY: MmdbNetwork[] = [
  { cidr: '41.90.0.0/16', data: cityRecord('KE', 'Nairobi', -1.2864, 36.8172, 20) },
  { cidr: '85.138.0.0/16', data: cityRecord('PT', 'Lisbon', 38.7223, -9.1393, 50) },
  { cidr: '2001:db8::/32', data: cityRecord('KE', 'Mombasa', -4.0435, 39.6682, 100) },
];
const ASN: MmdbNetwork[] = [
  { cidr: '41.90.0.0/16', data: asnRecord(33771, 'Safaricom Limited') },
  { cidr: '85.138.0.0/16', data: asnRecord(3243, 'MEO - SERVICOS DE COMUNICACOES E MULTIMEDIA S.A.') },
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-geo-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function write(bytes: Buffer | string, name = `db-${++files}.mmdb`): string {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
}

/** Writes `bytes` beside `file` and moves it over `file`, as an operator's `mv` does. */
function replace(file: string, bytes: Buffer): void {
  const next = `${file}.new`;
  writeFileSync(next, bytes);
  renameSync(next, file);
}

const source = (kind: GeoDatabaseSource['kind'], file: string, bundled = false): GeoDatabaseSource =>
  ({ kind, path: file, bundled, setting: kind === 'country' ? 'GEOIP_COUNTRY_DB' : kind === 'asn' ? 'GEOIP_ASN_DB' : 'GEOIP_CITY_DB' });

async function locator(sources: GeoDatabaseSource[], clock = new ManualClock(NOW), maxAgeDays = 35): Promise<GeoLocator> {
  const geo = new GeoLocator({ sources, maxAgeDays, clock, log: silent });
  await geo.load();
  return geo;
}

describe('the test MMDB writer, read back by the real reader (mmdb-lib)', () => {
  it.each([24, 28, 32] as const)('round-trips networks and records at %i-bit records, IPv4 under the IPv6 tree and IPv6 networks', (recordSize) => {
    const builtAt = new Date(Date.UTC(2026, 10, 1, 12, 0, 0));
    const db = buildMmdb([...CITY, { cidr: '41.90.64.0/18', data: cityRecord('KE', 'Thika', -1.0333, 37.0693) }], { recordSize, builtAt, databaseType: 'Test-City' });
    const reader = new Reader<Record<string, unknown>>(db);
    expect(reader.metadata).toMatchObject({ recordSize, ipVersion: 6, databaseType: 'Test-City', binaryFormatMajorVersion: 2, buildEpoch: builtAt });
    expect(reader.get('41.90.1.1')).toMatchObject({ city: { names: { en: 'Nairobi' } }, country: { iso_code: 'KE' }, location: { latitude: -1.2864, longitude: 36.8172, accuracy_radius: 20 } });
    expect(reader.get('41.90.65.1')).toMatchObject({ city: { names: { en: 'Thika' } } }); // the more specific network inside the /16
    expect(reader.get('85.138.200.7')).toMatchObject({ country: { iso_code: 'PT' } });
    expect(reader.get('2001:db8:1::5')).toMatchObject({ city: { names: { en: 'Mombasa' } } });
    expect(reader.get('41.91.0.1')).toBeNull();
    expect(reader.get('2001:db9::1')).toBeNull();
    expect(reader.getWithPrefixLength('85.138.1.1')[1]).toBe(16); // counted from the IPv4 subtree
  });

  it('an IPv4 tree, and every data type the format has that records use', () => {
    const value = { s: 'x'.repeat(300), long: 'y'.repeat(70_000), big: 2n ** 40n, neg: -5, yes: true, no: false, list: [1, 'two', double(3)], pi: 3.14159, zero: 0, nested: { a: { b: [] } } };
    const reader = new Reader<Record<string, unknown>>(buildMmdb([{ cidr: '10.0.0.0/8', data: value }], { ipVersion: 4 }));
    expect(reader.metadata.ipVersion).toBe(4);
    expect(reader.get('10.1.2.3')).toEqual({ ...value, list: [1, 'two', 3] });
    expect(reader.get('11.0.0.1')).toBeNull();
  });
});

describe('lookups', () => {
  let geo: GeoLocator;
  beforeAll(async () => {
    geo = await locator([source('city', write(buildMmdb(CITY))), source('asn', write(buildMmdb(ASN))), source('country', write(buildMmdb([{ cidr: '102.0.0.0/8', data: countryRecord('NG') }])))]);
  });

  it('a city and an ASN database: country, network, city, coordinates and the accuracy radius', () => {
    expect(geo.lookup('41.90.64.1')).toEqual({ country: 'KE', asn: 33771, as_org: 'Safaricom Limited', city: 'Nairobi', latitude: -1.2864, longitude: 36.8172, accuracy_km: 20 });
    expect(geo.lookup('85.138.10.20')).toEqual({ country: 'PT', asn: 3243, as_org: 'MEO - SERVICOS DE COMUNICACOES E MULTIMEDIA S.A.', city: 'Lisbon', latitude: 38.7223, longitude: -9.1393, accuracy_km: 50 });
  });

  it('IPv6, and an IPv4 client seen through a dual-stack socket (IPv4-mapped)', () => {
    expect(geo.lookup('2001:db8:abcd::1')).toEqual({ country: 'KE', city: 'Mombasa', latitude: -4.0435, longitude: 39.6682, accuracy_km: 100 });
    expect(geo.lookup('::ffff:41.90.1.2')).toMatchObject({ country: 'KE', city: 'Nairobi', asn: 33771 });
  });

  it('the country database answers where the city database has no record', () => {
    expect(geo.lookup('102.1.2.3')).toEqual({ country: 'NG' });
  });

  it('internal addresses are internal, never a country; unknown and malformed addresses are null', () => {
    for (const ip of ['10.0.0.1', '127.0.0.1', '192.168.1.1', '172.20.0.1', '169.254.1.1', '100.64.0.1', '::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1']) expect(geo.lookup(ip), ip).toEqual({ internal: true });
    for (const ip of ['8.8.8.8', '2001:db9::1', 'not an address', '']) expect(geo.lookup(ip), ip).toBeNull();
  });

  it('answers are frozen (they are shared from the cache), and the same twice', () => {
    const a = geo.lookup('41.90.0.9');
    expect(Object.isFrozen(a)).toBe(true);
    expect(geo.lookup('41.90.0.9')).toBe(a);
  });

  it('an IPv4-only database is not asked about an IPv6 address', async () => {
    const v4 = await locator([source('country', write(buildMmdb([{ cidr: '41.0.0.0/8', data: countryRecord('KE') }], { ipVersion: 4 })))]);
    expect(v4.lookup('41.1.1.1')).toEqual({ country: 'KE' });
    expect(v4.lookup('2001:db8::1')).toBeNull();
  });
});

describe('the bundled development database (@ip-location-db/geo-whois-asn-country-mmdb)', () => {
  it('places a well-known Kenyan and Portuguese address (Safaricom; FCCN, the Portuguese research network)', async () => {
    const geo = await locator([source('country', bundledGeoDatabase(), true)]);
    expect(geo.lookup('197.248.0.1')).toEqual({ country: 'KE' });
    expect(geo.lookup('193.136.0.1')).toEqual({ country: 'PT' });
    expect(geo.lookup('::ffff:193.136.0.1')).toEqual({ country: 'PT' });
    expect(geo.health().warnings[0]).toMatch(/^The country database is the development copy bundled from the npm package @ip-location-db\/geo-whois-asn-country-mmdb .* no longer updated and has known data errors: set GEOIP_COUNTRY_DB or GEOIP_CITY_DB/);
    expect(geo.health().databases[0]).toMatchObject({ database: 'country', source: 'bundled', setting: 'GEOIP_COUNTRY_DB' });
  });
});

describe('a file replaced on disk', () => {
  it('is reloaded by the next check: the reload signal resolves and lookups answer from the new file', async () => {
    const file = write(buildMmdb([{ cidr: '41.90.0.0/16', data: countryRecord('KE') }], { builtAt: new Date(NOW - 40 * DAY) }));
    const geo = await locator([source('country', file)]);
    expect(geo.lookup('41.90.1.1')).toEqual({ country: 'KE' });
    expect(await geo.refresh()).toEqual([]); // nothing changed: nothing read

    replace(file, buildMmdb([{ cidr: '41.90.0.0/16', data: countryRecord('PT') }], { builtAt: new Date(NOW - DAY) }));
    const reloaded = geo.nextReload();
    await geo.refresh();
    expect(await reloaded).toEqual({ database: 'country', setting: 'GEOIP_COUNTRY_DB', outcome: 'reloaded', built_at: new Date(NOW - DAY).toISOString() });
    expect(geo.lookup('41.90.1.1')).toEqual({ country: 'PT' }); // the cached answer went with the old file
    expect(geo.health()).toMatchObject({ status: 'ok', databases: [{ age_days: 1, stale: false }] });
  });

  it('a replacement that does not load leaves the old database answering, is reported once, and is retried when the file changes again', async () => {
    const file = write(buildMmdb([{ cidr: '41.90.0.0/16', data: countryRecord('KE') }], { builtAt: new Date(NOW - DAY) }));
    const geo = await locator([source('country', file)]);
    const good = buildMmdb([{ cidr: '41.90.0.0/16', data: countryRecord('PT') }], { builtAt: new Date(NOW) });

    replace(file, good.subarray(0, good.length >> 1)); // a copy cut short: no metadata at its end
    const failed = geo.nextReload();
    await geo.refresh();
    expect(await failed).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/^is not a MaxMind DB \(\.mmdb\) file/) });
    expect(geo.lookup('41.90.1.1')).toEqual({ country: 'KE' });
    expect(await geo.refresh()).toEqual([]); // the same bad file is not read again
    expect(geo.health()).toMatchObject({ status: 'warning', warnings: [expect.stringMatching(/^GEOIP_COUNTRY_DB: the file on disk was not loaded \(is not a MaxMind DB/)] });
    expect(geo.health().warnings.join()).not.toContain(dir); // /health is open: no paths

    replace(file, good);
    expect(await geo.refresh()).toMatchObject([{ outcome: 'reloaded' }]);
    expect(geo.lookup('41.90.1.1')).toEqual({ country: 'PT' });
    expect(geo.health()).toMatchObject({ status: 'ok', warnings: [] });
  });

  it('a file that disappears is reported; the copy in memory keeps answering', async () => {
    const file = write(buildMmdb([{ cidr: '41.90.0.0/16', data: countryRecord('KE') }], { builtAt: new Date(NOW) }));
    const geo = await locator([source('country', file)]);
    rmSync(file);
    expect(await geo.refresh()).toMatchObject([{ outcome: 'missing' }]);
    expect(geo.lookup('41.90.1.1')).toEqual({ country: 'KE' });
    expect(geo.health().warnings).toEqual([expect.stringContaining('the file is gone; the copy in memory still answers')]);
  });
});

describe('how old a database is', () => {
  it('stale past GEOIP_MAX_AGE_DAYS from its build date (a frozen clock): a warning in health, never an error; ages for /metrics', async () => {
    const clock = new ManualClock(NOW);
    const geo = await locator([
      source('city', write(buildMmdb(CITY, { builtAt: new Date(NOW - 34 * DAY), databaseType: 'GeoLite2-City' }))),
      source('asn', write(buildMmdb(ASN, { builtAt: new Date(NOW - 10 * DAY), databaseType: 'GeoLite2-ASN' }))),
    ], clock);
    expect(geo.health()).toMatchObject({ status: 'ok', max_age_days: 35, warnings: [], databases: [{ database: 'city', age_days: 34, stale: false, type: 'GeoLite2-City', source: 'operator' }, { database: 'asn', age_days: 10, stale: false }] });
    expect(geo.ages()).toEqual([{ database: 'city', seconds: 34 * 86_400 }, { database: 'asn', seconds: 10 * 86_400 }]);

    clock.advance(2 * DAY);
    const h = geo.health();
    expect(h).toMatchObject({ status: 'warning', databases: [{ database: 'city', age_days: 36, stale: true }, { database: 'asn', stale: false }] });
    expect(h.warnings).toEqual([`GEOIP_CITY_DB: the city database (GeoLite2-City) was built on ${new Date(NOW - 34 * DAY).toISOString().slice(0, 10)}, 36 days ago, more than GEOIP_MAX_AGE_DAYS (35): replace the file with a current one (it is reloaded without a restart).`]);
    expect(geo.lookup('41.90.0.1')).toMatchObject({ country: 'KE' }); // still answers
  });
});

describe('files that cannot be used stop start-up, naming the setting and the path', () => {
  const attempt = async (file: string, kind: GeoDatabaseSource['kind'] = 'city') => {
    try {
      await locator([source(kind, file)]);
    } catch (err) {
      expect(err).toBeInstanceOf(GeoDatabaseError);
      return (err as Error).message;
    }
    throw new Error('loaded');
  };

  it('missing, compressed, a CSV edition, cut short after its metadata', async () => {
    expect(await attempt(path.join(dir, 'nowhere.mmdb'))).toBe(`GEOIP_CITY_DB: ${path.join(dir, 'nowhere.mmdb')} does not exist`);
    const gz = write(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0]), 'city.tar.gz');
    expect(await attempt(gz)).toBe(`GEOIP_CITY_DB: ${gz} is compressed (gzip): unpack the download (tar xzf or gunzip) and point the setting at the .mmdb file inside`);
    const csv = write('network,country_code\n41.90.0.0/16,KE\n', 'asn.csv');
    expect(await attempt(csv, 'asn')).toMatch(/^GEOIP_ASN_DB: .*asn\.csv is not a MaxMind DB \(\.mmdb\) file/);
    const whole = buildMmdb(CITY);
    const tree = whole.indexOf(Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'));
    const cut = write(Buffer.concat([whole.subarray(0, 20), whole.subarray(tree)])); // the tree's bytes lost, the metadata kept
    expect(await attempt(cut)).toMatch(/is truncated or corrupt \(its search tree does not fit in the file\)$/);
  });

  it('a corrupt tree that still loads answers nothing rather than throw at a lookup', async () => {
    const db = buildMmdb(CITY);
    db.fill(0xff, 0, 48); // the first nodes point far outside the file
    const geo = await locator([source('city', write(db))]);
    for (const ip of ['41.90.0.1', '85.138.0.1', '8.8.8.8', '2001:db8::1']) expect(geo.lookup(ip)).toBeNull();
  });
});
