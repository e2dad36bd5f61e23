/**
 * Geolocation databases (src/geo): GEOIP_COUNTRY_DB, GEOIP_ASN_DB and GEOIP_CITY_DB name the
 * operator's own MaxMind-format files (DB-IP Lite, CC BY 4.0, or MaxMind GeoLite2), and
 * GEOIP_MAX_AGE_DAYS how old a file's build date may be before start-up, /health and the logs
 * warn. Each file is checked here (it exists, it can be read, it ends with MaxMind DB metadata)
 * so that a wrong path stops start-up naming the setting and the path, with every other problem
 * of the configuration. Read by config.ts, the only module that reads the environment.
 *
 * With neither a country nor a city database set, the country database of the npm package
 * `@ip-location-db/geo-whois-asn-country-mmdb` is used: a development default, stale and with
 * known data errors, about which start-up and /health warn (in production loudly).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { MMDB_METADATA_MAX_BYTES, mmdbTailProblem } from '../geo/format.js';

export type GeoDatabaseKind = 'country' | 'asn' | 'city';
export type GeoSetting = 'GEOIP_COUNTRY_DB' | 'GEOIP_ASN_DB' | 'GEOIP_CITY_DB';

export interface GeoDatabaseSource {
  kind: GeoDatabaseKind;
  /** The setting that names it (for the bundled file, the one that would replace it). */
  setting: GeoSetting;
  /** Absolute. */
  path: string;
  /** The development default from the npm package, not an operator's file. */
  bundled: boolean;
}

export interface GeoConfig {
  /** At most one of each kind; a country source (country or city) always. */
  databases: readonly GeoDatabaseSource[];
  /** GEOIP_MAX_AGE_DAYS: a database built longer ago than this is reported stale (a warning, never an outage). */
  maxAgeDays: number;
}

export const BUNDLED_GEO_PACKAGE = '@ip-location-db/geo-whois-asn-country-mmdb';
const BUNDLED_GEO_FILE = `${BUNDLED_GEO_PACKAGE}/geo-whois-asn-country.mmdb`;

/** Where npm installed the bundled country database. */
export function bundledGeoDatabase(): string {
  return createRequire(import.meta.url).resolve(BUNDLED_GEO_FILE);
}

/** The file's first two bytes and its last `MMDB_METADATA_MAX_BYTES` (errors as thrown by node:fs). */
export function readMmdbEnds(file: string): { head: Buffer; tail: Buffer } {
  const fd = openSync(file, 'r');
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
    const head = Buffer.alloc(Math.min(2, stat.size));
    readSync(fd, head, 0, head.length, 0);
    const tail = Buffer.alloc(Math.min(MMDB_METADATA_MAX_BYTES, stat.size));
    readSync(fd, tail, 0, tail.length, stat.size - tail.length);
    return { head, tail };
  } finally {
    closeSync(fd);
  }
}

const SETTINGS: ReadonlyArray<[GeoSetting, GeoDatabaseKind]> = [['GEOIP_COUNTRY_DB', 'country'], ['GEOIP_CITY_DB', 'city'], ['GEOIP_ASN_DB', 'asn']];

const WHY: Record<string, string> = {
  ENOENT: 'does not exist', EACCES: 'cannot be read by this process (permissions)', EPERM: 'cannot be read by this process (permissions)', EISDIR: 'is a directory, not a file',
};

export function readGeoEnv(
  opt: (name: string) => string | undefined,
  problems: string[],
  int: (name: string, fallback: number, min: number, max: number) => number,
  readEnds: (file: string) => { head: Buffer; tail: Buffer } = readMmdbEnds,
  bundled: () => string = bundledGeoDatabase,
): GeoConfig {
  const databases: GeoDatabaseSource[] = [];
  for (const [setting, kind] of SETTINGS) {
    const raw = opt(setting);
    if (raw === undefined) continue;
    const file = path.resolve(raw);
    let problem: string | undefined;
    try {
      const { head, tail } = readEnds(file);
      problem = mmdbTailProblem(tail, head);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      problem = WHY[code] ?? `cannot be read (${code})`;
    }
    if (problem !== undefined) problems.push(`${setting}: ${file} ${problem}. Point it at a current .mmdb file (DB-IP Lite or MaxMind GeoLite2), or unset it`);
    else databases.push({ kind, setting, path: file, bundled: false });
  }
  const hasCountry = databases.some((d) => d.kind !== 'asn') || problems.some((p) => /^GEOIP_(COUNTRY|CITY)_DB:/.test(p));
  if (!hasCountry) databases.unshift({ kind: 'country', setting: 'GEOIP_COUNTRY_DB', path: bundled(), bundled: true });
  return { databases: Object.freeze(databases.map((d) => Object.freeze(d))), maxAgeDays: int('GEOIP_MAX_AGE_DAYS', 35, 1, 3650) };
}
