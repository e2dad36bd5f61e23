/**
 * The erasure ledger: what makes an erasure survive a restore. A database backup taken before
 * an erasure holds the person whole; restored, it would bring them back. The bank must then put
 * them beyond use again, and it can only do so if it knows, outside the database, who was
 * erased. The ledger is that list: one JSON line per erased account, with the account's uuid,
 * when the erasure was requested and when it was applied. It holds nothing that identifies the
 * person beyond the uuid the kept records (the pseudonymised audit trail, the tombstone) carry
 * anyway, so it can be kept with the backups' own retention, apart from them.
 *
 * Re-applying it to a restored database erases, now, every listed account that exists there and
 * is not erased, with the job's own registry-driven erasure (no grace period: the person's
 * request and its grace period are behind them). Already erased accounts are left alone, so
 * re-applying twice changes nothing the second time. A uuid the database does not have is
 * counted and listed (an account created after the backup was taken, or a ledger of another
 * database). A legal hold does not stop it: a hold recorded after the backup is not in the
 * restored database, and a hold that is in it is older than the erasure the ledger lists, so it
 * was released before that erasure was applied.
 */
import { lockUserRow, type UserStore } from '../../users/store.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { ErasureJob } from './job.js';
import type { ErasureStore } from './store.js';

/** One line of the ledger. */
export interface LedgerEntry {
  /** The account's uuid. */
  user_id: string;
  /** When the person asked (ISO 8601, UTC). */
  requested_at: string;
  /** When the erasure was applied (ISO 8601, UTC). */
  erased_at: string;
}

/** A line of a ledger file that is not a ledger entry: `line` is its number, from 1. */
export class LedgerLineError extends Error {
  constructor(readonly line: number, readonly reason: string) {
    super(`line ${line}: ${reason}`);
    this.name = 'LedgerLineError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 instant with its offset, whose date exists (Date alone turns February 30 into March 2). */
function parseInstant(v: unknown): Date {
  const m = typeof v === 'string' ? INSTANT.exec(v) : null;
  if (!m) return new Date(NaN);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d ? new Date(v as string) : new Date(NaN);
}

function instant(o: Record<string, unknown>, key: string, line: number): Date {
  const v = o[key];
  const at = parseInstant(v);
  if (Number.isNaN(at.getTime())) throw new LedgerLineError(line, `"${key}" must be an instant such as 2026-03-01T10:00:00.000Z (got ${JSON.stringify(v) ?? 'nothing'})`);
  return at;
}

/**
 * One line of a ledger: the entry, or null for a blank line. Keys other than the three are
 * ignored, so that a ledger written by a later release can be read by an earlier one.
 */
export function parseLedgerLine(text: string, line: number): LedgerEntry | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    throw new LedgerLineError(line, 'not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new LedgerLineError(line, 'not a JSON object');
  const o = value as Record<string, unknown>;
  if (typeof o.user_id !== 'string' || !UUID.test(o.user_id)) throw new LedgerLineError(line, `"user_id" must be an account's uuid (got ${JSON.stringify(o.user_id) ?? 'nothing'})`);
  const requested = instant(o, 'requested_at', line);
  const erased = instant(o, 'erased_at', line);
  if (requested > erased) throw new LedgerLineError(line, '"requested_at" is after "erased_at"');
  return { user_id: o.user_id.toLowerCase(), requested_at: requested.toISOString(), erased_at: erased.toISOString() };
}

/** A whole ledger file (JSON lines; blank lines skipped); the first malformed line throws, naming its number. */
export function parseLedger(text: string): LedgerEntry[] {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  const out: LedgerEntry[] = [];
  lines.forEach((l, i) => {
    const e = parseLedgerLine(l, i + 1);
    if (e) out.push(e);
  });
  return out;
}

export interface ReapplyReport {
  /** Distinct accounts the ledger lists. */
  accounts: number;
  /** Erased now. */
  erased: string[];
  /** Of those, the ones whose pending request was under a legal hold in the restored database. */
  heldInBackup: string[];
  alreadyErased: number;
  /** Uuids this database does not have. */
  unknown: string[];
  /** Tables the erasures changed (vacuumed afterwards). */
  touched: string[];
}

type Outcome = { kind: 'erased'; held: boolean; counts: Record<string, number> } | { kind: 'already erased' } | { kind: 'unknown' };

export interface ErasureLedgerDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  store: ErasureStore;
  job: ErasureJob;
}

const PAGE = 1000;

export class ErasureLedger {
  constructor(private readonly d: ErasureLedgerDeps) {}

