/**
 * Sign-ins and failed sign-ins over time by channel, counted from audit entries: the time range
 * cut into at most 48 equal buckets (15 minutes, an hour, 6 hours, a day or a week each).
 */
import type { AuditEntry } from './types.js';

/** The entries a sign-in writes: one that succeeded, and those that refused one. */
export const SIGN_IN_EVENTS = ['USER_LOGIN'] as const;
export const FAILURE_EVENTS = ['FAILED_LOGIN_ATTEMPT', 'LOCKED_LOGIN_ATTEMPT', 'POLICY_VIOLATION', 'RISK_SIGN_IN_REFUSED'] as const;

const MINUTE = 60_000;
const UNITS = [15 * MINUTE, 60 * MINUTE, 6 * 60 * MINUTE, 24 * 60 * MINUTE, 7 * 24 * 60 * MINUTE];
const MAX_BUCKETS = 48;

export interface Bucket {
  start: number;
  /** Per channel (`none` for an entry without one). */
  signIns: Record<string, number>;
  failures: Record<string, number>;
}

export interface ChartData {
  from: number;
  to: number;
  unit: number;
  buckets: Bucket[];
  /** The channels seen, in a stable order: web, mobile, ussd, agent, then any other, then none. */
  channels: string[];
}

const ORDER = ['web', 'mobile', 'ussd', 'agent'];

export function chartData(signIns: readonly AuditEntry[], failures: readonly AuditEntry[], from: number, to: number): ChartData {
  const unit = UNITS.find((u) => (to - from) / u <= MAX_BUCKETS) ?? UNITS.at(-1)!;
  const count = Math.max(1, Math.ceil((to - from) / unit));
  const buckets: Bucket[] = Array.from({ length: count }, (_, i) => ({ start: from + i * unit, signIns: {}, failures: {} }));
  const seen = new Set<string>();
  const add = (entries: readonly AuditEntry[], kind: 'signIns' | 'failures') => {
    for (const e of entries) {
      const at = Date.parse(e.timestamp);
      if (at < from || at >= to) continue;
      const channel = e.channel ?? 'none';
      seen.add(channel);
      const bucket = buckets[Math.min(count - 1, Math.floor((at - from) / unit))]!;
      bucket[kind][channel] = (bucket[kind][channel] ?? 0) + 1;
    }
  };
  add(signIns, 'signIns');
  add(failures, 'failures');
  const rank = (c: string) => (c === 'none' ? 99 : ORDER.includes(c) ? ORDER.indexOf(c) : 50);
  const channels = [...seen].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return { from, to, unit, buckets, channels };
}

export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
