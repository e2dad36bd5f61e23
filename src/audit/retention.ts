/**
 * Audit retention: the monthly partitions are created ahead of time, and whole months older
 * than the retention period (`AUDIT_RETENTION_MONTHS`) are dropped, except what a legal hold
 * keeps. A hold names a period and, optionally, one user: a hold on a period keeps every month
 * it touches; a hold on a user keeps that user's entries of the period (copied into
 * `audit_log_held` before their month is dropped, and still answered by audit queries). Holds
 * are placed and released by operators (`strongroom audit hold`, `strongroom audit release`);
 * placing, releasing and every dropped month are themselves audited.
 */
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { dropAuditPartition, ensureAuditPartitions, listAuditPartitions, monthStart, type AuditPartition } from './partitions.js';
import type { AuditLog } from './service.js';

/** Months created ahead of the current one, so a month's first write never waits for its partition. */
const MONTHS_AHEAD = 2;

export interface LegalHold {
  id: string;
  reason: string;
  period_from: string;
  period_to: string;
  user_id: string | null;
  created_by: string;
  created_at: string;
  released_at: string | null;
  released_by: string | null;
}

export interface DroppedMonth {
  partition: string;
  from: string | null;
  to: string;
  entries: number;
  kept_under_hold: number;
}

export interface AuditRetentionDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  retentionMonths: number;
}

export class AuditRetention {
  constructor(private readonly deps: AuditRetentionDeps) {}

  /** Creates the partitions of this month and the next ones; returns the names created. */
  ensureMonthsAhead(): Promise<string[]> {
    const now = new Date(this.deps.clock.now());
    return ensureAuditPartitions(this.deps.db, monthStart(now), monthStart(now, MONTHS_AHEAD));
  }

  /** The first instant whose month is kept: every entry before it is past the retention period. */
  cutoff(): Date {
    return monthStart(new Date(this.deps.clock.now()), -this.deps.retentionMonths);
  }

  /**
   * Drops the months wholly before the cutoff that no hold on a period keeps, after copying the
   * entries of held users. `dryRun` only says what would be dropped.
   */
  async prune(opts: { dryRun?: boolean } = {}): Promise<DroppedMonth[]> {
    const cutoff = this.cutoff();
    const holds = await this.holdsInForce();
    const due = (await listAuditPartitions(this.deps.db)).filter((p) => p.to.getTime() <= cutoff.getTime());
    const dropped: DroppedMonth[] = [];
    for (const p of due) {
      const touching = holds.filter((h) => overlaps(p, h));
      if (touching.some((h) => h.user_id === null)) continue;
      const heldUsers = [...new Set(touching.map((h) => h.user_id!))];
      const month: DroppedMonth = { partition: p.name, from: p.from?.toISOString() ?? null, to: p.to.toISOString(), entries: -1, kept_under_hold: -1 };
      if (!opts.dryRun) {
        // The drop and its audit entry commit together.
        await this.deps.db.transaction().execute(async (trx) => {
          const { rows, kept } = await dropAuditPartition(trx, p, heldUsers);
          Object.assign(month, { entries: rows, kept_under_hold: kept });
          await this.deps.audit.record({ eventType: 'AUDIT_MONTH_DROPPED', status: 'SUCCESS', details: { ...month, retention_months: this.deps.retentionMonths } }, trx);
        });
      }
      dropped.push(month);
    }
    return dropped;
  }

  async placeHold(h: { reason: string; from: Date; to: Date; userId: string | null; by: string }): Promise<LegalHold> {
    const row = await this.deps.db.insertInto('audit_legal_holds').values({
      reason: h.reason, period_from: h.from, period_to: h.to, user_id: h.userId, created_by: h.by, created_at: new Date(this.deps.clock.now()),
    }).returningAll().executeTakeFirstOrThrow();
    const hold = toHold(row);
    await this.deps.audit.record({ eventType: 'AUDIT_HOLD_PLACED', status: 'SUCCESS', userId: h.userId, details: { hold_id: hold.id, reason: h.reason, from: hold.period_from, to: hold.period_to, by: h.by } });
    return hold;
  }

  /** Null when no hold in force has this id (never placed, or already released). */
  async releaseHold(id: string, by: string): Promise<LegalHold | null> {
    const row = await this.deps.db.updateTable('audit_legal_holds')
      .set({ released_at: new Date(this.deps.clock.now()), released_by: by })
      .where('id', '=', id).where('released_at', 'is', null)
      .returningAll().executeTakeFirst();
    if (!row) return null;
    const hold = toHold(row);
    await this.deps.audit.record({ eventType: 'AUDIT_HOLD_RELEASED', status: 'SUCCESS', userId: hold.user_id, details: { hold_id: id, by } });
    return hold;
  }

  async holdsInForce(): Promise<LegalHold[]> {
    const rows = await this.deps.db.selectFrom('audit_legal_holds').selectAll().where('released_at', 'is', null).orderBy('created_at').execute();
    return rows.map(toHold);
  }
}

function overlaps(p: AuditPartition, h: LegalHold): boolean {
  const [from, to] = [new Date(h.period_from).getTime(), new Date(h.period_to).getTime()];
  return from < p.to.getTime() && (p.from === null || to > p.from.getTime());
}

function toHold(r: { id: string; reason: string; period_from: Date; period_to: Date; user_id: string | null; created_by: string; created_at: Date; released_at: Date | null; released_by: string | null }): LegalHold {
  const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());
  return {
    id: r.id, reason: r.reason, period_from: iso(r.period_from)!, period_to: iso(r.period_to)!, user_id: r.user_id,
    created_by: r.created_by, created_at: iso(r.created_at)!, released_at: iso(r.released_at), released_by: r.released_by,
  };
}
