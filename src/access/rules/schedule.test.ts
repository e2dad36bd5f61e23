import { describe, expect, it } from 'vitest';
import { InvalidRuleError } from './errors.js';
import { compileSchedule, scheduleAllows, type CompiledSchedule, type ScheduleWindow } from './schedule.js';

const at = (iso: string) => Date.parse(iso);
const MINUTE = 60_000;

/** Allowed minutes between two instants, checked once a minute. */
function allowedMinutes(schedule: CompiledSchedule, fromIso: string, toIso: string): number {
  let n = 0;
  for (let t = at(fromIso); t < at(toIso); t += MINUTE) if (scheduleAllows(schedule, t)) n++;
  return n;
}

function invalid(input: unknown, field = 'schedule'): InvalidRuleError {
  try {
    compileSchedule(input as ScheduleWindow, field);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRuleError);
    return err as InvalidRuleError;
  }
  throw new Error(`compiled: ${JSON.stringify(input)}`);
}

const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri'] as const;

describe('scheduleAllows: Africa/Nairobi (UTC+3, no DST)', () => {
  const office = compileSchedule({ time_zone: 'Africa/Nairobi', days: weekdays, from: '07:00', to: '20:00' });

  it('includes from and excludes to, to the millisecond', () => {
    // Monday 2026-03-02: 07:00 local is 04:00Z, 20:00 local is 17:00Z.
    expect(scheduleAllows(office, at('2026-03-02T03:59:59.999Z'))).toBe(false);
    expect(scheduleAllows(office, at('2026-03-02T04:00:00.000Z'))).toBe(true);
    expect(scheduleAllows(office, at('2026-03-02T16:59:59.999Z'))).toBe(true);
    expect(scheduleAllows(office, at('2026-03-02T17:00:00.000Z'))).toBe(false);
  });

  it('reads the local weekday, not the UTC one', () => {
    // Friday 2026-03-06 22:30Z is Saturday 01:30 in Nairobi; Sunday 2026-03-01 21:00Z is Monday 00:00.
    expect(scheduleAllows(office, at('2026-03-06T16:00:00Z'))).toBe(true); // Fri 19:00
    expect(scheduleAllows(office, at('2026-03-07T05:00:00Z'))).toBe(false); // Sat 08:00
    expect(scheduleAllows(office, at('2026-03-08T05:00:00Z'))).toBe(false); // Sun 08:00
    const earlyMonday = compileSchedule({ time_zone: 'Africa/Nairobi', days: ['mon'], from: '00:00', to: '01:00' });
    expect(scheduleAllows(earlyMonday, at('2026-03-01T21:00:00Z'))).toBe(true);
    expect(scheduleAllows(earlyMonday, at('2026-03-01T20:59:59Z'))).toBe(false);
  });

  it('gives the right answer when calls go back and forth across an edge (the per-minute cache)', () => {
    for (let round = 0; round < 3; round++) {
      expect(scheduleAllows(office, at('2026-03-02T03:59:30Z'))).toBe(false);
      expect(scheduleAllows(office, at('2026-03-02T04:00:30Z'))).toBe(true);
      expect(scheduleAllows(office, at('2026-03-09T03:59:00Z'))).toBe(false);
      expect(scheduleAllows(office, at('2026-03-07T04:00:30Z'))).toBe(false); // Saturday, same local time
    }
  });

  it('allows 13 hours on each weekday and none at the weekend', () => {
    expect(allowedMinutes(office, '2026-03-01T21:00:00Z', '2026-03-06T21:00:00Z')).toBe(5 * 13 * 60);
    expect(allowedMinutes(office, '2026-03-06T21:00:00Z', '2026-03-08T21:00:00Z')).toBe(0);
  });
});

