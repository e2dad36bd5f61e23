/**
 * The audit trail (SPEC "Audit log entry"). Every sign-in attempt, session start and end,
 * token refresh, reuse and credential change is written with SPEC's fields. Entries are
 * written in the same transaction as the change they describe where there is one.
 */
import { sql, type Insertable } from 'kysely';
import { GATEWAY_CHANNELS } from '../geo/addresses.js';
import type { GeoLookup } from '../geo/types.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { uuidV7 } from '../platform/crypto/uuid-v7.js';
import type { AuditLogTable } from '../platform/db/schema.js';
import { decodeCursor, encodeCursor, isCursorTime } from '../platform/http/cursor.js';

export const AUDIT_EVENTS = [
  'USER_LOGIN', 'FAILED_LOGIN_ATTEMPT', 'LOCKED_LOGIN_ATTEMPT', 'ACCOUNT_LOCKED', 'ACCOUNT_UNLOCKED', 'LOGOUT', 'TOKEN_REFRESH',
  'TOKEN_REUSE_DETECTED', 'PASSWORD_CHANGED', 'PASSWORD_RESET_BY_ADMIN', 'PASSWORD_CHANGE_REQUIRED', 'USER_CREATED',
  'USER_PROVISIONED', 'IDENTITY_CONFLICT', 'IDENTITY_LINKED', 'SAML_LOGOUT', 'LDAP_CONFIG_CHANGED', 'LDAP_CONNECTION_TESTED', 'SAML_CONFIG_CHANGED', 'ENTITY_CREATED', 'ENTITY_UPDATED',
  'FAQ_CREATED', 'FAQ_UPDATED', 'FAQ_DELETED', 'FAQ_RESTORED', 'FAQ_REORDERED', 'FAQ_IMPORTED', 'FAQ_EXPORTED',
  'DEVICE_TOKEN_REGISTERED', 'DEVICE_TOKEN_REACTIVATED', 'DEVICE_TOKEN_TRANSFERRED', 'DEVICE_TOKEN_DEACTIVATED', 'DEVICE_TOKEN_ACTIVATED', 'DEVICE_TOKEN_DELETED', 'PUSH_QUEUED',
  'NOTIFICATION_TEMPLATE_CREATED', 'NOTIFICATION_TEMPLATE_UPDATED', 'NOTIFICATION_TEMPLATE_DELETED', 'NOTIFICATION_LANGUAGE_CHANGED',
  'SESSION_ENDED', 'PASSWORD_EXPIRY_WARNING',
  // Second factors (issue 4)
  'MFA_REQUIRED', 'MFA_SETUP_REQUIRED', 'MFA_VERIFIED', 'MFA_FAILED', 'MFA_LOCKED', 'MFA_STEP_UP', 'MFA_ENROLLED',
  'BACKUP_CODE_USED', 'BACKUP_CODES_REGENERATED', 'OTP_SENT', 'OTP_DELIVERY_FAILED',
  'SECURITY_QUESTIONS_SET', 'SECURITY_QUESTIONS_VERIFIED', 'SECURITY_QUESTIONS_FAILED', 'SECURITY_QUESTIONS_LOCKED',
  'SECURITY_QUESTIONS_DELETED', 'SECURITY_QUESTION_ADDED', 'SECURITY_QUESTION_RETIRED',
  'MFA_RESET_REQUESTED', 'MFA_RESET_APPROVED', 'MFA_RESET_REJECTED', 'MFA_RESET_EXPIRED', 'MFA_RESET_COMPLETED',
  // Access policy (issue 10)
  'POLICY_VIOLATION', 'ACCESS_POLICY_CREATED', 'ACCESS_POLICY_UPDATED', 'ACCESS_POLICY_DELETED', 'CHANNEL_ACCESS_CHANGED',
  'DEVICE_BINDING_REQUESTED', 'DEVICE_BINDING_APPROVED', 'DEVICE_BINDING_REVOKED',
  // PINs and USSD (issue 10)
  'PIN_SET', 'PIN_CHANGED', 'PIN_RESET_BY_ADMIN',
  // User lifecycle administration (issue 25)
  'USER_UPDATED', 'USER_DISABLED', 'USER_ENABLED', 'USER_DELETED',
  // Role administration (issue 25)
  'ROLE_CREATED', 'ROLE_UPDATED', 'ROLE_DELETED',
  // Audit retention (issue 26)
  'AUDIT_MONTH_DROPPED', 'AUDIT_HOLD_PLACED', 'AUDIT_HOLD_RELEASED',
  // Account recovery (issue 27)
  'RECOVERY_INITIATED', 'RECOVERY_CODE_SENT', 'RECOVERY_PROOF_PASSED', 'RECOVERY_PROOF_FAILED', 'RECOVERY_PROOF_LOCKED',
  'RECOVERY_VERIFIED', 'RECOVERY_COMPLETED', 'RECOVERY_CANCELLED', 'RECOVERY_REJECTED', 'RECOVERY_EXPIRED',
  'RECOVERY_BRANCH_APPROVED', 'RECOVERY_BRANCH_REJECTED', 'RECOVERY_WAITING', 'RECOVERY_REPORTED_NOT_ME', 'RECOVERY_ACCESS_POLICY_REQUESTED',
  // Data-subject rights (issue 28)
  'GDPR_EXPORTED', 'GDPR_PORTABILITY',
  'CONSENT_GIVEN', 'CONSENT_WITHDRAWN', 'CONSENT_PURPOSE_CREATED', 'CONSENT_TEXT_PUBLISHED', 'CONSENT_SUBJECTS_LISTED',
  'PROFILE_UPDATED', 'CONTACT_CHANGE_REQUESTED', 'CONTACT_CHANGED', 'CONTACT_CHANGE_FAILED',
  'BREACH_RECORDED', 'BREACH_REPORTED', 'BREACH_CLOSED',
  'GDPR_ERASURE_REQUESTED', 'GDPR_ERASURE_CANCELLED', 'GDPR_ERASURE_HELD', 'GDPR_ERASURE_RELEASED', 'GDPR_ERASED',
  // Security alerts (issue 29)
  'SECURITY_ALERT_RAISED', 'SECURITY_ALERT_ACKNOWLEDGED', 'SECURITY_ALERT_RESOLVED',
  // Responses to a suspicious sign-in (issue 29)
  'SIGN_IN_REPORTED_NOT_ME', 'ACCOUNT_SECURITY_UNLOCKED',
  // The risk response policy (issue 29)
  'RISK_SIGN_IN_REFUSED', 'RISK_ADDRESS_BLOCKED', 'RISK_POLICY_UPDATED',
  // Passkeys (issue 30)
  'PASSKEY_REGISTERED', 'PASSKEY_RENAMED', 'PASSKEY_DELETED', 'PASSKEY_CLONE_DETECTED',
  // Push approval (issue 30)
  'PUSH_APPROVAL_REMOVED',
  // A PIN reset's notice to the customer that could not be delivered (src/pins/notices.ts)
  'PIN_RESET_NOTICE_FAILED',
] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

