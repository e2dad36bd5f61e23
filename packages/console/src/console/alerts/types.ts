/**
 * Security alerts as GET /api/v1/admin/alerts and GET .../{id} answer them: the server's own
 * schemas (type-only imports: nothing of the server is bundled).
 */
import type { Static } from 'typebox';
import type { AlertDetail as AlertDetailSchema, AlertList as AlertListSchema, AlertSummary } from '../../../../../src/risk/alerts/schemas.js';

export const ALERT_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export const ALERT_STATES = ['open', 'acknowledged', 'resolved'] as const;
export type Severity = (typeof ALERT_SEVERITIES)[number];
export type AlertState = (typeof ALERT_STATES)[number];

export type Alert = Static<typeof AlertSummary>;
export type AlertList = Static<typeof AlertListSchema>;
export type AlertDetail = Static<typeof AlertDetailSchema>;

export function alertsPath(f: { state?: string; severity?: string }, cursor: string | null = null): string {
  const q = new URLSearchParams({ page_size: '50' });
  if (f.state) q.set('state', f.state);
  if (f.severity) q.set('severity', f.severity);
  if (cursor) q.set('cursor', cursor);
  return `/api/v1/admin/alerts?${q}`;
}
