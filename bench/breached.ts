/**
 * `npx tsx bench/breached.ts`: the breached-password check's cost per call (issue 29 section 2),
 * in this process, and the import's parsing rate. Needs about 2 GiB of free memory (a filter the
 * size of the whole Pwned Passwords set).
 */
import { breachedCheckBench, BREACHED_BENCH } from './lib/breached.js';

const r = await breachedCheckBench();
const us = (ns: number) => `${(ns / 1000).toFixed(2)} us`;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(`${fmt(BREACHED_BENCH.lookups)} calls a round, best of ${BREACHED_BENCH.rounds}, over ${fmt(BREACHED_BENCH.passwords)} distinct passwords:`);
console.log('| Filter | not in the corpus | in the corpus |');
console.log('|---|---|---|');
console.log(`| SHA-1 of the password alone | ${us(r.sha1Ns)} | ${us(r.sha1Ns)} |`);
console.log(`| ${fmt(BREACHED_BENCH.smallEntries)} entries (in the CPU caches) | ${us(r.smallMissNs)} | ${us(r.smallHitNs)} |`);
console.log(`| ${fmt(BREACHED_BENCH.fullEntries)} entries, ${(r.fullBytes / 2 ** 30).toFixed(2)} GiB (the whole set) | ${us(r.fullMissNs)} | ${us(r.fullHitNs)} |`);
console.log(`Import: ${fmt(r.scanLinesPerSec)} lines/s a pass; ${fmt(r.importLinesPerSec)} lines/s for the whole import (two passes and the write) of ${fmt(BREACHED_BENCH.importLines)} lines.`);
