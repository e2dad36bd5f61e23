/** A breach as the routes answer it: the regulator's record, and the list's shorter line. */
import type { BreachCategory } from './categories.js';
import type { BreachScope } from './scope.js';
import type { BreachRow, NoticeState } from './store.js';

export type BreachState = 'open' | 'reported' | 'closed';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export function stateOf(row: BreachRow): BreachState {
  if (row.closed_at !== null) return 'closed';
  return row.reported_at !== null ? 'reported' : 'open';
}

/** The deadline's standing: seconds left while the breach awaits its report (negative once overdue). */
function deadline(row: BreachRow, now: number) {
  const at = new Date(row.deadline_at).getTime();
  const waiting = stateOf(row) === 'open';
  return {
    aware_at: iso(row.aware_at)!,
    deadline_at: iso(row.deadline_at)!,
    seconds_left: waiting ? Math.floor((at - now) / 1000) : null,
    overdue: waiting && now > at,
  };
}

export function listItem(row: BreachRow, now: number) {
  return {
    id: row.id,
    state: stateOf(row),
    occurred_from: iso(row.occurred_from)!,
    occurred_to: iso(row.occurred_to)!,
    ...deadline(row, now),
    categories: row.categories as BreachCategory[],
    affected_accounts: row.affected_count,
    recorded_at: iso(row.recorded_at)!,
    reported_at: iso(row.reported_at),
    closed_at: iso(row.closed_at),
  };
}

export interface NoticeSummary {
  counts: Record<NoticeState, number>;
  firstSent: Date | null;
  lastSent: Date | null;
}

function timeline(row: BreachRow, n: NoticeSummary) {
  const events: Array<{ at: string; event: string }> = [
    { at: iso(row.occurred_from)!, event: 'breach_began' },
    { at: iso(row.occurred_to)!, event: 'breach_ended' },
    { at: iso(row.aware_at)!, event: 'bank_aware' },
    { at: iso(row.recorded_at)!, event: 'recorded' },
    { at: iso(row.deadline_at)!, event: 'authority_deadline' },
  ];
  if (n.firstSent) events.push({ at: n.firstSent.toISOString(), event: 'first_notice_sent' });
  if (n.lastSent) events.push({ at: n.lastSent.toISOString(), event: 'last_notice_sent' });
  if (row.reported_at !== null) events.push({ at: iso(row.reported_at)!, event: 'reported_to_authority' });
  if (row.closed_at !== null) events.push({ at: iso(row.closed_at)!, event: 'closed' });
  return events.sort((a, b) => a.at.localeCompare(b.at));
}

export function breachView(row: BreachRow, notices: NoticeSummary, now: number) {
  return {
    ...listItem(row, now),
    description: row.description,
    consequences: row.consequences,
    measures: row.measures,
    contact_point: row.contact_point,
    scope: row.scope as BreachScope,
    records_concerned: Number(row.records_count),
    notify_subjects: row.notify_subjects,
    notices: notices.counts,
    authority_report: row.reported_at === null ? null : {
      reported_at: iso(row.reported_at)!,
      reference: row.authority_reference!,
      within_deadline: new Date(row.reported_at).getTime() <= new Date(row.deadline_at).getTime(),
    },
    closing_note: row.closing_note,
    recorded_by: row.recorded_by,
    timeline: timeline(row, notices),
  };
}

export type BreachView = ReturnType<typeof breachView>;
