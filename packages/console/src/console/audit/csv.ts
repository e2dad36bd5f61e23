/**
 * The audit entries as CSV (RFC 4180: comma-separated, CRLF, fields quoted when they hold a
 * comma, a quote or a line break). A field a spreadsheet would read as a formula (starting with
 * =, +, -, @, a tab or a carriage return: a username chosen to be one), or a formula after a
 * ";", "|" or tab (cell separators of Excel in Portuguese and French), gets an apostrophe before
 * it, so opening the export runs nothing.
 */
import { countryOf, type AuditEntry } from './types.js';

const HEADER = ['timestamp', 'event_type', 'status', 'username', 'user_id', 'channel', 'country', 'ip_address'];

export function csvField(value: string | null | undefined): string {
  let v = value ?? '';
  if (/^[=+\-@\t\r]/.test(v)) v = `'${v}`;
  // Excel in Portuguese and French splits cells on ";" (and some readers on "|" or a tab) even
  // inside a field: a formula after one of them is neutralised too, and such fields are quoted.
  v = v.replace(/([;|\t])(?=[=+\-@])/g, "$1'");
  return /[",;|\t\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

export function auditCsv(entries: readonly AuditEntry[]): string {
  const rows = entries.map((e) => [e.timestamp, e.event_type, e.status, e.username, e.user_id, e.channel, countryOf(e), e.ip_address]);
  return [HEADER, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}
