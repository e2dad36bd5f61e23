import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMmdb, countryRecord } from '../../test/harness/mmdb.js';
import { bundledGeoDatabase, readGeoEnv } from './config-geo.js';
import { ConfigError, loadConfig, Reader } from './config.js';

let dir: string;
let country: string;
let asn: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-geo-config-'));
  country = path.join(dir, 'country.mmdb');
  asn = path.join(dir, 'asn.mmdb');
  writeFileSync(country, buildMmdb([{ cidr: '41.90.0.0/16', data: countryRecord('KE') }]));
  writeFileSync(asn, buildMmdb([{ cidr: '41.90.0.0/16', data: { autonomous_system_number: 33771 } }]));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function read(env: Record<string, string>) {
  // The server's own reader, so these see what start-up sees.
  const r = new Reader(env);
  const config = readGeoEnv((n) => r.opt(n), r.problems, (name, fallback, min, max) => r.int(name, fallback, min, max));
  return { config, problems: r.problems };
}

describe('geolocation settings', () => {
  it('none set: the bundled country database from the npm package, 35 days before a database is stale', () => {
    const bundled = bundledGeoDatabase();
    expect(bundled).toMatch(/node_modules\/@ip-location-db\/geo-whois-asn-country-mmdb\/geo-whois-asn-country\.mmdb$/);
    expect(read({})).toEqual({ problems: [], config: { maxAgeDays: 35, databases: [{ kind: 'country', setting: 'GEOIP_COUNTRY_DB', path: bundled, bundled: true }] } });
  });

  it('the operator\'s files, as absolute paths; a city database answers country, so the bundled one is not added', () => {
    expect(read({ GEOIP_COUNTRY_DB: country, GEOIP_ASN_DB: asn, GEOIP_MAX_AGE_DAYS: '10' })).toEqual({
      problems: [],
      config: { maxAgeDays: 10, databases: [{ kind: 'country', setting: 'GEOIP_COUNTRY_DB', path: country, bundled: false }, { kind: 'asn', setting: 'GEOIP_ASN_DB', path: asn, bundled: false }] },
    });
    expect(read({ GEOIP_CITY_DB: path.relative(process.cwd(), country) }).config.databases).toEqual([{ kind: 'city', setting: 'GEOIP_CITY_DB', path: country, bundled: false }]);
  });

  it('an ASN database alone: the bundled database still answers country (and warns, as without any)', () => {
    expect(read({ GEOIP_ASN_DB: asn }).config.databases.map((d) => [d.kind, d.bundled])).toEqual([['country', true], ['asn', false]]);
  });

  it('a file that cannot be used is a problem naming the setting and the path: missing, a directory, unreadable, compressed, not an MMDB', () => {
    const sub = path.join(dir, 'a-directory');
    mkdirSync(sub);
    const gz = path.join(dir, 'GeoLite2-City.tar.gz');
    writeFileSync(gz, Buffer.from([0x1f, 0x8b, 8, 0]));
    const csv = path.join(dir, 'dbip-country-lite.csv');
    writeFileSync(csv, '1.0.0.0,1.0.0.255,AU\n');
    const empty = path.join(dir, 'empty.mmdb');
    writeFileSync(empty, '');
    const fix = 'Point it at a current .mmdb file (DB-IP Lite or MaxMind GeoLite2), or unset it';
    expect(read({ GEOIP_COUNTRY_DB: path.join(dir, 'nope.mmdb') }).problems).toEqual([`GEOIP_COUNTRY_DB: ${path.join(dir, 'nope.mmdb')} does not exist. ${fix}`]);
    expect(read({ GEOIP_ASN_DB: sub }).problems).toEqual([`GEOIP_ASN_DB: ${sub} is a directory, not a file. ${fix}`]);
    expect(read({ GEOIP_CITY_DB: gz }).problems).toEqual([`GEOIP_CITY_DB: ${gz} is compressed (gzip): unpack the download (tar xzf or gunzip) and point the setting at the .mmdb file inside. ${fix}`]);
    expect(read({ GEOIP_COUNTRY_DB: csv }).problems).toEqual([`GEOIP_COUNTRY_DB: ${csv} is not a MaxMind DB (.mmdb) file: it has no MaxMind DB metadata at its end (a CSV edition, or a file still being copied?). ${fix}`]);
    expect(read({ GEOIP_COUNTRY_DB: empty }).problems).toEqual([`GEOIP_COUNTRY_DB: ${empty} is empty. ${fix}`]);
    if (process.getuid?.() !== 0) { // root reads whatever the mode says
      const locked = path.join(dir, 'locked.mmdb');
      writeFileSync(locked, buildMmdb([]));
      chmodSync(locked, 0o000);
      expect(read({ GEOIP_COUNTRY_DB: locked }).problems).toEqual([`GEOIP_COUNTRY_DB: ${locked} cannot be read by this process (permissions). ${fix}`]);
    }
  });

  it('a country setting with a problem does not fall back to the bundled database silently', () => {
    const r = read({ GEOIP_COUNTRY_DB: path.join(dir, 'nope.mmdb') });
    expect(r.config.databases).toEqual([]);
    expect(r.problems).toHaveLength(1);
  });

  it('loadConfig stops start-up with the problem among the others, and reads GEOIP_MAX_AGE_DAYS as a whole number of days', () => {
    let error: unknown;
    try {
      loadConfig({ GEOIP_CITY_DB: path.join(dir, 'GeoLite2-City.mmdb'), GEOIP_MAX_AGE_DAYS: '0' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^GEOIP_CITY_DB: .*GeoLite2-City\.mmdb does not exist\./),
      'GEOIP_MAX_AGE_DAYS must be a whole number from 1 to 3650 (got "0")',
    ]));
    expect(loadConfig({ GEOIP_COUNTRY_DB: country }).geo).toEqual({ maxAgeDays: 35, databases: [{ kind: 'country', setting: 'GEOIP_COUNTRY_DB', path: country, bundled: false }] });
  });
});
