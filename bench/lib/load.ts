/**
 * Load generators. `cannon` runs autocannon for fixed requests; `closedLoop` runs N workers that
 * each repeat an async step (an HTTP call with per-worker state, or a bcrypt verify) and counts
 * the steps that complete inside a measuring window that starts after a warm-up, so the ramp-up
 * and the requests cut off at the end do not bias the rate.
 */
import autocannon from 'autocannon';

export interface Rate {
  /** Completed operations per second inside the window. */
  perSec: number;
  ok: number;
  failed: number;
  /** Operations completed during the whole call, warm-up and tail included (for CPU per operation). */
  all: number;
  p50Ms: number;
  p99Ms: number;
  seconds: number;
}

function rateOf(r: autocannon.Result): Rate {
  return { perSec: r['2xx'] / r.duration, ok: r['2xx'], failed: r.non2xx + r.errors, all: r['2xx'] + r.non2xx, p50Ms: r.latency.p50, p99Ms: r.latency.p99, seconds: r.duration };
}

export async function cannon(opts: { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; connections: number; seconds: number; overallRate?: number }): Promise<Rate> {
  return rateOf(await autocannon({ url: opts.url, method: opts.method ?? 'GET', headers: opts.headers, body: opts.body, connections: opts.connections, duration: opts.seconds, overallRate: opts.overallRate }));
}

/**
 * `cannon` with a different body for every request, taken in order from `bodies` (pre-auth
 * envelopes are single-use: the server refuses one it has seen, docs/decisions.md). Taking
 * more bodies than there are fails loudly instead of replaying.
 */
export async function cannonBodies(opts: { url: string; headers?: Record<string, string>; bodies: { next(): string }; connections: number; seconds: number }): Promise<Rate> {
  return rateOf(await autocannon({
    url: opts.url, method: 'POST', headers: opts.headers, connections: opts.connections, duration: opts.seconds,
    requests: [{ setupRequest: (req) => ({ ...req, body: opts.bodies.next() }) }],
  }));
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * `makeWorker(i)` returns the step of worker i: it resolves true on success, false on a failed
 * operation (the worker then stops: a broken token chain cannot go on).
 */
export async function closedLoop(opts: { workers: number; warmupMs: number; seconds: number; makeWorker: (i: number) => () => Promise<boolean> }): Promise<Rate> {
  const start = performance.now();
  const from = start + opts.warmupMs;
  const to = from + opts.seconds * 1000;
  let ok = 0;
  let failed = 0;
  let all = 0;
  const latencies: number[] = [];
  const loop = async (step: () => Promise<boolean>): Promise<void> => {
    while (performance.now() < to) {
      const t0 = performance.now();
      let good = false;
      try {
        good = await step();
      } catch {
        good = false;
      }
      const t1 = performance.now();
      all++;
      if (!good) {
        failed++;
        return;
      }
      if (t1 >= from && t1 <= to) {
        ok++;
        latencies.push(t1 - t0);
      }
    }
  };
  await Promise.all(Array.from({ length: opts.workers }, (_, i) => loop(opts.makeWorker(i))));
  latencies.sort((a, b) => a - b);
  return { perSec: ok / opts.seconds, ok, failed, all, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), seconds: opts.seconds };
}

/** Several measuring windows of one load as one: rates weighted by window length, p50 the median, p99 the worst. */
export function combineRates(rates: Rate[]): Rate {
  const sum = (f: (r: Rate) => number): number => rates.reduce((a, r) => a + f(r), 0);
  const seconds = sum((r) => r.seconds);
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  return {
    perSec: sum((r) => r.perSec * r.seconds) / seconds, ok: sum((r) => r.ok), failed: sum((r) => r.failed), all: sum((r) => r.all),
    p50Ms: median(rates.map((r) => r.p50Ms)), p99Ms: Math.max(...rates.map((r) => r.p99Ms)), seconds,
  };
}
