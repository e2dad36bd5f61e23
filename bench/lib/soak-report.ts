/**
 * The figures and verdicts of `npm run soak`: per node and route the requests, errors and the
 * p99 of the first minute after the warm-up against the last minute's; per node the RSS after
 * the warm-up against the end's, and its PostgreSQL connections; the push messages delivered.
 */
import type { CpuUse } from './cpu.js';
import type { LoadCounts } from './soak-load.js';
import { ROUTES, type Recorder, type Route } from './soak-record.js';
import type { Sample } from './soak-watch.js';

export const SOAK_TARGETS = {
  /** p99 of the last minute over the first minute after the warm-up. */
  p99RatioMax: 1.5,
  /** RSS at the end over RSS after the warm-up, minus one. */
  rssGrowthMax: 0.1,
  /** Fewer answers than this in a window: its p99 is not compared (errors are still judged). */
  minAnswers: 10,
} as const;

export interface Windows {
  seconds: number;
  warmupSec: number;
  /** Length of the first and last window ("minute"). */
  windowSec: number;
  /** RSS is the median of the samples over this long, at the end of the warm-up and at the end. */
  rssSpanSec: number;
}

export interface PushOutcome { queued: number; sent: number; failed: number; pending: number; fakeAccepted: number; drainSec: number }

export interface SoakInput {
  rec: Recorder;
  nodeNames: string[];
  samples: Sample[];
  w: Windows;
  /** CPU in the first and last windows; other processes' share of the machine in each window. */
  cpu: { first: CpuUse; last: CpuUse; foreign: number[] };
  pgBound: number;
  counts: LoadCounts;
  push: PushOutcome;
}

export interface RouteRow { node: string; route: Route; requests: number; errors: number; p99First: number; p99Last: number; nFirst: number; nLast: number; ratio: number; met: boolean; examples: string[] }
/** `floorFirst`, `floorSecond`: the lowest RSS in each half after the warm-up (a leak raises what is left after a collection; the garbage collector's saw-tooth does not). */
export interface NodeRow { node: string; rssAfterWarmup: number; rssEnd: number; rssMax: number; growth: number; floorFirst: number; floorSecond: number; pgMax: number; cpuMsPerReqFirst: number; cpuMsPerReqLast: number; met: boolean }

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

const between = (t: number[], ms: number[], from: number, to: number): number[] => ms.filter((_, i) => t[i]! >= from && t[i]! < to);

export function routeRows(x: SoakInput): RouteRow[] {
  const { w } = x;
  const lastFrom = w.seconds - w.windowSec;
  return x.rec.nodes.flatMap((routes, n) => ROUTES.map((route) => {
    const r = routes[route];
    const first = between(r.t, r.ms, w.warmupSec, w.warmupSec + w.windowSec);
    const last = between(r.t, r.ms, lastFrom, w.seconds);
    const p99First = quantile(first, 0.99);
    const p99Last = quantile(last, 0.99);
    const compared = Math.min(first.length, last.length) >= SOAK_TARGETS.minAnswers;
    const ratio = compared ? p99Last / p99First : NaN;
    return { node: x.nodeNames[n]!, route, requests: r.ms.length + r.errors, errors: r.errors, p99First, p99Last, nFirst: first.length, nLast: last.length, ratio, met: r.errors === 0 && (!compared || ratio <= SOAK_TARGETS.p99RatioMax), examples: r.examples };
  }));
}

function requestsBetween(x: SoakInput, n: number, from: number, to: number): number {
  return ROUTES.reduce((sum, route) => sum + x.rec.nodes[n]![route].t.filter((t) => t >= from && t < to).length, 0);
}

export function nodeRows(x: SoakInput): NodeRow[] {
  const { w } = x;
  const rss = (n: number, from: number, to: number): number[] => x.samples.filter((s) => s.t >= from && s.t <= to).map((s) => s.rssMiB[n]!);
  const median = (n: number, from: number, to: number): number => quantile(rss(n, from, to), 0.5);
  const half = (w.warmupSec + w.seconds) / 2;
  return x.nodeNames.map((node, n) => {
    const rssAfterWarmup = median(n, w.warmupSec - w.rssSpanSec, w.warmupSec);
    const rssEnd = median(n, w.seconds - w.rssSpanSec, w.seconds);
    const growth = rssEnd / rssAfterWarmup - 1;
    const cpuMs = (cpu: CpuUse, from: number): number => (1000 * (cpu.sec[`node${n}`] ?? NaN)) / requestsBetween(x, n, from, from + w.windowSec);
    return {
      node, rssAfterWarmup, rssEnd, rssMax: Math.max(...x.samples.map((s) => s.rssMiB[n]!)), growth,
      floorFirst: Math.min(...rss(n, w.warmupSec, half)), floorSecond: Math.min(...rss(n, half, w.seconds)),
      pgMax: Math.max(...x.samples.map((s) => s.pgPerNode[n]!)),
      cpuMsPerReqFirst: cpuMs(x.cpu.first, w.warmupSec), cpuMsPerReqLast: cpuMs(x.cpu.last, w.seconds - w.windowSec),
      met: growth < SOAK_TARGETS.rssGrowthMax,
    };
  });
}

