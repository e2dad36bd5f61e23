/**
 * The personal-data breach register: an operator records a breach (its window, when the bank
 * became aware, what was exposed, how the affected accounts are found in the audit trail); the
 * accounts are found and listed, their notices queued for the sender (sender.ts), and the
 * 72-hour deadline to notify the supervisory authority runs from the awareness. The report to the
 * authority and the closing are recorded once each. Every change is audited.
 */
import type { AuditContext, AuditLog } from '../../audit/service.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { CommonErrors } from '../../platform/errors.js';
import type { BreachCategory } from './categories.js';
import { BreachErrors as E } from './errors.js';
import { normalisedScope, scopeProblems, type BreachScope, type FieldProblem } from './scope.js';
import { BreachStore, type BreachRow } from './store.js';
import { breachView, listItem, type BreachView } from './view.js';

/** The authority must be notified within 72 hours of the bank becoming aware. */
export const DEADLINE_MS = 72 * 3_600_000;
/** The longest window one breach may cover (the search reads every audit entry in it). */
export const MAX_WINDOW_DAYS = 366;

export interface RecordBreach {
  occurred_from: string;
  occurred_to: string;
  aware_at?: string;
  categories: BreachCategory[];
  scope?: BreachScope;
  description: string;
  consequences: string;
  measures: string;
  contact_point: string;
  notify_subjects: boolean;
}

export interface Operator {
  uuid: string;
  username: string;
}

export interface BreachServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  maxAffected: number;
}

export class BreachService {
  readonly store: BreachStore;

  constructor(private readonly deps: BreachServiceDeps) {
    this.store = new BreachStore(deps.db);
  }

  /** Checks the times and the scope; each problem names its field (422 VALIDATION_ERROR). */
  private validate(input: RecordBreach, now: number): { from: Date; to: Date; aware: Date } {
    const from = new Date(input.occurred_from);
    const to = new Date(input.occurred_to);
    const aware = input.aware_at === undefined ? new Date(now) : new Date(input.aware_at);
    const problems: FieldProblem[] = [];
    const problem = (field: string, message: string) => problems.push({ location: 'body', field, message });
    if (to.getTime() <= from.getTime()) problem('occurred_to', 'must be after occurred_from');
    else if (to.getTime() - from.getTime() > MAX_WINDOW_DAYS * 86_400_000) problem('occurred_to', `must be at most ${MAX_WINDOW_DAYS} days after occurred_from`);
    if (to.getTime() > now) problem('occurred_to', 'must not be in the future: the audit trail holds only what has happened');
    if (aware.getTime() > now) problem('aware_at', 'must not be in the future');
    else if (aware.getTime() < from.getTime()) problem('aware_at', 'must not be before occurred_from');
    problems.push(...scopeProblems(input.scope ?? {}));
    if (problems.length > 0) throw CommonErrors.VALIDATION_ERROR({ fields: problems }, { message: `${problems[0]!.field} ${problems[0]!.message}` });
    return { from, to, aware };
  }

  /** Records a breach, finds and lists the affected accounts, queues their notices; audited. */
  async record(input: RecordBreach, operator: Operator, ctx: AuditContext): Promise<BreachView> {
    const d = this.deps;
    const now = d.clock.now();
    const { from, to, aware } = this.validate(input, now);
    const breach = {
      occurredFrom: from, occurredTo: to, awareAt: aware, deadlineAt: new Date(aware.getTime() + DEADLINE_MS),
      categories: [...new Set(input.categories)], scope: normalisedScope(input.scope ?? {}), description: input.description,
      consequences: input.consequences, measures: input.measures, contactPoint: input.contact_point,
      notifySubjects: input.notify_subjects, recordedBy: operator.uuid, recordedAt: new Date(now),
    };
    const id = await d.db.transaction().execute(async (trx) => {
      const id = await this.store.insert(trx, breach);
      const found = await this.store.findAffected(trx, id, breach, d.maxAffected);
      if (found.accounts > d.maxAffected) throw E.BREACH_SCOPE_TOO_BROAD({ max_affected: d.maxAffected });
      await this.store.setCounts(trx, id, found.accounts, found.records);
      if (breach.notifySubjects) await this.store.queueNotices(trx, id, new Date(now));
      await d.audit.record({
        ...ctx, eventType: 'BREACH_RECORDED', status: 'SUCCESS', userId: operator.uuid, username: operator.username,
        details: {
          breach_id: id, categories: breach.categories, occurred_from: from.toISOString(), occurred_to: to.toISOString(),
          aware_at: aware.toISOString(), scope: breach.scope, affected_accounts: found.accounts, records: found.records, notify_subjects: breach.notifySubjects,
        },
      }, trx);
      return id;
    });
    return this.view(id);
  }

