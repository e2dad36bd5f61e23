/**
 * Security alerts as records (issue 29, section 3). Anything that detects something raises an
 * alert with `raise(db, input)`: it is recorded once per dedupe key, however many nodes see the
 * event, audited (`SECURITY_ALERT_RAISED`), and its deliveries to the security team (email,
 * webhook: those configured, for alerts at or above SECURITY_ALERT_MIN_SEVERITY) are queued in the
 * same transaction, so an alert exists exactly when its deliveries do. Administrators list them,
 * read one with the audit trail around it, acknowledge and resolve them; each change audited.
 */
import type { AuditContext, AuditEntry, AuditLog } from '../../audit/service.js';
import type { Clock } from '../../platform/clock.js';
import type { AlertsConfig } from '../../platform/config-alerts.js';
import { uuidV7 } from '../../platform/crypto/uuid-v7.js';
import type { Db } from '../../platform/db/database.js';
import { ALERT_SEVERITIES, type AlertInput } from '../types.js';
import { AlertErrors as E } from './errors.js';
import { alertDocument } from './message.js';
import { AlertStore, type AlertFilter, type AlertRow, type DeliveryChannel, type DeliveryRow } from './store.js';

/** The audit trail shown around an alert: the account's entries this long before and after it. */
export const TRAIL_WINDOW_MS = 30 * 60_000;
/** The most entries of that trail one view shows (`audit_trail.truncated` past it). */
export const TRAIL_MAX = 200;

const RULE = /^[a-z][a-z0-9_.-]{0,63}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEDUPE_MAX = 200;

export interface Operator {
  uuid: string;
  username: string;
}

export interface AlertServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: AlertsConfig;
  /** Called once per alert recorded (the metric). */
  onRaised?: (rule: string, severity: AlertInput['severity']) => void;
}

/** What is wrong with an alert input (a caller's bug, never a client's): the first problem, or null. */
export function inputProblem(i: AlertInput): string | null {
  if (!RULE.test(i.rule)) return `rule must be lower-case letters, digits, "_", "." or "-", at most 64 (got ${JSON.stringify(i.rule)})`;
  if (!ALERT_SEVERITIES.includes(i.severity)) return `severity must be one of ${ALERT_SEVERITIES.join(', ')}`;
  if (typeof i.dedupeKey !== 'string' || i.dedupeKey.length === 0 || i.dedupeKey.length > DEDUPE_MAX) return `dedupeKey must be 1 to ${DEDUPE_MAX} characters`;
  if (i.userId !== null && !UUID.test(i.userId)) return 'userId must be the account\'s uuid';
  if (i.auditId !== null && !UUID.test(i.auditId)) return 'auditId must be an audit entry\'s uuid';
  if (i.score !== null && !(Number.isFinite(i.score) && i.score >= 0 && i.score <= 100)) return 'score must be 0 to 100';
  return null;
}

/** An alert just recorded, as `onRecorded` listeners hear of it. */
export interface RecordedAlert {
  id: string;
  rule: string;
  severity: AlertInput['severity'];
  /** The account's uuid; null for an alert about no single account. */
  userUuid: string | null;
  channel: string | null;
  createdAt: number;
}

/**
 * Told of each alert recorded, with the `db` it was recorded in: a caller's transaction may still
 * roll back, so a listener that reads or writes outside it waits until the alert is visible. Must
 * not throw nor block (run the work in the background); except that, when `db` is a transaction,
 * it may return a promise of work written in it (awaited before `raise` returns, so it stands or
 * falls with the alert). That work must not fail the transaction (a savepoint).
 */
export type AlertListener = (alert: RecordedAlert, db: Db) => void | Promise<void>;

export class AlertService {
  readonly store: AlertStore;
  private readonly listeners: AlertListener[] = [];

  constructor(private readonly deps: AlertServiceDeps) {
    this.store = new AlertStore(deps.db);
  }

  /** Adds a listener told of every alert recorded on this node (the real-time channel tells the account holder). */
  onRecorded(listener: AlertListener): void {
    this.listeners.push(listener);
  }

  /** The channels an alert of this severity goes to: those configured, when it reaches SECURITY_ALERT_MIN_SEVERITY. */
  channelsFor(severity: AlertInput['severity']): DeliveryChannel[] {
    const c = this.deps.config;
    if (ALERT_SEVERITIES.indexOf(severity) < ALERT_SEVERITIES.indexOf(c.minSeverity)) return [];
    return [...(c.emails.length > 0 ? ['email' as const] : []), ...(c.webhook ? ['webhook' as const] : [])];
  }

