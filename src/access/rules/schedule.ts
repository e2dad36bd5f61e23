/**
 * Schedules: weekly windows of local wall-clock time in a named IANA time zone, e.g.
 * `{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue'], from: '07:00', to: '20:00' }`, or a
 * list of them (allowed when any window allows; windows may use different zones).
 *
 * Validation (InvalidRuleError): the zone must be a name Intl knows (`Africa/Nairobi`, `UTC`;
 * ICU aliases such as `EAT` are accepted and canonicalised); offsets such as `+03:00` are refused
 * whatever the Node version. `days` is a non-empty list of `mon`…`sun` (lower case; duplicates
 * are harmless). `from` is `HH:MM` in 00:00–23:59, `to` in 00:00–24:00 (`24:00` = end of the
 * day). `from` is inclusive and `to` exclusive: 07:00–20:00 allows 07:00:00.000 up to
 * 19:59:59.999. `from === to` is refused (empty or whole day? write 00:00–24:00 for a whole
 * day). `from > to` crosses midnight and belongs to the day it starts: `fri` 22:00–06:00 covers
 * Friday 22:00 to Saturday 06:00, and `sun` 22:00–06:00 runs into Monday. Unknown keys are
 * refused (they are typos: `form`, `timezone`). An empty list of windows is refused: omit the
 * schedule instead.
 *
 * Daylight saving: windows are read on the local wall clock, so on the night clocks go forward
 * the skipped hour matches no window (Europe/London 2026-03-29 01:00–02:00 never happens), and
 * on the night they go back the repeated hour matches twice (01:00–02:00 on 2026-10-25 is two
 * real hours in London); a window's real length varies on those days.
 *
 * Evaluation: each window is compiled into a bitmap of the 7 × 1440 minutes of a local week, per
 * zone; a check is the local (weekday, minute-of-day) of the instant, read with one cached
 * `Intl.DateTimeFormat` per zone (`formatToParts`, hourCycle h23), then a bit test. The local
 * minute is cached per compiled schedule and zone for the current UTC minute (offsets have been
 * whole minutes everywhere since 1972), so steady traffic calls Intl once a minute. An instant
 * that is not a finite number within the Date range is not allowed (fail closed).
 */
import { InvalidRuleError, quoteValue } from './errors.js';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** One window as written in a policy. */
export interface ScheduleWindow {
  /** IANA zone name, e.g. `Africa/Nairobi`. */
  time_zone: string;
  /** Days the window starts on. */
  days: readonly Weekday[];
  /** `HH:MM`, inclusive, 00:00–23:59. */
  from: string;
  /** `HH:MM`, exclusive, 00:00–24:00; earlier than `from` = ends the next day. */
  to: string;
}

/** A compiled schedule, for `scheduleAllows`. */
export interface CompiledSchedule {
  /** The canonical zones the windows use, without duplicates. */
  readonly time_zones: readonly string[];
}

const MINUTES_PER_DAY = 1440;
const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY;
/** The largest |epoch ms| a Date can hold. */
const MAX_EPOCH_MS = 8.64e15;
const WINDOW_KEYS = new Set(['time_zone', 'days', 'from', 'to']);
const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;
const WEEKDAY_INDEX: Readonly<Record<string, number>> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };

interface ZoneWeek {
  readonly zone: string;
  readonly format: Intl.DateTimeFormat;
  /** Bit `day * 1440 + minute` (day 0 = Monday) is set when that local minute is allowed. */
  readonly bits: Uint32Array;
  /** The UTC minute (epoch ms / 60000, floored) `cachedIndex` was computed for. */
  cachedMinute: number;
  cachedIndex: number;
}

const ZONES = Symbol('schedule zones');
interface CompiledScheduleInternal extends CompiledSchedule {
  readonly [ZONES]: readonly ZoneWeek[];
}

/** One formatter per canonical zone, shared by all compiled schedules (compilation is rare). */
const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  // A fixed locale, so weekday names are the English short ones whatever the host's locale.
  const format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', weekday: 'short', hour: '2-digit', minute: '2-digit' });
  const canonical = format.resolvedOptions().timeZone;
  const cached = formats.get(canonical);
  if (cached) return cached;
  formats.set(canonical, format);
  return format;
}

/** Minutes since local Monday 00:00 of the instant in the formatter's zone; -1 if unreadable. */
function localWeekMinute(format: Intl.DateTimeFormat, epochMs: number): number {
  let day = -1;
  let hour = -1;
  let minute = -1;
  for (const part of format.formatToParts(epochMs)) {
    if (part.type === 'weekday') day = WEEKDAY_INDEX[part.value] ?? -1;
    else if (part.type === 'hour') hour = Number(part.value) % 24;
    else if (part.type === 'minute') minute = Number(part.value);
  }
  if (day < 0 || !(hour >= 0 && hour < 24) || !(minute >= 0 && minute < 60)) return -1;
  return day * MINUTES_PER_DAY + hour * 60 + minute;
}

