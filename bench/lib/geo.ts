/**
 * Geolocation lookup cost (issue 29 section 1): the locator of src/geo in this process, no HTTP.
 * Two set-ups: the bundled country database (the development default, 1.3 million tree nodes),
 * and a synthetic city + ASN pair written by the test harness's MMDB writer (GeoLite2-shaped
 * records, `networks` networks each). Each is measured on addresses never seen before (every
 * lookup walks the trees and decodes, the answer cache off) and on a working set of recurring
 * clients (the answer cache on, as the service runs it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { GeoLocator } from '../../src/geo/locator.js';
import { bundledGeoDatabase, type GeoDatabaseSource } from '../../src/platform/config-geo.js';
import { asnRecord, buildMmdb, cityRecord, type MmdbNetwork } from '../../test/harness/mmdb.js';

export const GEO_BENCH = { lookups: 500_000, recurringClients: 2_000, networks: 50_000, rounds: 3 };

export interface GeoLookupCost {
  /** Nanoseconds per lookup, best round. */
  bundledNewNs: number;
  bundledRecurringNs: number;
  cityAsnNewNs: number;
  cityAsnRecurringNs: number;
  /** What the lookups answered (a check that they found something). */
  found: { bundled: number; cityAsn: number };
}

/** Public-looking IPv4 addresses spread over the space (a fixed sequence: the same every run). */
function addresses(n: number, seed: number): string[] {
  let x = seed >>> 0;
  const out: string[] = [];
  while (out.length < n) {
    x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0;
    const a = x >>> 24;
    if (a === 0 || a === 10 || a === 127 || a >= 224) continue;
    out.push(`${a}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`);
  }
  return out;
}

function timePerLookup(geo: GeoLocator, ips: readonly string[], total: number, rounds: number): { ns: number; found: number } {
  let best = Infinity;
  let found = 0;
  for (let r = 0; r < rounds; r++) {
    found = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < total; i++) if (geo.lookup(ips[i % ips.length]!) !== null) found++;
    best = Math.min(best, Number(process.hrtime.bigint() - started) / total);
  }
  return { ns: best, found };
}

/** The /24 networks of the synthetic pair: `networks` of them spread over the IPv4 space, from 1.0.0.0/24 on. */
const syntheticNetwork = (i: number, networks: number): number => 256 * 256 + i * Math.floor((222 * 256 * 256) / networks);

/** Addresses inside the synthetic networks (a fixed sequence), so that every lookup finds a city. */
function addressesInside(n: number, networks: number): string[] {
  return addresses(n, 13).map((a) => {
    const x = Number(a.split('.')[1]) * 256 + Number(a.split('.')[2]);
    const net = syntheticNetwork(x % networks, networks);
    return `${net >>> 16}.${(net >>> 8) & 255}.${net & 255}.${a.split('.')[3]}`;
  });
}

/** The synthetic city and ASN databases, half the networks Kenyan, half Portuguese. */
function syntheticPair(dir: string, networks: number): GeoDatabaseSource[] {
  const city: MmdbNetwork[] = [];
  const asn: MmdbNetwork[] = [];
  for (let i = 0; i < networks; i++) {
    const n = syntheticNetwork(i, networks);
    const cidr = `${n >>> 16}.${(n >>> 8) & 255}.${n & 255}.0/24`;
    city.push({ cidr, data: i % 2 === 0 ? cityRecord('KE', `Nairobi ${i % 500}`, -1.2864, 36.8172) : cityRecord('PT', `Lisboa ${i % 500}`, 38.7223, -9.1393) });
    asn.push({ cidr, data: asnRecord(33_771 + (i % 300), `Network ${i % 300}`) });
  }
  const cityFile = path.join(dir, 'city.mmdb');
  const asnFile = path.join(dir, 'asn.mmdb');
  writeFileSync(cityFile, buildMmdb(city, { databaseType: 'GeoLite2-City' }));
  writeFileSync(asnFile, buildMmdb(asn, { databaseType: 'GeoLite2-ASN' }));
  return [
    { kind: 'city', setting: 'GEOIP_CITY_DB', path: cityFile, bundled: false },
    { kind: 'asn', setting: 'GEOIP_ASN_DB', path: asnFile, bundled: false },
  ];
}

async function locator(sources: GeoDatabaseSource[], answerCacheSize?: number): Promise<GeoLocator> {
  const geo = new GeoLocator({ sources, maxAgeDays: 35, clock: { now: () => Date.now() }, log: pino({ level: 'silent' }), ...(answerCacheSize === undefined ? {} : { answerCacheSize }) });
  await geo.load();
  return geo;
}

export async function geoLookupBench(opts: Partial<typeof GEO_BENCH> = {}): Promise<GeoLookupCost> {
  const o = { ...GEO_BENCH, ...opts };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-geo-bench-'));
  try {
    const bundled: GeoDatabaseSource[] = [{ kind: 'country', setting: 'GEOIP_COUNTRY_DB', path: bundledGeoDatabase(), bundled: true }];
    const pair = syntheticPair(dir, o.networks);
    const run = async (sources: GeoDatabaseSource[], fresh: string[], recurring: string[]) => {
      const cold = timePerLookup(await locator(sources, 0), fresh, o.lookups, o.rounds);
      const warm = timePerLookup(await locator(sources), recurring, o.lookups, o.rounds);
      return { cold, warm };
    };
    const b = await run(bundled, addresses(o.lookups, 7), addresses(o.recurringClients, 11));
    const c = await run(pair, addressesInside(o.lookups, o.networks), addressesInside(o.recurringClients, o.networks).reverse());
    return { bundledNewNs: b.cold.ns, bundledRecurringNs: b.warm.ns, cityAsnNewNs: c.cold.ns, cityAsnRecurringNs: c.warm.ns, found: { bundled: b.cold.found, cityAsn: c.cold.found } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
