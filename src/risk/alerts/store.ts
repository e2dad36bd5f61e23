/**
 * The security alerts' tables (migration 041). An alert is inserted once per dedupe key (`ON
 * CONFLICT DO NOTHING`: the node that loses the race inserts nothing and learns it from the empty
 * `RETURNING`), its deliveries in the same transaction. A delivery is claimed before it is sent
 * by one `UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED)` that stamps it with the
 * claimant's token and a lease; only that token settles it, so a node that overran its lease
 * cannot overwrite what the next claimant recorded.
 */
import { sql, type Selectable } from 'kysely';
import { COUNT_CAP } from '../../audit/service.js';
import type { Db } from '../../platform/db/database.js';
import { purgeInBatches } from '../../platform/db/purge.js';
import type { SecurityAlertDeliveriesTable, SecurityAlertsTable } from '../../platform/db/schema.js';
import { decodeCursor, encodeCursor, isCursorTime } from '../../platform/http/cursor.js';
import type { AlertSeverity } from '../types.js';

export type AlertState = SecurityAlertsTable['state'];
export const ALERT_STATES: readonly AlertState[] = ['open', 'acknowledged', 'resolved'];
export type DeliveryChannel = SecurityAlertDeliveriesTable['channel'];
export type DeliveryState = SecurityAlertDeliveriesTable['state'];

/** An alert with the usernames of its account and of the administrators who acted on it (null: none, or gone). */
export type AlertRow = Selectable<SecurityAlertsTable> & { username: string | null; acknowledged_by_username: string | null; resolved_by_username: string | null };
export type DeliveryRow = Selectable<SecurityAlertDeliveriesTable>;

export interface NewAlert {
  id: string;
  dedupeKey: string;
  rule: string;
  severity: AlertSeverity;
  userUuid: string | null;
  auditId: string | null;
  channel: string | null;
  ipHash: string | null;
  location: unknown;
  score: number | null;
  indicators: unknown[];
  createdAt: Date;
}

export interface AlertFilter {
  state?: AlertState;
  severity?: AlertSeverity;
  rule?: string;
  userUuid?: string;
  from?: string;
  to?: string;
  cursor?: string;
  limit: number;
}

