/** The audit trail as GET /api/v1/admin/audit answers it, and the screen's filters. */
export interface AuditEntry {
  audit_id: string;
  timestamp: string;
  event_type: string;
  user_id: string | null;
  username: string | null;
  status: string;
  ip_address: string | null;
  channel: string | null;
  location: { country?: string; city?: string; internal?: boolean } | null;
}

export interface AuditPage {
  entries: AuditEntry[];
  total: number;
  total_exact: boolean;
  next_cursor: string | null;
}

export const AUDIT_STATUSES = ['SUCCESS', 'FAILURE', 'DETECTED'] as const;
export const AUDIT_CHANNELS = ['web', 'mobile', 'ussd', 'agent'] as const;

/** What the API filters by (user_id already resolved from a username). */
export interface AuditFilters {
  userId?: string;
  eventType?: string;
  status?: string;
  channel?: string;
  country?: string;
  /** ISO 8601, inclusive. */
  from?: string;
  /** ISO 8601, exclusive. */
  to?: string;
}

/** The route's address for these filters and a page of `size` entries after `cursor` (keyset paging, never offsets). */
export function auditPath(f: AuditFilters, size: number, cursor: string | null = null): string {
  const q = new URLSearchParams({ page_size: String(size) });
  const set = (name: string, value: string | undefined) => { if (value) q.set(name, value); };
  set('user_id', f.userId);
  set('event_type', f.eventType);
  set('status', f.status);
  set('channel', f.channel);
  set('country', f.country);
  set('from', f.from);
  set('to', f.to);
  if (cursor) q.set('cursor', cursor);
  return `/api/v1/admin/audit?${q}`;
}

/** Every entry for these filters, page after page by cursor, up to `cap`; `complete` false when the cap cut it short. */
export async function fetchAll(call: <T>(method: string, path: string) => Promise<T>, f: AuditFilters, cap: number): Promise<{ entries: AuditEntry[]; complete: boolean }> {
  const entries: AuditEntry[] = [];
  let cursor: string | null = null;
  do {
    const page: AuditPage = await call<AuditPage>('GET', auditPath(f, 200, cursor));
    entries.push(...page.entries);
    cursor = page.next_cursor;
  } while (cursor !== null && entries.length < cap);
  return { entries: entries.slice(0, cap), complete: cursor === null && entries.length <= cap };
}

/** Where the entry's client was, as a country code, "internal", or null. */
export function countryOf(e: AuditEntry): string | null {
  if (e.location?.country) return e.location.country;
  return e.location?.internal ? 'internal' : null;
}
