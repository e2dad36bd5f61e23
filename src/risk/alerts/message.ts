/**
 * What the security team receives for an alert: the webhook's JSON body (one document a SIEM can
 * index, the same for every rule) and the email (plain text, in English: the team's working
 * language, not the customer's). Both are built when a delivery is sent, from the alert as
 * recorded, so a retry sends what the first attempt sent (with a fresh signature).
 */
import type { GeoLocation } from '../../geo/types.js';
import type { MailMessage } from '../../mail/mailer.js';
import type { RiskIndicator } from '../types.js';
import type { AlertRow } from './store.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** The alert as the webhook and the admin routes present it. */
export function alertDocument(a: AlertRow) {
  return {
    id: a.id,
    rule: a.rule,
    severity: a.severity,
    state: a.state,
    created_at: iso(a.created_at)!,
    user_id: a.user_uuid,
    username: a.username,
    audit_id: a.audit_id,
    channel: a.channel,
    ip_hash: a.ip_hash,
    location: a.location as GeoLocation | null,
    score: a.score,
    // Written from AlertInput.indicators (raise): the shape the risk evaluation gives.
    indicators: a.indicators as RiskIndicator[],
  };
}

/**
 * The webhook body: `delivery_id` is stable across retries (a receiver that already took it drops
 * the repeat), `alert` the record.
 */
export function webhookBody(a: AlertRow, deliveryId: string): string {
  return JSON.stringify({ type: 'security_alert', delivery_id: deliveryId, alert: alertDocument(a) });
}

function where(location: unknown): string {
  if (location === null || typeof location !== 'object') return 'unknown';
  const l = location as Record<string, unknown>;
  if (l.internal === true) return 'an internal network address';
  const parts = [l.city, l.country].filter((p): p is string => typeof p === 'string');
  if (typeof l.asn === 'number') parts.push(`AS${l.asn}${typeof l.as_org === 'string' ? ` (${l.as_org})` : ''}`);
  return parts.length > 0 ? parts.join(', ') : 'unknown';
}

function indicatorLines(indicators: unknown): string[] {
  if (!Array.isArray(indicators) || indicators.length === 0) return ['  (none recorded)'];
  return indicators.map((i) => {
    const x = i as { signal?: unknown; weight?: unknown; details?: unknown };
    const details = x.details !== null && typeof x.details === 'object' ? Object.entries(x.details).sort(([k1], [k2]) => (k1 < k2 ? -1 : 1)).map(([k, v]) => `${k}=${String(v)}`).join(', ') : '';
    return `  - ${String(x.signal)} (weight ${String(x.weight)})${details ? `: ${details}` : ''}`;
  });
}

/** The email to the security team. */
export function alertMail(to: readonly string[], a: AlertRow): MailMessage {
  const who = a.user_uuid === null ? 'no single account' : `${a.username ?? '(account gone)'} (${a.user_uuid})`;
  const text = [
    `Strongroom raised a ${a.severity} security alert.`,
    '',
    `Rule:        ${a.rule}`,
    `Severity:    ${a.severity}`,
    `Account:     ${who}`,
    `When:        ${iso(a.created_at)!.replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC')}`,
    `Channel:     ${a.channel ?? 'unknown'}`,
    `Where:       ${where(a.location)}`,
    `Risk score:  ${a.score ?? 'none'}`,
    'Indicators:',
    ...indicatorLines(a.indicators),
    '',
    `Alert:       ${a.id}`,
    `Audit entry: ${a.audit_id ?? 'none'}`,
    '',
    `Read it with the audit trail around it at GET /api/v1/admin/alerts/${a.id}; acknowledge or resolve it there (permission alerts.manage).`,
    '',
  ].join('\n');
  return { to: to.join(', '), subject: `[Strongroom] ${a.severity.toUpperCase()} security alert: ${a.rule}${a.username ? ` (${a.username})` : ''}`, text };
}