function parseTime(value: unknown, at: string, allowEndOfDay: boolean): number {
  if (allowEndOfDay && value === '24:00') return MINUTES_PER_DAY;
  const match = typeof value === 'string' ? TIME.exec(value) : null;
  if (!match) throw new InvalidRuleError(at, `${quoteValue(value)} is not a time of day (HH:MM, 00:00–${allowEndOfDay ? '24:00' : '23:59'})`);
  return Number(match[1]) * 60 + Number(match[2]);
}

function compileWindow(window: unknown, at: string, zones: Map<string, ZoneWeek>): void {
  if (typeof window !== 'object' || window === null || Array.isArray(window)) {
    throw new InvalidRuleError(at, `must be a window { time_zone, days, from, to }, not ${quoteValue(window)}`);
  }
  const w = window as Record<string, unknown>;
  for (const key of Object.keys(w)) {
    if (!WINDOW_KEYS.has(key)) throw new InvalidRuleError(`${at}.${key}`, 'is not a window setting (time_zone, days, from, to)');
  }

  const zoneName = w.time_zone;
  if (typeof zoneName !== 'string' || !/^[A-Za-z]/.test(zoneName)) {
    throw new InvalidRuleError(`${at}.time_zone`, `${quoteValue(zoneName)} is not an IANA time zone name such as "Africa/Nairobi"`);
  }
  let format: Intl.DateTimeFormat;
  try {
    format = formatFor(zoneName);
  } catch (err) {
    if (err instanceof RangeError) throw new InvalidRuleError(`${at}.time_zone`, `${quoteValue(zoneName)} is not a time zone this server knows`);
    throw err;
  }

  const days = w.days;
  if (!Array.isArray(days) || days.length === 0) {
    throw new InvalidRuleError(`${at}.days`, `must be a non-empty list of ${WEEKDAYS.join(', ')}, not ${quoteValue(days)}`);
  }
  const dayIndexes = days.map((day: unknown, i) => {
    const index = WEEKDAYS.indexOf(day as Weekday);
    if (index < 0) throw new InvalidRuleError(`${at}.days[${i}]`, `${quoteValue(day)} is not one of ${WEEKDAYS.join(', ')}`);
    return index;
  });

  const from = parseTime(w.from, `${at}.from`, false);
  const to = parseTime(w.to, `${at}.to`, true);
  if (from === to) throw new InvalidRuleError(`${at}.to`, `equals from (${String(w.from)}): for the whole day write from "00:00" to "24:00"`);

  const zone = format.resolvedOptions().timeZone;
  let week = zones.get(zone);
  if (!week) {
    week = { zone, format, bits: new Uint32Array(Math.ceil(MINUTES_PER_WEEK / 32)), cachedMinute: Number.NaN, cachedIndex: -1 };
    zones.set(zone, week);
  }
  // A window crossing midnight runs into the next day (Sunday's into Monday's).
  const length = from < to ? to - from : MINUTES_PER_DAY - from + to;
  for (const day of dayIndexes) {
    const start = day * MINUTES_PER_DAY + from;
    for (let m = start; m < start + length; m++) {
      const i = m % MINUTES_PER_WEEK;
      week.bits[i >>> 5]! |= 1 << (i & 31);
    }
  }
}

/**
 * Compiles one window or a list of windows (see the file header for the rules).
 * @param field the schedule's path in the rule set, for error messages.
 * @throws InvalidRuleError naming the first unusable value, e.g. `schedule[1].from: "7:00" is not a time of day (...)`.
 */
export function compileSchedule(input: ScheduleWindow | readonly ScheduleWindow[], field = 'schedule'): CompiledSchedule {
  const zones = new Map<string, ZoneWeek>();
  if (Array.isArray(input)) {
    if (input.length === 0) throw new InvalidRuleError(field, 'must list one window at least (omit the schedule to allow any time)');
    input.forEach((window: unknown, i) => compileWindow(window, `${field}[${i}]`, zones));
  } else {
    compileWindow(input, field, zones);
  }
  const weeks = [...zones.values()];
  const compiled: CompiledScheduleInternal = { time_zones: Object.freeze(weeks.map((w) => w.zone)), [ZONES]: weeks };
  return Object.freeze(compiled);
}

/** Whether the instant (epoch milliseconds) falls in one of the schedule's windows. */
export function scheduleAllows(compiled: CompiledSchedule, epochMs: number): boolean {
  const weeks = (compiled as Partial<CompiledScheduleInternal>)[ZONES];
  if (!weeks || typeof epochMs !== 'number' || !(Math.abs(epochMs) <= MAX_EPOCH_MS)) return false;
  const minute = Math.floor(epochMs / 60_000);
  for (let k = 0; k < weeks.length; k++) {
    const week = weeks[k]!;
    if (week.cachedMinute !== minute) {
      week.cachedIndex = localWeekMinute(week.format, epochMs);
      week.cachedMinute = minute;
    }
    const i = week.cachedIndex;
    if (i >= 0 && (week.bits[i >>> 5]! & (1 << (i & 31))) !== 0) return true;
  }
  return false;
}