describe('scheduleAllows: windows crossing midnight and ending at 24:00', () => {
  it('gives a 22:00–06:00 window to the day it starts on', () => {
    const night = compileSchedule({ time_zone: 'Africa/Nairobi', days: ['fri'], from: '22:00', to: '06:00' });
    expect(scheduleAllows(night, at('2026-03-06T18:59:59Z'))).toBe(false); // Fri 21:59:59
    expect(scheduleAllows(night, at('2026-03-06T19:00:00Z'))).toBe(true); // Fri 22:00
    expect(scheduleAllows(night, at('2026-03-06T21:00:00Z'))).toBe(true); // Sat 00:00
    expect(scheduleAllows(night, at('2026-03-07T02:59:59Z'))).toBe(true); // Sat 05:59:59
    expect(scheduleAllows(night, at('2026-03-07T03:00:00Z'))).toBe(false); // Sat 06:00
    expect(scheduleAllows(night, at('2026-03-07T19:00:00Z'))).toBe(false); // Sat 22:00: Saturday is not listed
    expect(scheduleAllows(night, at('2026-03-05T21:00:00Z'))).toBe(false); // Fri 00:00: Thursday's night is not listed
  });

  it("runs Sunday's night window into Monday", () => {
    const night = compileSchedule({ time_zone: 'Africa/Nairobi', days: ['sun'], from: '22:00', to: '06:00' });
    expect(scheduleAllows(night, at('2026-03-08T19:00:00Z'))).toBe(true); // Sun 22:00
    expect(scheduleAllows(night, at('2026-03-09T02:59:00Z'))).toBe(true); // Mon 05:59
    expect(scheduleAllows(night, at('2026-03-09T03:00:00Z'))).toBe(false); // Mon 06:00
    expect(scheduleAllows(night, at('2026-03-02T02:00:00Z'))).toBe(true); // the Monday of the week before, 05:00
  });

  it('treats 24:00 as the end of the day, and 22:00–00:00 like 22:00–24:00', () => {
    for (const to of ['24:00', '00:00']) {
      const evening = compileSchedule({ time_zone: 'UTC', days: ['sat'], from: '22:00', to });
      expect(scheduleAllows(evening, at('2026-03-07T23:59:59.999Z')), to).toBe(true);
      expect(scheduleAllows(evening, at('2026-03-08T00:00:00Z')), to).toBe(false);
    }
    const allDay = compileSchedule({ time_zone: 'UTC', days: ['sun'], from: '00:00', to: '24:00' });
    expect(allowedMinutes(allDay, '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z')).toBe(1440);
  });

  it('allows when any window allows, across zones', () => {
    const both = compileSchedule([
      { time_zone: 'Africa/Nairobi', days: ['mon'], from: '07:00', to: '08:00' },
      { time_zone: 'America/New_York', days: ['mon'], from: '07:00', to: '08:00' },
    ]);
    expect(both.time_zones).toEqual(['Africa/Nairobi', 'America/New_York']);
    expect(scheduleAllows(both, at('2026-03-02T04:30:00Z'))).toBe(true); // Nairobi 07:30
    expect(scheduleAllows(both, at('2026-03-02T12:30:00Z'))).toBe(true); // New York 07:30 (EST)
    expect(scheduleAllows(both, at('2026-03-02T08:30:00Z'))).toBe(false);
  });
});

describe('scheduleAllows: daylight saving', () => {
  it('Europe/London, 2026-03-29: the skipped hour 01:00–02:00 never matches', () => {
    const gap = compileSchedule({ time_zone: 'Europe/London', days: ['sun'], from: '01:00', to: '02:00' });
    expect(allowedMinutes(gap, '2026-03-28T23:00:00Z', '2026-03-29T23:00:00Z')).toBe(0);
    expect(allowedMinutes(gap, '2026-04-04T23:00:00Z', '2026-04-05T23:00:00Z')).toBe(60); // a week later: BST, 00:00Z–01:00Z
    expect(scheduleAllows(gap, at('2026-04-05T00:00:00Z'))).toBe(true);
    const around = compileSchedule({ time_zone: 'Europe/London', days: ['sun'], from: '00:30', to: '02:30' });
    expect(scheduleAllows(around, at('2026-03-29T00:59:59Z'))).toBe(true); // 00:59:59 GMT
    expect(scheduleAllows(around, at('2026-03-29T01:00:00Z'))).toBe(true); // 02:00 BST
    expect(scheduleAllows(around, at('2026-03-29T01:30:00Z'))).toBe(false); // 02:30 BST
    expect(allowedMinutes(around, '2026-03-28T23:00:00Z', '2026-03-29T23:00:00Z')).toBe(60);
  });

  it('Europe/London, 2026-10-25: the repeated hour 01:00–02:00 matches twice', () => {
    const repeated = compileSchedule({ time_zone: 'Europe/London', days: ['sun'], from: '01:00', to: '02:00' });
    expect(scheduleAllows(repeated, at('2026-10-24T23:59:59Z'))).toBe(false); // 00:59:59 BST
    expect(scheduleAllows(repeated, at('2026-10-25T00:00:00Z'))).toBe(true); // 01:00 BST
    expect(scheduleAllows(repeated, at('2026-10-25T01:00:00Z'))).toBe(true); // 01:00 GMT
    expect(scheduleAllows(repeated, at('2026-10-25T01:59:59Z'))).toBe(true); // 01:59:59 GMT
    expect(scheduleAllows(repeated, at('2026-10-25T02:00:00Z'))).toBe(false); // 02:00 GMT
    expect(allowedMinutes(repeated, '2026-10-24T23:00:00Z', '2026-10-25T23:59:00Z')).toBe(120);
  });

  it('America/New_York, 2026-03-08 and 2026-11-01, and the same local hours in winter and summer', () => {
    const early = compileSchedule({ time_zone: 'America/New_York', days: ['sun'], from: '01:00', to: '03:00' });
    expect(scheduleAllows(early, at('2026-03-08T06:00:00Z'))).toBe(true); // 01:00 EST
    expect(scheduleAllows(early, at('2026-03-08T06:59:59Z'))).toBe(true); // 01:59:59 EST
    expect(scheduleAllows(early, at('2026-03-08T07:00:00Z'))).toBe(false); // 03:00 EDT
    expect(allowedMinutes(early, '2026-03-08T05:00:00Z', '2026-03-09T04:00:00Z')).toBe(60);
    expect(allowedMinutes(early, '2026-11-01T04:00:00Z', '2026-11-02T05:00:00Z')).toBe(180); // 01:00–02:00 twice, then 02:00–03:00

    const office = compileSchedule({ time_zone: 'America/New_York', days: weekdays, from: '09:00', to: '17:00' });
    expect(scheduleAllows(office, at('2026-01-05T14:00:00Z'))).toBe(true); // Mon 09:00 EST
    expect(scheduleAllows(office, at('2026-01-05T13:59:59Z'))).toBe(false);
    expect(scheduleAllows(office, at('2026-07-06T13:00:00Z'))).toBe(true); // Mon 09:00 EDT
    expect(scheduleAllows(office, at('2026-07-06T12:59:59Z'))).toBe(false);
    expect(scheduleAllows(office, at('2026-07-06T21:00:00Z'))).toBe(false); // 17:00 EDT
  });
});

