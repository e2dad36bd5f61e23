import { describe, expect, it } from 'vitest';
import { compileSchedule } from './rules/schedule.js';
import { emptyGrid, gridOf, windowsOf } from './schedule-grid.js';

describe('a schedule drawn as a week of hours', () => {
  it('Monday to Saturday 07:00-20:00 in Nairobi: drawn and written back as one window the server compiles', () => {
    const windows = [{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const, from: '07:00', to: '20:00' }];
    const { grid, timeZone, exact } = gridOf(windows.map((w) => ({ ...w, days: [...w.days] })));
    expect(timeZone).toBe('Africa/Nairobi');
    expect(exact).toBe(true);
    expect(grid[0]!.map((on, h) => (on ? h : -1)).filter((h) => h >= 0)).toEqual([7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(grid[6]!.every((on) => !on)).toBe(true);
    const back = windowsOf(grid, 'Africa/Nairobi');
    expect(back).toEqual([{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], from: '07:00', to: '20:00' }]);
    expect(() => compileSchedule(back)).not.toThrow();
  });

  it('a whole day ends at 24:00; split runs are two windows; days with other hours get their own', () => {
    const grid = emptyGrid();
    grid[6] = grid[6]!.map(() => true);
    for (const h of [8, 9, 14, 15]) grid[0]![h] = true;
    expect(windowsOf(grid, 'UTC')).toEqual([
      { time_zone: 'UTC', days: ['mon'], from: '08:00', to: '10:00' },
      { time_zone: 'UTC', days: ['mon'], from: '14:00', to: '16:00' },
      { time_zone: 'UTC', days: ['sun'], from: '00:00', to: '24:00' },
    ]);
    expect(windowsOf(emptyGrid(), 'UTC')).toEqual([]);
  });

  it('a window crossing midnight runs into the next day (Sunday into Monday); minutes off the hour or two zones make the drawing inexact', () => {
    const { grid, exact } = gridOf([{ time_zone: 'UTC', days: ['sun'], from: '22:00', to: '02:00' }]);
    expect(exact).toBe(true);
    expect(grid[6]![22]).toBe(true);
    expect(grid[6]![23]).toBe(true);
    expect(grid[0]![0]).toBe(true);
    expect(grid[0]![1]).toBe(true);
    expect(grid[0]![2]).toBe(false);
    expect(gridOf([{ time_zone: 'UTC', days: ['mon'], from: '07:30', to: '20:00' }])).toMatchObject({ exact: false });
    expect(gridOf([{ time_zone: 'UTC', days: ['mon'], from: '07:00', to: '08:00' }, { time_zone: 'Europe/Paris', days: ['mon'], from: '09:00', to: '10:00' }])).toMatchObject({ exact: false });
  });
});