  /**
   * Records the alert unless one with its dedupe key exists, and queues its deliveries, in
   * `db`'s transaction when it is one (the alert then stands or falls with the caller's change),
   * else in a transaction of its own. Returns the new alert's id, or null when the key was known
   * (another node, or an earlier call, raised it: nothing is done twice).
   */
  async raise(db: Db, input: AlertInput): Promise<string | null> {
    const problem = inputProblem(input);
    if (problem !== null) throw new Error(`AlertService.raise: ${problem}`);
    const work = async (trx: Db): Promise<string | null> => {
      const now = this.deps.clock.now();
      const id = uuidV7(now);
      const recorded = await this.store.insert(trx, {
        id, dedupeKey: input.dedupeKey, rule: input.rule, severity: input.severity, userUuid: input.userId, auditId: input.auditId,
        channel: input.channel, ipHash: input.ipHash, location: input.location, score: input.score, indicators: input.indicators, createdAt: new Date(now),
      });
      if (!recorded) return null;
      await this.store.queueDeliveries(trx, id, this.channelsFor(input.severity), new Date(now));
      await this.deps.audit.record({
        eventType: 'SECURITY_ALERT_RAISED', status: 'DETECTED', userId: input.userId, channel: input.channel, riskScore: input.score,
        details: { alert_id: id, rule: input.rule, severity: input.severity, ...(input.auditId === null ? {} : { raised_by_audit_id: input.auditId }) },
      }, trx);
      return id;
    };
    const id = db.isTransaction ? await work(db) : await db.transaction().execute(work);
    // Counted once the alert is recorded (with the caller's transaction, just before it commits).
    if (id !== null) this.deps.onRaised?.(input.rule, input.severity);
    if (id !== null) {
      const recorded: RecordedAlert = { id, rule: input.rule, severity: input.severity, userUuid: input.userId, channel: input.channel, createdAt: this.deps.clock.now() };
      for (const l of this.listeners) {
        const inTransaction = l(recorded, db);
        if (inTransaction && db.isTransaction) await inTransaction;
      }
    }
    return id;
  }

  async list(f: AlertFilter) {
    const page = await this.store.list(f);
    return { alerts: page.rows.map(alertView), total: page.total, total_exact: page.totalExact, next_cursor: page.nextCursor };
  }

  /** The alert, its deliveries, and the account's audit trail from 30 minutes before it to 30 minutes after. */
  async view(id: string) {
    const a = await this.found(id);
    const [deliveries, trail] = await Promise.all([this.store.deliveriesOf(id), this.trail(a)]);
    return { ...alertView(a), deliveries: deliveries.map(deliveryView), audit_trail: trail };
  }

  private async trail(a: AlertRow): Promise<{ from: string; to: string; entries: AuditEntry[]; truncated: boolean }> {
    const at = new Date(a.created_at).getTime();
    const from = new Date(at - TRAIL_WINDOW_MS).toISOString();
    const to = new Date(at + TRAIL_WINDOW_MS).toISOString();
    // An alert about no single account (an address failing across many) has no account trail; its audit_id names the entry.
    if (a.user_uuid === null) return { from, to, entries: [], truncated: false };
    const r = await this.deps.audit.query({ userId: a.user_uuid, from, to, limit: TRAIL_MAX, offset: 0 });
    return { from, to, entries: r.entries, truncated: r.nextCursor !== null };
  }

  /** Acknowledges an open alert (someone is looking at it); audited. */
  async acknowledge(id: string, note: string | null, operator: Operator, ctx: AuditContext) {
    await this.transition(id, operator, ctx, 'SECURITY_ALERT_ACKNOWLEDGED', note, (trx, at) => this.store.acknowledge(trx, id, operator.uuid, note, at));
    return this.view(id);
  }

  /** Resolves an open or acknowledged alert, with a note (what was found, what was done); audited. */
  async resolve(id: string, note: string, operator: Operator, ctx: AuditContext) {
    await this.transition(id, operator, ctx, 'SECURITY_ALERT_RESOLVED', note, (trx, at) => this.store.resolve(trx, id, operator.uuid, note, at));
    return this.view(id);
  }

  private async transition(id: string, operator: Operator, ctx: AuditContext, event: 'SECURITY_ALERT_ACKNOWLEDGED' | 'SECURITY_ALERT_RESOLVED', note: string | null,
    change: (trx: Db, at: Date) => Promise<boolean>): Promise<void> {
    const before = await this.found(id);
    await this.deps.db.transaction().execute(async (trx) => {
      // A conditional update: of two administrators acting at once, one changes it, the other gets 409.
      if (!(await change(trx, new Date(this.deps.clock.now())))) throw await this.stateError(id, trx);
      await this.deps.audit.record({
        ...ctx, eventType: event, status: 'SUCCESS', userId: operator.uuid, username: operator.username,
        details: { alert_id: id, rule: before.rule, severity: before.severity, account_id: before.user_uuid, ...(note === null ? {} : { note }) },
      }, trx);
    });
  }

  private async found(id: string): Promise<AlertRow> {
    const row = await this.store.get(id);
    if (!row) throw E.ALERT_NOT_FOUND();
    return row;
  }

  /** Why a transition found nothing to change: resolved, or acknowledged already. */
  private async stateError(id: string, trx: Db): Promise<Error> {
    const row = (await this.store.get(id, trx))!;
    if (row.state === 'resolved') return E.ALERT_RESOLVED({ resolved_at: new Date(row.resolved_at!).toISOString(), resolved_by: row.resolved_by });
    return E.ALERT_ALREADY_ACKNOWLEDGED({ acknowledged_at: new Date(row.acknowledged_at!).toISOString(), acknowledged_by: row.acknowledged_by });
  }
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** An alert as the admin routes answer it. */
export function alertView(a: AlertRow) {
  return {
    ...alertDocument(a),
    acknowledged: a.acknowledged_at === null ? null : { at: iso(a.acknowledged_at)!, by: a.acknowledged_by!, by_username: a.acknowledged_by_username, note: a.acknowledgement_note },
    resolved: a.resolved_at === null ? null : { at: iso(a.resolved_at)!, by: a.resolved_by!, by_username: a.resolved_by_username, note: a.resolution_note! },
  };
}

function deliveryView(d: DeliveryRow) {
  return {
    channel: d.channel, state: d.state, attempts: d.attempts, last_error: d.last_error,
    next_attempt_at: d.state === 'pending' ? iso(d.next_attempt_at) : null, sent_at: iso(d.sent_at),
  };
}
