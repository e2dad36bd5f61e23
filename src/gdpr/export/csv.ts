/**
 * CSV of exported rows (RFC 4180): a header line, CRLF line ends, every field quoted when it holds
 * a comma, a quote, a line break or leading/trailing space; a JSON value (audit details) written
 * as its JSON text. A field that a spreadsheet would run as a formula (starting `=`, `+`, `-`,
 * `@`, tab or carriage return) is prefixed with a single quote (OWASP "CSV injection"): the file
 * is opened by people, in spreadsheets.
 */
import type { Cell, Row } from './registry.js';

const FORMULA = /^[=+\-@\t\r]/;

function field(v: Cell): string {
  if (v === null) return '';
  let s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (typeof v === 'string' && FORMULA.test(s)) s = `'${s}`;
  return /[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(columns: readonly string[], rows: readonly Row[]): string {
  return [columns.map((c) => field(c)), ...rows.map((r) => columns.map((c) => field(r[c] ?? null)))].map((line) => `${line.join(',')}\r\n`).join('');
}