  /** The record a regulator asks for. */
  async view(id: string): Promise<BreachView> {
    const row = await this.found(id);
    return breachView(row, await this.store.noticeSummary(id), this.deps.clock.now());
  }

  async list(page: number, pageSize: number) {
    const { total, rows } = await this.store.list(pageSize, (page - 1) * pageSize);
    const now = this.deps.clock.now();
    return { total, page, page_size: pageSize, breaches: rows.map((r) => listItem(r, now)) };
  }

  async affected(id: string, page: number, pageSize: number) {
    const row = await this.found(id);
    const rows = await this.store.affected(id, pageSize, (page - 1) * pageSize);
    return {
      total: row.affected_count, page, page_size: pageSize,
      accounts: rows.map((r) => ({ user_id: r.uuid, username: r.username, events: r.events, notices: { email: r.email, sms: r.sms } })),
    };
  }

  /** Records that (and when) the authority was notified, with its reference; once. */
  async report(id: string, input: { reported_at?: string; reference: string }, operator: Operator, ctx: AuditContext): Promise<BreachView> {
    const d = this.deps;
    const now = d.clock.now();
    const at = input.reported_at === undefined ? new Date(now) : new Date(input.reported_at);
    const row = await this.found(id);
    if (at.getTime() > now) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'reported_at', message: 'must not be in the future' }] });
    if (at.getTime() < new Date(row.aware_at).getTime()) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'reported_at', message: 'must not be before aware_at' }] });
    await d.db.transaction().execute(async (trx) => {
      if (!(await this.store.report(trx, id, at, operator.uuid, input.reference))) throw await this.stateError(id, trx);
      const late = at.getTime() > new Date(row.deadline_at).getTime();
      await d.audit.record({
        ...ctx, eventType: 'BREACH_REPORTED', status: 'SUCCESS', userId: operator.uuid, username: operator.username,
        details: { breach_id: id, reported_at: at.toISOString(), authority_reference: input.reference, within_deadline: !late },
      }, trx);
    });
    return this.view(id);
  }

  /** Closes the breach, with a note (why, when it was not reported); once. */
  async close(id: string, note: string, operator: Operator, ctx: AuditContext): Promise<BreachView> {
    const d = this.deps;
    await this.found(id);
    await d.db.transaction().execute(async (trx) => {
      if (!(await this.store.close(trx, id, new Date(d.clock.now()), operator.uuid, note))) throw await this.stateError(id, trx);
      const row = (await this.store.get(id, trx))!;
      await d.audit.record({
        ...ctx, eventType: 'BREACH_CLOSED', status: 'SUCCESS', userId: operator.uuid, username: operator.username,
        details: { breach_id: id, reported: row.reported_at !== null },
      }, trx);
    });
    return this.view(id);
  }

  private async found(id: string): Promise<BreachRow> {
    const row = await this.store.get(id);
    if (!row) throw E.BREACH_NOT_FOUND();
    return row;
  }

  /** Why a report or a closing found nothing to change: it is closed, or reported already. */
  private async stateError(id: string, trx: Db): Promise<Error> {
    const row = (await this.store.get(id, trx))!;
    if (row.closed_at !== null) return E.BREACH_CLOSED({ closed_at: new Date(row.closed_at).toISOString() });
    return E.BREACH_ALREADY_REPORTED({ reported_at: new Date(row.reported_at!).toISOString() });
  }
}
