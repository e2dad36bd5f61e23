/**
 * Start-up leaves memory an idle server would hold for good. Loading the modules and compiling
 * the routes' schemas make tens of megabytes that survive young collections, so V8 grows its
 * young generation to the maximum while the server starts (32 MiB on Node.js 20, 64 MiB on 24),
 * and nothing shrinks it again: V8 does that in a memory-reducing collection, which an idle
 * Node.js process never runs (browsers run one when a tab goes quiet). So the server runs one
 * itself, once, the first time it is quiet after start-up: about 30 MiB of an idle node's resident
 * memory on Node.js 20, about 60 MiB on 24 (docs/benchmarks.md "Idle memory"). Under load the
 * young generation grows again, as it should: it keeps the collector's work per request low.
 *
 * Quiet: from one window's start to its end the used heap grew by less than V8's own "low
 * allocation rate" and never fell (no collection ran). Each window starts with a young
 * collection, so that V8, which measures that rate between collections, sees the same quiet
 * window: on Node.js 20 the full collection shrinks the young generation only then. A node busy
 * from the start never gets there; after GIVE_UP_MS it stops looking, since the young generation
 * is what such a node needs.
 */
import type { Logger } from 'pino';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's own "low allocation rate" (1,000 bytes per millisecond). */
export const QUIET_BYTES_PER_SECOND = 1_000_000;
/** Longer than V8's own measuring window (5 s), so that V8 sees the quiet window alone. */
export const QUIET_WINDOW_MS = 6_000;
const GIVE_UP_MS = 10 * 60_000;

export interface Collection {
  /** V8's heap as reserved before and after, in MiB (resident memory follows within seconds). */
  heapBeforeMiB: number;
  heapAfterMiB: number;
  ms: number;
}

type Gc = (options?: { type: 'major' | 'minor'; execution?: 'sync'; flavor?: 'last-resort' }) => void;

const mib = (bytes: number): number => Math.round((bytes / 1048576) * 10) / 10;

/** Whether a window from `before` to `after` bytes of used heap was quiet (see above). */
export function wasQuiet(before: number, after: number, windowMs: number): boolean {
  const grown = after - before;
  return grown >= 0 && grown < (QUIET_BYTES_PER_SECOND * windowMs) / 1000;
}

/**
 * V8's `gc`, reached without a command-line flag: `--expose-gc` set for one new context, which
 * hands the function out, then unset; the server's own context never gets a `gc` global.
 */
function v8Gc(): Gc {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as Gc;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * One memory-reducing collection now: the young generation shrunk, the old one compacted (blocks
 * the event loop: about 0.1 to 0.5 s on this machine).
 */
export function collectGarbage(gc: Gc = v8Gc()): Collection {
  const started = performance.now();
  const heapBeforeMiB = mib(getHeapStatistics().total_heap_size);
  // What V8's memory-reducing collection does and Node.js 20 cannot ask for: move the live
  // objects of start-up's half-empty pages together, so that those pages are freed (about 10 MiB).
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    // Node.js 20 (V8 11): a full collection, which shrinks the young generation when the
    // allocation rate since the last collection was low; a background thread unmaps the pages
    // seconds later. V8 11 reads the options below as a young collection: next to nothing to do.
    gc();
    // Node.js 22 and 24 (V8 12, 13): a full collection keeps the freed pages in a pool; the "last
    // resort" flavour is the memory-reducing one, which returns them to the system.
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
  return { heapBeforeMiB, heapAfterMiB: mib(getHeapStatistics().total_heap_size), ms: Math.round(performance.now() - started) };
}

/** Watches the heap from now on; collects once, at the end of the first quiet window. */
export function collectWhenQuiet(log: Logger, windowMs = QUIET_WINDOW_MS): { stop(): void } {
  const gc = v8Gc();
  const since = Date.now();
  const startWindow = (): number => {
    gc({ type: 'minor' }); // a few milliseconds: the window's start, for V8's rate too
    return getHeapStatistics().used_heap_size;
  };
  let before = startWindow();
  const timer = setInterval(() => {
    if (wasQuiet(before, getHeapStatistics().used_heap_size, windowMs)) {
      clearInterval(timer);
      const c = collectGarbage(gc);
      log.info({ startup_gc: c }, `Quiet after start-up: start-up garbage collected, V8 heap ${c.heapBeforeMiB} -> ${c.heapAfterMiB} MiB in ${c.ms} ms`);
    } else if (Date.now() - since > GIVE_UP_MS) clearInterval(timer);
    else before = startWindow();
  }, windowMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