/** A claimed delivery: only `claim_token` may settle it. */
export interface ClaimedDelivery {
  id: string;
  alert_id: string;
  channel: DeliveryChannel;
  attempts: number;
  claim_token: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class AlertStore {
  constructor(private readonly db: Db) {}

  /** Records the alert unless its dedupe key is known; true when this call recorded it. */
  async insert(trx: Db, a: NewAlert): Promise<boolean> {
    const r = await trx.insertInto('security_alerts').values({
      id: a.id, dedupe_key: a.dedupeKey, rule: a.rule, severity: a.severity, user_uuid: a.userUuid, audit_id: a.auditId,
      channel: a.channel, ip_hash: a.ipHash, location: a.location === null ? null : JSON.stringify(a.location), score: a.score,
      indicators: JSON.stringify(a.indicators), state: 'open', created_at: a.createdAt,
    }).onConflict((oc) => oc.column('dedupe_key').doNothing()).returning('id').executeTakeFirst();
    return r !== undefined;
  }

  /** One pending delivery per channel, due now. */
  async queueDeliveries(trx: Db, alertId: string, channels: readonly DeliveryChannel[], now: Date): Promise<void> {
    if (channels.length === 0) return;
    await trx.insertInto('security_alert_deliveries')
      .values(channels.map((channel) => ({ alert_id: alertId, channel, state: 'pending' as const, next_attempt_at: now, created_at: now, updated_at: now })))
      .execute();
  }

  private alerts(trx: Db = this.db) {
    return trx.selectFrom('security_alerts as a')
      .leftJoin('users as u', 'u.uuid', 'a.user_uuid')
      .leftJoin('users as ua', 'ua.uuid', 'a.acknowledged_by')
      .leftJoin('users as ur', 'ur.uuid', 'a.resolved_by')
      .selectAll('a')
      .select(['u.username as username', 'ua.username as acknowledged_by_username', 'ur.username as resolved_by_username']);
  }

  async get(id: string, trx: Db = this.db): Promise<AlertRow | undefined> {
    return this.alerts(trx).where('a.id', '=', id).executeTakeFirst();
  }

  async getMany(ids: readonly string[]): Promise<Map<string, AlertRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.alerts().where('a.id', 'in', [...new Set(ids)]).execute();
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * A page of alerts, newest first, and the cursor of the next (null: the last). `total` counts
   * the matches exactly up to `COUNT_CAP`, like the audit trail's, so a page never waits for a count of a flood.
   */
  async list(f: AlertFilter): Promise<{ rows: AlertRow[]; total: number; totalExact: boolean; nextCursor: string | null }> {
    let q = this.alerts();
    if (f.state !== undefined) q = q.where('a.state', '=', f.state);
    if (f.severity !== undefined) q = q.where('a.severity', '=', f.severity);
    if (f.rule !== undefined) q = q.where('a.rule', '=', f.rule);
    if (f.userUuid !== undefined) q = q.where('a.user_uuid', '=', f.userUuid);
    if (f.from !== undefined) q = q.where('a.created_at', '>=', new Date(f.from));
    if (f.to !== undefined) q = q.where('a.created_at', '<', new Date(f.to));
    const counted = await this.db.selectFrom(q.clearSelect().select(sql`1`.as('one')).limit(COUNT_CAP + 1).as('c')).select(sql<number>`count(*)::int`.as('n')).executeTakeFirst();
    const n = counted?.n ?? 0;
    if (f.cursor !== undefined) {
      const after = decodeCursor(f.cursor, ['at', 'id'], (c) => UUID.test(c.id) && isCursorTime(c.at));
      const at = sql<Date>`${after.at}::timestamptz`;
      q = q.where((eb) => eb.or([eb('a.created_at', '<', at), eb.and([eb('a.created_at', '=', at), eb('a.id', '>', after.id)])]));
    }
    const rows = await q.select(sql<string>`to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'))
      .orderBy('a.created_at', 'desc').orderBy('a.id').limit(f.limit + 1).execute();
    const more = rows.length > f.limit;
    const shown = more ? rows.slice(0, f.limit) : rows;
    const last = shown.at(-1);
    return {
      rows: shown.map(({ cursor_at: _, ...r }) => r), total: Math.min(n, COUNT_CAP), totalExact: n <= COUNT_CAP,
      nextCursor: more && last ? encodeCursor({ at: last.cursor_at, id: last.id }) : null,
    };
  }

  /** Acknowledges an open alert; false when it is not open (or not there). */
  async acknowledge(trx: Db, id: string, by: string, note: string | null, at: Date): Promise<boolean> {
    const r = await trx.updateTable('security_alerts').set({ state: 'acknowledged', acknowledged_at: at, acknowledged_by: by, acknowledgement_note: note })
      .where('id', '=', id).where('state', '=', 'open').executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** Resolves an open or acknowledged alert; false when it is resolved already (or not there). */
  async resolve(trx: Db, id: string, by: string, note: string, at: Date): Promise<boolean> {
    const r = await trx.updateTable('security_alerts').set({ state: 'resolved', resolved_at: at, resolved_by: by, resolution_note: note })
      .where('id', '=', id).where('state', 'in', ['open', 'acknowledged']).executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  async deliveriesOf(alertId: string): Promise<DeliveryRow[]> {
    return this.db.selectFrom('security_alert_deliveries').selectAll().where('alert_id', '=', alertId).orderBy('channel').execute();
  }

  /**
   * Claims up to `limit` due deliveries for `token` until `leaseUntil`: a row another node holds
   * (locked, or leased) is skipped, so each is sent by one node at a time.
   */
  async claim(now: Date, leaseUntil: Date, token: string, limit: number): Promise<ClaimedDelivery[]> {
    const r = await sql<ClaimedDelivery>`
      UPDATE security_alert_deliveries SET claim_token = ${token}::uuid, lease_until = ${leaseUntil}, attempts = attempts + 1, updated_at = ${now}
      WHERE id IN (
        SELECT id FROM security_alert_deliveries
        WHERE state = 'pending' AND next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})
        ORDER BY next_attempt_at, id LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ) AND state = 'pending' AND (lease_until IS NULL OR lease_until <= ${now})
      RETURNING id, alert_id, channel, attempts, claim_token`.execute(this.db);
    return r.rows.map((d) => ({ ...d, id: String(d.id), alert_id: String(d.alert_id), claim_token: String(d.claim_token) }));
  }

  /** Settles a claimed delivery: sent, failed, or due again at `retryAt`; only while `token` still holds it. */
  async settle(d: ClaimedDelivery, now: Date, outcome: { state: 'sent' } | { state: 'failed'; reason: string } | { state: 'pending'; reason: string; retryAt: Date }): Promise<void> {
    const set = outcome.state === 'sent'
      ? { state: 'sent' as const, sent_at: now, last_error: null }
      : outcome.state === 'failed'
        ? { state: 'failed' as const, last_error: outcome.reason }
        : { next_attempt_at: outcome.retryAt, last_error: outcome.reason };
    await this.db.updateTable('security_alert_deliveries').set({ ...set, claim_token: null, lease_until: null, updated_at: now })
      .where('id', '=', d.id).where('claim_token', '=', d.claim_token).where('state', '=', 'pending').execute();
  }

  /** Deliveries waiting to be sent (for /metrics). */
  async pending(): Promise<number> {
    const r = await this.db.selectFrom('security_alert_deliveries').select(sql<number>`count(*)::int`.as('n')).where('state', '=', 'pending').executeTakeFirst();
    return r?.n ?? 0;
  }

  /** Deletes resolved alerts (with their deliveries) created before `cutoff`, in batches. */
  purgeResolved(cutoff: Date, stopping?: AbortSignal): Promise<number> {
    return purgeInBatches(async (limit) => {
      const r = await this.db.deleteFrom('security_alerts').where('id', 'in', (eb) => eb.selectFrom('security_alerts').select('id')
        .where('state', '=', 'resolved').where('created_at', '<', cutoff).orderBy('created_at').limit(limit)).executeTakeFirst();
      return Number(r.numDeletedRows);
    }, stopping);
  }
}
