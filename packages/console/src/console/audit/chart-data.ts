/**
 * The charts' numbers, from GET /api/v1/admin/audit/summary (exact, counted by the server per
 * hour or day and channel): the time range cut into at most about 48 bars of an hour, 6 hours, a
 * day or a week, each the sum of the server's buckets that start in it.
 */
import type { AuditFilters } from './types.js';

/** What the server counts (`SUMMARY_EVENTS` in src/audit/summary.ts says which events make each). */
export const KINDS = ['sign_ins', 'failed_sign_ins', 'account_locks', 'alerts_raised'] as const;
export type Kind = (typeof KINDS)[number];

/** The route's answer. */
export interface AuditSummary {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  rows: ({ start: string; channel: string | null } & Record<Kind, number>)[];
  totals: Record<Kind, number>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
const UNITS = [HOUR, 6 * HOUR, DAY, WEEK];
const MAX_BARS = 48;
/** 1970-01-01 was a Thursday: weeks start on the Monday after. */
const MONDAY = 4 * DAY;

export interface Bucket {
  start: number;
  /** Per kind, per channel (`none` for entries without one). */
  counts: Record<Kind, Record<string, number>>;
}

export interface ChartData {
  from: number;
  to: number;
  unit: number;
  buckets: Bucket[];
  /** The channels seen, in a stable order: web, mobile, ussd, agent, then any other, then none. */
  channels: string[];
}

/** The bar width for a range, and the server's bucket it is made of. */
export function unitFor(from: number, to: number): { unit: number; bucket: 'hour' | 'day' } {
  const unit = UNITS.find((u) => (to - from) / u <= MAX_BARS) ?? WEEK;
  return { unit, bucket: unit < DAY ? 'hour' : 'day' };
}

/** The summary route's address for the chart of these filters over [from, to). */
export function summaryPath(f: Pick<AuditFilters, 'userId' | 'channel' | 'country'>, from: number, to: number): string {
  const q = new URLSearchParams({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), bucket: unitFor(from, to).bucket });
  if (f.userId) q.set('user_id', f.userId);
  if (f.channel) q.set('channel', f.channel);
  if (f.country) q.set('country', f.country);
  return `/api/v1/admin/audit/summary?${q}`;
}

const ORDER = ['web', 'mobile', 'ussd', 'agent'];
const empty = (): Record<Kind, Record<string, number>> => ({ sign_ins: {}, failed_sign_ins: {}, account_locks: {}, alerts_raised: {} });

export function chartData(summary: AuditSummary): ChartData {
  const from = Date.parse(summary.from);
  const to = Date.parse(summary.to);
  const { unit } = unitFor(from, to);
  const offset = unit === WEEK ? MONDAY : 0;
  const first = Math.floor((from - offset) / unit) * unit + offset;
  const count = Math.max(1, Math.ceil((to - first) / unit));
  const buckets: Bucket[] = Array.from({ length: count }, (_, i) => ({ start: first + i * unit, counts: empty() }));
  const seen = new Set<string>();
  for (const row of summary.rows) {
    const i = Math.min(count - 1, Math.max(0, Math.floor((Date.parse(row.start) - first) / unit)));
    const channel = row.channel ?? 'none';
    for (const kind of KINDS) {
      if (row[kind] === 0) continue;
      seen.add(channel);
      const c = buckets[i]!.counts[kind];
      c[channel] = (c[channel] ?? 0) + row[kind];
    }
  }
  const rank = (c: string) => (c === 'none' ? 99 : ORDER.includes(c) ? ORDER.indexOf(c) : 50);
  const channels = [...seen].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return { from, to, unit, buckets, channels };
}

export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