/** p99 per route (both nodes together) in each window of the run, from the first second. */
export function p99ByWindow(x: SoakInput): Array<{ route: Route; p99: number[] }> {
  const buckets = Math.ceil(x.w.seconds / x.w.windowSec);
  return ROUTES.map((route) => {
    const t = x.rec.nodes.flatMap((r) => r[route].t);
    const lat = x.rec.nodes.flatMap((r) => r[route].ms);
    return { route, p99: Array.from({ length: buckets }, (_, b) => quantile(between(t, lat, b * x.w.windowSec, (b + 1) * x.w.windowSec), 0.99)) };
  });
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (c: string[]): string => `| ${c.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((wd) => '-'.repeat(wd + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');
const ms = (n: number): string => (!Number.isFinite(n) ? '-' : `${n >= 100 ? fmt(n) : n >= 10 ? fmt(n, 1) : fmt(n, 2)} ms`);
const verdict = (met: boolean): string => (met ? 'met' : 'NOT MET');

export interface SoakReport {
  routes: RouteRow[];
  nodes: NodeRow[];
  pgMaxTotal: number;
  pgMet: boolean;
  pushMet: boolean;
  loadMet: boolean;
  met: boolean;
  text: string;
}

export function soakReport(x: SoakInput): SoakReport {
  const routes = routeRows(x);
  const nodes = nodeRows(x);
  const pgMaxTotal = Math.max(...x.samples.map((s) => s.pgTotal));
  const pgMet = pgMaxTotal <= x.pgBound;
  const p = x.push;
  const pushMet = p.failed === 0 && p.pending === 0 && p.sent === p.queued && p.fakeAccepted === p.queued;
  const loadMet = x.counts.dropped === 0;
  const { w } = x;
  const first = `${fmt(w.warmupSec)}-${fmt(w.warmupSec + w.windowSec)} s`;
  const last = `${fmt(w.seconds - w.windowSec)}-${fmt(w.seconds)} s`;
  const out: string[] = [];
  out.push(table(['Node', 'Route', 'Requests', 'Errors', `p99 ${first}`, `p99 ${last}`, 'Last/first', 'Verdict'],
    routes.map((r) => [r.node, r.route, fmt(r.requests), fmt(r.errors), `${ms(r.p99First)} (${r.nFirst})`, `${ms(r.p99Last)} (${r.nLast})`, Number.isFinite(r.ratio) ? fmt(r.ratio, 2) : 'too few', verdict(r.met)])));
  out.push('', `Targets: no error; p99 of the last ${fmt(w.windowSec)} s <= ${SOAK_TARGETS.p99RatioMax} x the first ${fmt(w.windowSec)} s after the ${fmt(w.warmupSec)} s warm-up (answers in the window in brackets; with fewer than ${SOAK_TARGETS.minAnswers} the p99 is not compared).`, '');
  out.push(table(['Node', `RSS after warm-up`, 'RSS at the end', 'Growth', 'RSS max', 'RSS floor, halves', 'PostgreSQL connections (max)', 'CPU/request first, last', 'Verdict'],
    nodes.map((n) => [n.node, `${fmt(n.rssAfterWarmup, 1)} MiB`, `${fmt(n.rssEnd, 1)} MiB`, `${n.growth >= 0 ? '+' : ''}${fmt(100 * n.growth, 1)}%`, `${fmt(n.rssMax, 1)} MiB`, `${fmt(n.floorFirst, 1)}, ${fmt(n.floorSecond, 1)} MiB`, fmt(n.pgMax), `${fmt(n.cpuMsPerReqFirst, 2)} ms, ${fmt(n.cpuMsPerReqLast, 2)} ms`, verdict(n.met)])));
  out.push('', `RSS: median of the per-second samples over the last ${fmt(w.rssSpanSec)} s of the warm-up, and of the run; target growth < ${fmt(100 * SOAK_TARGETS.rssGrowthMax)}%. Floor: the lowest sample in each half after the warm-up (no target; the garbage collector's saw-tooth moves the end figure, a leak raises the floor).`);
  out.push(`PostgreSQL connections to the database (pg_stat_activity, every second): max ${pgMaxTotal} over the run, bound ${x.pgBound} (each node's pools and its listener): ${verdict(pgMet)}.`);
  out.push(`Push: ${fmt(p.queued)} messages queued, ${fmt(p.sent)} sent, ${p.failed} failed, ${p.pending} pending ${fmt(p.drainSec, 1)} s after the load; the fake FCM accepted ${fmt(p.fakeAccepted)}: ${verdict(pushMet)}.`);
  out.push(`Load: ${fmt(x.counts.sessions)} sessions, ${x.counts.dropped} arrivals dropped (too many sessions running), ${x.counts.noCustomer} skipped (no customer free): ${verdict(loadMet)}.`);
  out.push(`Other processes used ${fmt(100 * x.cpu.first.foreign)}% of the machine in the first window and ${fmt(100 * x.cpu.last.foreign)}% in the last.`);
  for (const r of routes.filter((rr) => rr.examples.length > 0)) out.push(`Errors, ${r.node} ${r.route}: ${r.examples.join(' | ')}`);
  const series = p99ByWindow(x);
  out.push('', `p99 by ${fmt(w.windowSec)} s window, both nodes (ms); other load: the share of the machine used by processes this run did not start:`);
  const foreign = ['other load', ...series[0]!.p99.map((_, i) => (x.cpu.foreign[i] === undefined ? '-' : `${fmt(100 * x.cpu.foreign[i])}%`))];
  out.push(table(['Route', ...series[0]!.p99.map((_, i) => `${fmt(i * w.windowSec)}-`)], [...series.map((s) => [s.route, ...s.p99.map((v) => ms(v).replace(' ms', ''))]), foreign]));
  const met = routes.every((r) => r.met) && nodes.every((n) => n.met) && pgMet && pushMet && loadMet;
  out.push('', met ? 'Every target met.' : 'NOT MET: see the verdicts above.');
  return { routes, nodes, pgMaxTotal, pgMet, pushMet, loadMet, met, text: out.join('\n') };
}
