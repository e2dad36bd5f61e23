/**
 * `npx tsx bench/geo.ts`: the geolocation lookup rows of `npm run bench` alone (issue 29 section
 * 1), in this process: nanoseconds per lookup on new and on recurring client addresses, with the
 * bundled country database and with a synthetic city + ASN pair.
 */
import { geoLookupBench, GEO_BENCH } from './lib/geo.js';

const r = await geoLookupBench();
const us = (ns: number) => `${(ns / 1000).toFixed(2)} us`;
console.log(`${GEO_BENCH.lookups.toLocaleString('en-US')} lookups a round, best of ${GEO_BENCH.rounds}; recurring: ${GEO_BENCH.recurringClients.toLocaleString('en-US')} clients; synthetic pair: ${GEO_BENCH.networks.toLocaleString('en-US')} networks each:`);
console.log('| Databases | new addresses | recurring clients | found (new) |');
console.log('|---|---|---|---|');
console.log(`| bundled country (development default) | ${us(r.bundledNewNs)} | ${us(r.bundledRecurringNs)} | ${r.found.bundled.toLocaleString('en-US')} |`);
console.log(`| city + ASN (synthetic, GeoLite2-shaped) | ${us(r.cityAsnNewNs)} | ${us(r.cityAsnRecurringNs)} | ${r.found.cityAsn.toLocaleString('en-US')} |`);
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
console.log(`Targets (a few microseconds a lookup): <= 5 us with one database (${met(r.bundledNewNs <= 5000)}), <= 10 us with two, city and ASN (${met(r.cityAsnNewNs <= 10_000)}).`);
