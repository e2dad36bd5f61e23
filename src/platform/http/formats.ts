/**
 * Strict formats for request validation. ajv-formats' `date-time` follows RFC 3339 to the
 * letter, leap second included, and does not check the day against the month; a value it
 * passes may still be an Invalid Date in JavaScript or a timestamp PostgreSQL refuses, which
 * would surface as a 500. Every date and time a client sends goes through this instead.
 */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate(); // day 0 of the next month
}

/**
 * RFC 3339 `date-time` (section 5.6) that is also a real instant: month 01-12, a day that the
 * month has (no February 30), hours 00-23, minutes 00-59, seconds 00-59 (no leap second 60,
 * which neither JavaScript nor PostgreSQL represents), offsets within +-23:59, year 0001-9999.
 */
export function isStrictDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  // With its offset applied the instant must still be in years 0001-9999 (what PostgreSQL and
  // the drivers' ISO text agree on): 0001-01-01T00:00:00+01:00 is in year 0.
  const t = Date.parse(value);
  return Number.isFinite(t) && t >= FIRST_INSTANT && t <= LAST_INSTANT;
}

/**
 * A uuid as PostgreSQL's `uuid` type reads it in every store: 8-4-4-4-12 hexadecimal digits.
 * ajv-formats' `uuid` also accepts the `urn:uuid:` form, which PostgreSQL refuses: a 500 for a
 * path parameter, not a 422. Every uuid a client sends goes through this instead.
 */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
