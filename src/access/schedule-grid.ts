/**
 * A schedule as the console's editor draws it: a week of hours (7 days × 24 hours, Monday
 * first) in one time zone, and back to the policy's windows (rules/schedule.ts): each day's runs
 * of hours become windows, days with the same runs share one. A window whose ends are not on the
 * hour is drawn by the hours it starts in, and `exact` says the drawing lost something. Pure.
 */
import { WEEKDAYS, type ScheduleWindow, type Weekday } from './rules/schedule.js';

/** grid[day][hour]: day 0 is Monday. */
export type HourGrid = boolean[][];

export const emptyGrid = (): HourGrid => WEEKDAYS.map(() => Array.from({ length: 24 }, () => false));

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const hhmm = (hour: number): string => `${String(hour).padStart(2, '0')}:00`;

/** The windows drawn on a grid, their zone (the first window's; null without one), and whether the drawing is exact. */
export function gridOf(windows: readonly ScheduleWindow[]): { grid: HourGrid; timeZone: string | null; exact: boolean } {
  const grid = emptyGrid();
  let exact = new Set(windows.map((w) => w.time_zone)).size <= 1;
  for (const w of windows) {
    const from = minutesOf(w.from);
    let to = minutesOf(w.to);
    if (from % 60 !== 0 || to % 60 !== 0) exact = false;
    if (to <= from) to += 24 * 60; // crosses midnight: runs into the next day
    for (const day of w.days) {
      const d = WEEKDAYS.indexOf(day);
      for (let m = Math.floor(from / 60) * 60; m < to; m += 60) grid[(d + Math.floor(m / 1440)) % 7]![(m % 1440) / 60] = true;
    }
  }
  return { grid, timeZone: windows[0]?.time_zone ?? null, exact };
}

/** The day's runs of allowed hours, as [from, to) hour pairs. */
function runs(hours: readonly boolean[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let h = 0; h < 24; h++) {
    if (!hours[h]) continue;
    const start = h;
    while (h < 24 && hours[h]) h++;
    out.push([start, h]);
  }
  return out;
}

/** The grid as windows in `timeZone`; days with the same hours share a window. An empty grid is no window. */
export function windowsOf(grid: HourGrid, timeZone: string): ScheduleWindow[] {
  const byRun = new Map<string, Weekday[]>();
  grid.forEach((hours, d) => {
    for (const [from, to] of runs(hours)) {
      const key = `${hhmm(from)}-${hhmm(to)}`;
      byRun.set(key, [...(byRun.get(key) ?? []), WEEKDAYS[d]!]);
    }
  });
  return [...byRun].map(([key, days]) => ({ time_zone: timeZone, days, from: key.slice(0, 5), to: key.slice(6) }));
}