export interface AuditContext {
  ip?: string | null;
  deviceFingerprint?: string | null;
  userAgent?: string | null;
  channel?: string | null;
  /** The sign-in's risk score (src/risk), 0 to 100. */
  riskScore?: number | null;
  /** The indicators that made the score (`suspicious_indicators`). */
  suspiciousIndicators?: readonly unknown[] | null;
}

/**
 * The audit fields of a request's client context (`clientContext`, `mfaContext`); a sign-in's
 * context carries its risk assessment once made, and every entry written with it then has the score.
 */
export function auditContext(ctx: { ip: string; fingerprint: string; userAgent: string; channel: string; risk?: { score: number; indicators: readonly unknown[] } }): AuditContext {
  const risk = ctx.risk ? { riskScore: ctx.risk.score, suspiciousIndicators: ctx.risk.indicators } : {};
  return { ip: ctx.ip, deviceFingerprint: ctx.fingerprint || null, userAgent: ctx.userAgent, channel: ctx.channel, ...risk };
}

export interface AuditInput extends AuditContext {
  eventType: AuditEvent;
  status: 'SUCCESS' | 'FAILURE' | 'DETECTED';
  userId?: string | null;
  username?: string | null;
  mfaMethod?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditEntry {
  audit_id: string;
  timestamp: string;
  event_type: string;
  user_id: string | null;
  username: string | null;
  status: string;
  ip_address: string | null;
  device_fingerprint: string | null;
  user_agent: string | null;
  channel: string | null;
  mfa_method: string | null;
  location: Record<string, unknown> | null;
  security_events: unknown[];
  risk_score: number | null;
  suspicious_indicators: unknown[];
  details: Record<string, unknown>;
}

/** Past this many matching entries, a page's `total` stops counting (`totalExact` false). */
export const COUNT_CAP = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AuditQuery {
  userId?: string;
  eventType?: string;
  /** `SUCCESS`, `FAILURE` or `DETECTED`. */
  status?: string;
  /** The client's channel (`web`, `mobile`, `ussd`, `agent`). */
  channel?: string;
  /** ISO 3166-1 alpha-2: entries whose `location.country` is this. */
  country?: string;
  from?: string;
  to?: string;
  limit: number;
  /** Entries to skip (page numbers); ignored when `cursor` is given. */
  offset: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

export class AuditLog {
  /**
   * `geo` locates each entry's client address into `location` (the country, network and city as
   * the operator's databases know them, or `{internal: true}`), when the entry is written, so the
   * trail keeps where a client was then, not where a later database puts the address. Without it
   * (a tool reading the trail) entries are written with no location.
   */
  constructor(private readonly deps: { db: Db; clock: Clock; geo?: GeoLookup }) {}

  async record(e: AuditInput, trx: Db = this.deps.db): Promise<void> {
    await trx.insertInto('audit_log').values(this.row(e)).execute();
  }

  /** The row `record` writes, for a caller that folds the insert into a larger statement. */
  row(e: AuditInput): Insertable<AuditLogTable> {
    const now = this.deps.clock.now();
    return {
      audit_id: uuidV7(now), timestamp: new Date(now), event_type: e.eventType, user_id: e.userId ?? null,
      username: e.username?.slice(0, 256) ?? null, status: e.status, ip_address: e.ip ?? null,
      device_fingerprint: e.deviceFingerprint?.slice(0, 256) ?? null, user_agent: e.userAgent?.slice(0, 512) ?? null,
      channel: e.channel ?? null, mfa_method: e.mfaMethod ?? null, location: GATEWAY_CHANNELS.has(e.channel ?? '') ? null : this.locate(e.ip), security_events: '[]',
      risk_score: e.riskScore ?? null, suspicious_indicators: JSON.stringify(e.suspiciousIndicators ?? []), details: JSON.stringify(e.details ?? {}),
    };
  }

  /** The `location` column of an entry from this client address: JSON, or null with no address or none known. */
  private locate(ip: string | null | undefined): string | null {
    if (!ip || !this.deps.geo) return null;
    const where = this.deps.geo.lookup(ip);
    return where === null ? null : JSON.stringify(where);
  }

  /**
   * A page of entries, newest first, and the cursor of the next page (null: this is the last).
   * `total` is exact up to `COUNT_CAP` matching entries; past it the count stops there and
   * `totalExact` is false, so a busy day's page costs what its rows cost, not a count of the day.
   */
  async query(f: AuditQuery): Promise<{ total: number; totalExact: boolean; entries: AuditEntry[]; nextCursor: string | null }> {
    const { db } = this.deps;
    // Entries kept past their month under a legal hold are answered as the others are.
    let q = db.selectFrom((d) => d.selectFrom('audit_log').selectAll().unionAll(d.selectFrom('audit_log_held').selectAll()).as('audit_log'));
    if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
    if (f.eventType !== undefined) q = q.where('event_type', '=', f.eventType);
    if (f.status !== undefined) q = q.where('status', '=', f.status);
    if (f.channel !== undefined) q = q.where('channel', '=', f.channel);
    if (f.country !== undefined) q = q.where(sql<string>`location->>'country'`, '=', f.country);
    if (f.from !== undefined) q = q.where('timestamp', '>=', new Date(f.from));
    if (f.to !== undefined) q = q.where('timestamp', '<', new Date(f.to));
    const counted = await db.selectFrom(q.select(sql`1`.as('one')).limit(COUNT_CAP + 1).as('c')).select(sql<number>`count(*)::int`.as('n')).executeTakeFirst();
    const n = counted?.n ?? 0;
    let page = q;
    if (f.cursor !== undefined) {
      const after = decodeCursor(f.cursor, ['at', 'id'], (c) => UUID.test(c.id) && isCursorTime(c.at));
      page = page.where((eb) => eb.or([eb('timestamp', '<', sql<Date>`${after.at}::timestamptz`), eb.and([eb('timestamp', '=', sql<Date>`${after.at}::timestamptz`), eb('audit_id', '>', after.id)])]));
    }
    const rows = await page.selectAll()
      .select(sql<string>`to_char(timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'))
      .orderBy('timestamp', 'desc').orderBy('audit_id').limit(f.limit + 1).offset(f.cursor === undefined ? f.offset : 0).execute();
    const more = rows.length > f.limit;
    const shown = more ? rows.slice(0, f.limit) : rows;
    const last = shown.at(-1);
    return {
      total: Math.min(n, COUNT_CAP), totalExact: n <= COUNT_CAP,
      nextCursor: more && last ? encodeCursor({ at: last.cursor_at, id: last.audit_id }) : null,
      entries: shown.map(({ cursor_at: _, ...r }) => ({
        ...r,
        timestamp: new Date(r.timestamp).toISOString(),
        location: r.location as Record<string, unknown> | null,
        security_events: r.security_events as unknown[],
        suspicious_indicators: r.suspicious_indicators as unknown[],
        details: r.details as Record<string, unknown>,
      })),
    };
  }
}