  /** Every erased account, in the order the erasures were applied; with `since`, those applied at or after it. */
  async *entries(since: Date | null = null): AsyncGenerator<LedgerEntry> {
    let after: { at: Date; id: string } | null = null;
    for (;;) {
      const rows = await this.d.store.erasedPage(since, after, PAGE);
      for (const r of rows) yield { user_id: r.user_uuid, requested_at: new Date(r.requested_at).toISOString(), erased_at: new Date(r.ended_at!).toISOString() };
      if (rows.length < PAGE) return;
      const last = rows[rows.length - 1]!;
      after = { at: new Date(last.ended_at!), id: last.id };
    }
  }

  /**
   * Re-applies `entries` (already parsed and checked whole): each account in its own
   * transaction, as the job erases; then the touched tables are vacuumed. `by` names who ran it,
   * for the audit trail.
   */
  async reapply(entries: readonly LedgerEntry[], by: string): Promise<ReapplyReport> {
    const byAccount = new Map<string, LedgerEntry>();
    for (const e of entries) if (!byAccount.has(e.user_id)) byAccount.set(e.user_id, e);
    const report: ReapplyReport = { accounts: byAccount.size, erased: [], heldInBackup: [], alreadyErased: 0, unknown: [], touched: [] };
    const touched = new Set<string>();
    for (const e of byAccount.values()) {
      const out = await this.d.db.transaction().execute((trx) => this.reapplyOne(trx, e, by));
      if (out.kind === 'unknown') report.unknown.push(e.user_id);
      else if (out.kind === 'already erased') report.alreadyErased++;
      else {
        report.erased.push(e.user_id);
        if (out.held) report.heldInBackup.push(e.user_id);
        for (const [table, n] of Object.entries(out.counts)) if (n > 0) touched.add(table);
      }
    }
    report.touched = [...touched].sort();
    await this.d.job.vacuumAfter(touched);
    return report;
  }

  private async reapplyOne(trx: Db, e: LedgerEntry, by: string): Promise<Outcome> {
    const d = this.d;
    const found = await trx.selectFrom('users').select('id').where('uuid', '=', e.user_id).executeTakeFirst();
    if (!found) return { kind: 'unknown' };
    // The job's lock order: the pending request (which the job claims first), then the account.
    const pending = await d.store.lockPending(trx, found.id);
    await lockUserRow(trx, found.id);
    const state = await trx.selectFrom('users').select('erased_at').where('id', '=', found.id).executeTakeFirstOrThrow();
    if (state.erased_at !== null) return { kind: 'already erased' };
    const user = (await d.users.findById(found.id, trx))!;
    const now = new Date(d.clock.now());
    const counts = await d.job.eraseAccount(trx, user, now);
    const request = pending
      ? (await d.store.end(trx, pending.id, 'erased', 'ledger', now, counts))!
      : await d.store.insertErased(trx, { userId: user.id, userUuid: user.uuid, requestedAt: new Date(e.requested_at), erasedBefore: new Date(e.erased_at), at: now, via: 'ledger', counts });
    await d.job.recordErased(trx, user, { id: request.id, requestedAt: new Date(request.requested_at) }, counts, now, {
      via: 'ledger', reapplied: 'erasure re-applied from the erasure ledger after a database restore', ledger_erased_at: e.erased_at, by,
      ...(pending?.held_at != null ? { held_in_backup_since: new Date(pending.held_at).toISOString() } : {}),
    });
    return { kind: 'erased', held: pending?.held_at != null, counts };
  }
}
