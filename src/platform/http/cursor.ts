/**
 * Opaque keyset cursors: the position after the last row of a page, as base64url JSON with a
 * version, so a later page starts there instead of scanning past the pages before it (OFFSET).
 * A cursor not of the form this service issues is `422 VALIDATION_ERROR` naming `cursor`. A cursor
 * is not signed: it is only a position in a list the caller may read anyway, so a well-formed one
 * made up by hand reads from that position and shows nothing the caller could not page to.
 */
import { CommonErrors } from '../errors.js';

const VERSION = 1;

export function encodeCursor(position: Record<string, string>): string {
  return Buffer.from(JSON.stringify({ v: VERSION, ...position })).toString('base64url');
}

/**
 * The position a cursor holds: `keys` are the fields it must carry, each a non-empty string, and
 * `valid` may check their form further.
 */
export function decodeCursor<K extends string>(cursor: string, keys: readonly K[], valid: (position: Record<K, string>) => boolean = () => true): Record<K, string> {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    const position = parsed as Record<K, string>;
    if (parsed.v === VERSION && keys.every((k) => typeof parsed[k] === 'string' && (parsed[k] as string).length > 0) && valid(position)) return position;
  } catch {
    // falls through to the refusal
  }
  throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'querystring', field: 'cursor', message: 'is not a cursor this service issued: send the next_cursor of the previous page unchanged, or no cursor for the first page' }] }, { message: 'The cursor is not one this service issued; send the `next_cursor` of the previous page unchanged, or none for the first page.' });
}

const ISO_MICROS = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * Whether a cursor's time is one this service writes: UTC to the microsecond
 * (`2026-03-09T09:00:00.123456Z`) and a real instant (no 13th month, no year 0), so the database
 * never sees a value it refuses.
 */
export function isCursorTime(at: string): boolean {
  const m = ISO_MICROS.exec(at);
  if (!m || Number(m[1]) < 1) return false;
  const ms = Date.parse(`${at.slice(0, 23)}Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === at.slice(0, 19);
}
