/**
 * The breach register's tables (migration 037). Recording a breach is one transaction: the record,
 * its affected accounts found in the audit trail (scope.ts), and its pending notices. Notices are
 * claimed by one conditional `UPDATE ... FOR UPDATE SKIP LOCKED` before anything is sent.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { BreachesTable, BreachNoticesTable } from '../../platform/db/schema.js';
import { insertAffected, type BreachScope } from './scope.js';

export type BreachRow = Selectable<BreachesTable>;
export type NoticeState = BreachNoticesTable['state'];
export const NOTICE_STATES: readonly NoticeState[] = ['pending', 'sending', 'sent', 'failed', 'no_contact'];

export interface NewBreach {
  occurredFrom: Date;
  occurredTo: Date;
  awareAt: Date;
  deadlineAt: Date;
  categories: string[];
  scope: BreachScope;
  description: string;
  consequences: string;
  measures: string;
  contactPoint: string;
  notifySubjects: boolean;
  recordedBy: string;
  recordedAt: Date;
}

export interface ClaimedNotice {
  id: string;
  breach_id: string;
  user_id: number;
  channel: 'email' | 'sms';
  attempts: number;
}

export class BreachStore {
  constructor(private readonly db: Db) {}

  /** Inserts the record; returns its id. */
  async insert(trx: Db, b: NewBreach): Promise<string> {
    const row = await trx.insertInto('breaches').values({
      occurred_from: b.occurredFrom, occurred_to: b.occurredTo, aware_at: b.awareAt, deadline_at: b.deadlineAt,
      categories: JSON.stringify(b.categories), scope: JSON.stringify(b.scope), description: b.description,
      consequences: b.consequences, measures: b.measures, contact_point: b.contactPoint, notify_subjects: b.notifySubjects,
      affected_count: 0, records_count: 0, recorded_by: b.recordedBy, recorded_at: b.recordedAt,
    }).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  /** Stores the affected accounts (at most `cap + 1`); returns how many and how many audit entries matched. */
  async findAffected(trx: Db, id: string, b: NewBreach, cap: number): Promise<{ accounts: number; records: number }> {
    const inserted = insertAffected(id, b.occurredFrom, b.occurredTo, b.scope, cap);
    const r = await sql<{ accounts: number; records: string | null }>`
      WITH ins AS (${inserted}) SELECT count(*)::int AS accounts, sum(events)::bigint AS records FROM ins`.execute(trx);
    const row = r.rows[0];
    return { accounts: row?.accounts ?? 0, records: Number(row?.records ?? 0) };
  }

  async setCounts(trx: Db, id: string, accounts: number, records: number): Promise<void> {
    await trx.updateTable('breaches').set({ affected_count: accounts, records_count: records }).where('id', '=', id).execute();
  }

  /** One pending notice per affected account and channel. */
  async queueNotices(trx: Db, id: string, now: Date): Promise<void> {
    await sql`
      INSERT INTO breach_notices (breach_id, user_id, channel, state, not_before)
      SELECT a.breach_id, a.user_id, c.channel, 'pending', ${now}
      FROM breach_affected a CROSS JOIN (VALUES ('email'), ('sms')) AS c(channel)
      WHERE a.breach_id = ${id}::uuid`.execute(trx);
  }

  async get(id: string, trx: Db = this.db): Promise<BreachRow | undefined> {
    return trx.selectFrom('breaches').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Newest first. */
  async list(limit: number, offset: number): Promise<{ total: number; rows: BreachRow[] }> {
    const counted = await this.db.selectFrom('breaches').select(sql<number>`count(*)::int`.as('n')).executeTakeFirst();
    const rows = await this.db.selectFrom('breaches').selectAll().orderBy('recorded_at', 'desc').orderBy('id').limit(limit).offset(offset).execute();
    return { total: counted?.n ?? 0, rows };
  }

  /** Records the report to the authority, once, while the breach is open; false when it is not. */
  async report(trx: Db, id: string, at: Date, by: string, reference: string): Promise<boolean> {
    const r = await trx.updateTable('breaches').set({ reported_at: at, reported_by: by, authority_reference: reference })
      .where('id', '=', id).where('reported_at', 'is', null).where('closed_at', 'is', null).executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async close(trx: Db, id: string, at: Date, by: string, note: string): Promise<boolean> {
    const r = await trx.updateTable('breaches').set({ closed_at: at, closed_by: by, closing_note: note })
      .where('id', '=', id).where('closed_at', 'is', null).executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** How many notices of the breach are in each state, and when the first and last were sent. */
  async noticeSummary(id: string): Promise<{ counts: Record<NoticeState, number>; firstSent: Date | null; lastSent: Date | null }> {
    const rows = await this.db.selectFrom('breach_notices').select(['state', sql<number>`count(*)::int`.as('n'), sql<Date | null>`min(done_at)`.as('first'), sql<Date | null>`max(done_at)`.as('last')])
      .where('breach_id', '=', id).groupBy('state').execute();
    const counts = Object.fromEntries(NOTICE_STATES.map((s) => [s, 0])) as Record<NoticeState, number>;
    for (const r of rows) counts[r.state] = r.n;
    const sent = rows.find((r) => r.state === 'sent');
    return { counts, firstSent: sent?.first ? new Date(sent.first) : null, lastSent: sent?.last ? new Date(sent.last) : null };
  }

  /** A page of the affected accounts, by account id, with each one's notice states. */
  async affected(id: string, limit: number, offset: number) {
    return this.db.selectFrom('breach_affected as a').innerJoin('users as u', 'u.id', 'a.user_id')
      .select(['u.uuid', 'u.username', 'a.events',
        sql<NoticeState | null>`(SELECT state FROM breach_notices n WHERE n.breach_id = a.breach_id AND n.user_id = a.user_id AND n.channel = 'email')`.as('email'),
        sql<NoticeState | null>`(SELECT state FROM breach_notices n WHERE n.breach_id = a.breach_id AND n.user_id = a.user_id AND n.channel = 'sms')`.as('sms')])
      .where('a.breach_id', '=', id).orderBy('a.user_id').limit(limit).offset(offset).execute();
  }

  /** The deadline of the earliest open, unreported breach, and how many there are. */
  async unreported(): Promise<{ count: number; earliest: Date | null }> {
    const r = await this.db.selectFrom('breaches').select([sql<number>`count(*)::int`.as('n'), sql<Date | null>`min(deadline_at)`.as('earliest')])
      .where('reported_at', 'is', null).where('closed_at', 'is', null).executeTakeFirst();
    return { count: r?.n ?? 0, earliest: r?.earliest ? new Date(r.earliest) : null };
  }

  /** Claims up to `limit` due notices: each is claimed by one caller only, whoever runs at once. */
  async claim(now: Date, limit: number): Promise<ClaimedNotice[]> {
    const r = await sql<ClaimedNotice>`
      UPDATE breach_notices SET state = 'sending', claimed_at = ${now}, attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM breach_notices WHERE state = 'pending' AND not_before <= ${now}
        ORDER BY not_before LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ) AND state = 'pending'
      RETURNING id, breach_id, user_id, channel, attempts`.execute(this.db);
    return r.rows;
  }

  /** Ends a claimed notice (only while it is still claimed). */
  async finish(id: string, state: 'sent' | 'failed' | 'no_contact', now: Date, reason: string | null): Promise<void> {
    await this.db.updateTable('breach_notices').set({ state, done_at: now, reason }).where('id', '=', id).where('state', '=', 'sending').execute();
  }

  /** Puts a claimed notice back to be tried again at `notBefore` (the transport refused it: nothing was sent). */
  async retryLater(id: string, notBefore: Date, reason: string): Promise<void> {
    await this.db.updateTable('breach_notices').set({ state: 'pending', not_before: notBefore, claimed_at: null, reason }).where('id', '=', id).where('state', '=', 'sending').execute();
  }

  /**
   * Notices claimed before `before` and never finished (the node stopped mid-send): failed as
   * `interrupted`, never sent again, since the message may have gone out. Returns how many.
   */
  async failStale(before: Date, now: Date): Promise<number> {
    const r = await this.db.updateTable('breach_notices').set({ state: 'failed', done_at: now, reason: 'interrupted' })
      .where('state', '=', 'sending').where('claimed_at', '<', before).executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
}
