/**
 * The audit trail counted over time: sign-ins, failed sign-ins, account locks and security alerts
 * raised, per time bucket (an hour or a day, UTC) and channel, in one grouped query on the
 * `(event_type, timestamp)` index, for the operator console's charts. Exact however busy the
 * range; bounded so that one request reads at most 31 days by hour, 400 days by day.
 */
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { AuditEvent } from './service.js';
import { AuditErrors } from './errors.js';

/** What each count is made of. */
export const SUMMARY_EVENTS = {
  sign_ins: ['USER_LOGIN'],
  failed_sign_ins: ['FAILED_LOGIN_ATTEMPT', 'LOCKED_LOGIN_ATTEMPT', 'POLICY_VIOLATION', 'RISK_SIGN_IN_REFUSED'],
  account_locks: ['ACCOUNT_LOCKED'],
  alerts_raised: ['SECURITY_ALERT_RAISED'],
} as const satisfies Record<string, readonly AuditEvent[]>;
export type SummaryKind = keyof typeof SUMMARY_EVENTS;
export const SUMMARY_KINDS = Object.keys(SUMMARY_EVENTS) as SummaryKind[];

export const BUCKETS = ['hour', 'day'] as const;
export type Bucket = (typeof BUCKETS)[number];
/** The longest range each bucket reads, in days. */
export const MAX_DAYS: Record<Bucket, number> = { hour: 31, day: 400 };
const DAY = 86_400_000;

export interface SummaryQuery {
  /** ISO 8601, inclusive; default: a day before `to`. */
  from?: string;
  /** ISO 8601, exclusive; default: now. */
  to?: string;
  bucket: Bucket;
  userId?: string;
  channel?: string;
  country?: string;
}

export type Counts = Record<SummaryKind, number>;

export interface SummaryRow extends Counts {
  /** The bucket's start (UTC), ISO 8601. */
  start: string;
  /** null: entries written without a channel. */
  channel: string | null;
}

export interface Summary {
  from: string;
  to: string;
  bucket: Bucket;
  /** Only buckets and channels with something counted, by start then channel. */
  rows: SummaryRow[];
  totals: Counts;
}

const zero = (): Counts => ({ sign_ins: 0, failed_sign_ins: 0, account_locks: 0, alerts_raised: 0 });

export class AuditSummary {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /** The range a query reads: its defaults filled in, refused when empty, reversed or too long for its bucket. */
  range(q: Pick<SummaryQuery, 'from' | 'to' | 'bucket'>): { from: Date; to: Date } {
    const to = q.to === undefined ? this.deps.clock.now() : Date.parse(q.to);
    const from = q.from === undefined ? to - DAY : Date.parse(q.from);
    const maxDays = MAX_DAYS[q.bucket];
    if (!(from < to) || to - from > maxDays * DAY) {
      throw AuditErrors.AUDIT_SUMMARY_RANGE_INVALID({ bucket: q.bucket, max_days: maxDays, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
    }
    return { from: new Date(from), to: new Date(to) };
  }

  async summarise(q: SummaryQuery): Promise<Summary> {
    const { from, to } = this.range(q);
    const events = SUMMARY_KINDS.flatMap((k) => SUMMARY_EVENTS[k]);
    // Entries kept past their month under a legal hold count as the others do.
    let base = this.deps.db.selectFrom((d) => d.selectFrom('audit_log').select(['event_type', 'timestamp', 'channel', 'user_id', 'location'])
      .unionAll(d.selectFrom('audit_log_held').select(['event_type', 'timestamp', 'channel', 'user_id', 'location'])).as('a'))
      .where('event_type', 'in', events)
      .where('timestamp', '>=', from)
      .where('timestamp', '<', to);
    if (q.userId !== undefined) base = base.where('user_id', '=', q.userId);
    if (q.channel !== undefined) base = base.where('channel', '=', q.channel);
    if (q.country !== undefined) base = base.where(sql<string>`location->>'country'`, '=', q.country);
    const unit = sql.raw(q.bucket === 'hour' ? "'hour'" : "'day'");
    const start = sql<string>`to_char(date_trunc(${unit}, timestamp AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS".000Z"')`;
    const count = (kind: SummaryKind) => sql<number>`(count(*) FILTER (WHERE event_type IN (${sql.join(SUMMARY_EVENTS[kind].map((e) => sql.lit(e)))})))::int`.as(kind);
    const rows = await base.select([start.as('start'), 'channel', ...SUMMARY_KINDS.map(count)])
      .groupBy([sql`1`, 'channel']).orderBy(sql`1`).orderBy('channel').execute();
    const totals = zero();
    for (const r of rows) for (const k of SUMMARY_KINDS) totals[k] += r[k];
    return { from: from.toISOString(), to: to.toISOString(), bucket: q.bucket, rows: rows.map((r) => ({ ...r, channel: r.channel ?? null })), totals };
  }
}
