/**
 * Breached-password check cost (issue 29 section 2): `BreachedPasswordFilter.isBreached` in this
 * process, no HTTP: the SHA-1 of the password and one 64-byte block of the filter. Measured on a
 * filter that fits the CPU caches (1 million entries, 1.8 MiB) and on one the size of the whole
 * Pwned Passwords set (1 billion entries at 1 in 1,000: 1.8 GiB, so most lookups miss the caches
 * and the TLB), for passwords not in the corpus (what a new password usually is) and for
 * passwords in it (every probe read). The large filter's bits are random (half of them set; a
 * full filter has about 44%), which cost the same to read as real ones. Also the import's
 * parsing rate, on a generated file of a few million lines, to size the full import.
 */
import { randomFillSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { BreachedPasswordFilter } from '../../src/credentials/breached/corpus.js';
import { BlockedBloomFilter, sha1Of, sizeFilter } from '../../src/credentials/breached/filter.js';
import { importBreached } from '../../src/credentials/breached/import.js';
import { pwnedFile } from '../../test/harness/pwned.js';

export const BREACHED_BENCH = { lookups: 1_000_000, passwords: 100_000, rounds: 3, smallEntries: 1_000_000, fullEntries: 1_000_000_000, importLines: 2_000_000 };

export interface BreachedCheckCost {
  /** Nanoseconds per call, best round. */
  sha1Ns: number;
  smallMissNs: number;
  smallHitNs: number;
  fullMissNs: number;
  fullHitNs: number;
  fullBytes: number;
  /** Lines parsed per second by one pass of the import, and the whole import's rate (two passes, write included). */
  scanLinesPerSec: number;
  importLinesPerSec: number;
}

const log = pino({ level: 'silent' });

/** Passwords of a realistic length, a fixed sequence. */
const passwords = (n: number, tag: string): string[] => Array.from({ length: n }, (_, i) => `${tag}-Pass#${i}-${(i * 2654435761) >>> 0}`);

function timePerCall(fn: (p: string) => unknown, inputs: readonly string[], total: number, rounds: number): number {
  let best = Infinity;
  let sink = 0;
  for (let r = 0; r < rounds; r++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < total; i++) if (fn(inputs[i % inputs.length]!)) sink++;
    best = Math.min(best, Number(process.hrtime.bigint() - started) / total);
  }
  if (sink < 0) console.log(sink);
  return best;
}

/** A filter holding `members`, sized for `entries` (the rest of its bits random when `fill`). */
function filterFor(entries: number, members: readonly string[], fill: boolean): BlockedBloomFilter {
  const size = sizeFilter(entries, 0.001);
  const filter = BlockedBloomFilter.empty(size);
  if (fill) {
    // Random bytes: half the bits set, near a full filter's 44%; reading them costs the same.
    for (let at = 0; at < filter.bits.length; at += 1 << 26) randomFillSync(filter.bits, at, Math.min(1 << 26, filter.bits.length - at));
  } else for (let i = 0; i < entries && i < 5_000_000; i++) filter.add(sha1Of(`fill-${i}`));
  for (const p of members) filter.add(sha1Of(p));
  return filter;
}

async function importRate(): Promise<{ scan: number; full: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-bench-breached-'));
  try {
    const input = path.join(dir, 'pwned.txt');
    writeFileSync(input, pwnedFile([], { random: BREACHED_BENCH.importLines, seed: 'bench' }));
    let passOneEnded = 0;
    const started = process.hrtime.bigint();
    await importBreached({ file: input, output: path.join(dir, 'b.filter'), minCount: 1, falsePositiveRate: 0.001, onProgress: (p) => {
      if (p.pass === 2 && passOneEnded === 0) passOneEnded = Number(process.hrtime.bigint() - started) / 1e9;
    } });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { scan: BREACHED_BENCH.importLines / passOneEnded, full: BREACHED_BENCH.importLines / seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function breachedCheckBench(): Promise<BreachedCheckCost> {
  const b = BREACHED_BENCH;
  const members = passwords(b.passwords, 'in');
  const others = passwords(b.passwords, 'out');
  const sha1Ns = timePerCall((p) => sha1Of(p)[0] === 0, others, b.lookups, b.rounds);
  const small = BreachedPasswordFilter.of(filterFor(b.smallEntries, members, false), log);
  const smallMissNs = timePerCall((p) => small.isBreached(p), others, b.lookups, b.rounds);
  const smallHitNs = timePerCall((p) => small.isBreached(p), members, b.lookups, b.rounds);
  const fullFilter = filterFor(b.fullEntries, members, true);
  const full = BreachedPasswordFilter.of(fullFilter, log);
  const fullMissNs = timePerCall((p) => full.isBreached(p), others, b.lookups, b.rounds);
  const fullHitNs = timePerCall((p) => full.isBreached(p), members, b.lookups, b.rounds);
  const rates = await importRate();
  return { sha1Ns, smallMissNs, smallHitNs, fullMissNs, fullHitNs, fullBytes: fullFilter.bits.length, scanLinesPerSec: rates.scan, importLinesPerSec: rates.full };
}
