/** Security alerts as GET /api/v1/admin/alerts and GET .../{id} answer them. */
export const ALERT_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export const ALERT_STATES = ['open', 'acknowledged', 'resolved'] as const;
export type Severity = (typeof ALERT_SEVERITIES)[number];
export type AlertState = (typeof ALERT_STATES)[number];

interface Decision {
  at: string;
  by: string;
  by_username: string | null;
  note: string | null;
}

export interface Alert {
  id: string;
  rule: string;
  severity: Severity;
  state: AlertState;
  created_at: string;
  user_id: string | null;
  username: string | null;
  channel: string | null;
  location: { internal?: boolean; country?: string; city?: string } | null;
  score: number | null;
  indicators: { signal: string; weight: number }[];
  acknowledged: Decision | null;
  resolved: Decision | null;
}

export interface AlertList {
  alerts: Alert[];
  total: number;
  total_exact: boolean;
  next_cursor: string | null;
}

export interface AlertDetail extends Alert {
  deliveries: { channel: 'email' | 'webhook'; state: 'pending' | 'sent' | 'failed'; attempts: number }[];
  audit_trail: {
    from: string;
    to: string;
    truncated: boolean;
    entries: { audit_id: string; timestamp: string; event_type: string; status: string; channel: string | null }[];
  };
}

export function alertsPath(f: { state?: string; severity?: string }, cursor: string | null = null): string {
  const q = new URLSearchParams({ page_size: '50' });
  if (f.state) q.set('state', f.state);
  if (f.severity) q.set('severity', f.severity);
  if (cursor) q.set('cursor', cursor);
  return `/api/v1/admin/alerts?${q}`;
}