describe('scheduleAllows: instants it cannot read', () => {
  it('fails closed on NaN, infinities, out-of-range numbers and non-numbers', () => {
    const always = compileSchedule({ time_zone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], from: '00:00', to: '24:00' });
    expect(scheduleAllows(always, 0)).toBe(true);
    expect(scheduleAllows(always, -1)).toBe(true);
    for (const t of [Number.NaN, Infinity, -Infinity, 8.64e15 + 1, '2026-03-02T04:00:00Z' as unknown as number, undefined as unknown as number]) {
      expect(scheduleAllows(always, t), String(t)).toBe(false);
    }
    expect(scheduleAllows({ time_zones: ['UTC'] }, 0)).toBe(false); // not compiled by compileSchedule
  });
});

describe('compileSchedule: validation', () => {
  const ok = { time_zone: 'Africa/Nairobi', days: ['mon'], from: '07:00', to: '20:00' };

  it('canonicalises zone names and aliases and lists each zone once', () => {
    expect(compileSchedule({ ...ok, time_zone: 'africa/nairobi' } as ScheduleWindow).time_zones).toEqual(['Africa/Nairobi']);
    expect(compileSchedule([ok, { ...ok, time_zone: 'EAT' }] as ScheduleWindow[]).time_zones).toEqual(['Africa/Nairobi']);
    expect(compileSchedule({ ...ok, time_zone: 'UTC' } as ScheduleWindow).time_zones).toEqual(['UTC']);
  });

  it('refuses unknown zones, offsets and non-strings', () => {
    expect(invalid({ ...ok, time_zone: 'Mars/Olympus_Mons' }).message).toBe('schedule.time_zone: "Mars/Olympus_Mons" is not a time zone this server knows');
    for (const zone of ['+03:00', '-05:00', '', ' Africa/Nairobi', 'Africa/Nairobi ', 3, null, undefined]) {
      expect(invalid({ ...ok, time_zone: zone }).field, String(zone)).toBe('schedule.time_zone');
    }
  });

  it('refuses days that are missing, empty, or not mon…sun', () => {
    expect(invalid({ ...ok, days: [] }).field).toBe('schedule.days');
    expect(invalid({ ...ok, days: 'mon' }).field).toBe('schedule.days');
    expect(invalid({ ...ok, days: undefined }).field).toBe('schedule.days');
    expect(invalid({ ...ok, days: ['mon', 'Tue'] }).message).toBe('schedule.days[1]: "Tue" is not one of mon, tue, wed, thu, fri, sat, sun');
    for (const day of ['monday', 'MON', 1, '']) expect(invalid({ ...ok, days: [day] }).field).toBe('schedule.days[0]');
    expect(compileSchedule({ ...ok, days: ['mon', 'mon'] } as ScheduleWindow).time_zones).toEqual(['Africa/Nairobi']);
  });

  it('refuses times that are not HH:MM within the day, 24:00 as a start, and empty windows', () => {
    expect(invalid({ ...ok, from: '7:00' }).message).toBe('schedule.from: "7:00" is not a time of day (HH:MM, 00:00–23:59)');
    for (const time of ['24:00', '23:60', '12:00:00', '1200', '12:0', ' 12:00', '-1:00', 12, null]) expect(invalid({ ...ok, from: time }).field, String(time)).toBe('schedule.from');
    for (const time of ['24:01', '25:00', '00:60', '']) expect(invalid({ ...ok, to: time }).field, time).toBe('schedule.to');
    expect(invalid({ ...ok, from: '08:00', to: '08:00' }).message).toContain('for the whole day write from "00:00" to "24:00"');
    expect(invalid({ ...ok, from: '00:00', to: '00:00' }).field).toBe('schedule.to');
  });

  it('refuses unknown keys, non-objects and empty lists, naming the window in a list', () => {
    expect(invalid({ ...ok, form: '07:00' }).field).toBe('schedule.form');
    expect(invalid(null).field).toBe('schedule');
    expect(invalid('mon-fri').field).toBe('schedule');
    expect(invalid([]).message).toMatch(/^schedule: must list one window at least/);
    expect(invalid([ok, { ...ok, to: '25:00' }], 'channels.branch.schedule').field).toBe('channels.branch.schedule[1].to');
  });
});
