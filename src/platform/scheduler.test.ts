import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { Scheduler } from './scheduler.js';

/** The scheduler on PGlite (one process: no advisory lock). The PostgreSQL lock: test/system/scheduler.test.ts. */
let h: DatabaseHandle;

beforeAll(async () => {
  h = await openDatabase({ kind: 'pglite-memory' }, pino({ level: 'silent' }));
});
afterAll(async () => h.close());
afterEach(() => vi.useRealTimers());

function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('Scheduler', () => {
  it('runNow runs a job once; a second call while it runs does not overlap it', async () => {
    const s = new Scheduler({ db: h.db, kind: 'pglite', log: pino({ level: 'silent' }) });
    const g = gate();
    let runs = 0;
    s.add({ name: 'slow', everyMs: 1000, scope: 'one-node', run: async () => { runs++; await g.wait; } });
    const first = s.runNow('slow');
    expect(await s.runNow('slow')).toBe(false);
    g.open();
    expect(await first).toBe(true);
    expect(runs).toBe(1);
    expect(await s.runNow('slow')).toBe(true);
    expect(runs).toBe(2);
  });

  it('refuses two jobs of one name and an unknown name', async () => {
    const s = new Scheduler({ db: h.db, kind: 'pglite', log: pino({ level: 'silent' }) });
    s.add({ name: 'a', everyMs: 1000, scope: 'every-node', run: async () => undefined });
    expect(() => s.add({ name: 'a', everyMs: 5, scope: 'every-node', run: async () => undefined })).toThrow('Two background jobs are named "a".');
    await expect(s.runNow('b')).rejects.toThrow('No background job is named "b".');
    expect(s.names()).toEqual(['a']);
  });

  it('start runs every job on its interval; a failing job is logged and tried again; stop ends it', async () => {
    vi.useFakeTimers();
    const warnings: unknown[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const s = new Scheduler({ db: h.db, kind: 'pglite', log });
    let fast = 0;
    let failing = 0;
    s.add({ name: 'fast', everyMs: 100, scope: 'every-node', run: async () => fast++ });
    s.add({ name: 'failing', everyMs: 250, scope: 'one-node', run: async () => { failing++; throw new Error('boom'); } });
    s.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(fast).toBe(10);
    expect(failing).toBe(4);
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toMatchObject({ job: 'failing', msg: 'background job "failing" failed; will retry' });
    await s.stop();
    await vi.advanceTimersByTimeAsync(1000);
    expect(fast).toBe(10);
  });

  it('stop waits for the runs under way, so the database is not closed under a job', async () => {
    const s = new Scheduler({ db: h.db, kind: 'pglite', log: pino({ level: 'silent' }) });
    const g = gate();
    let finished = false;
    s.add({ name: 'long', everyMs: 1000, scope: 'one-node', run: async () => { await g.wait; finished = true; } });
    const run = s.runNow('long');
    let stopped = false;
    const finishedWhenStopped = s.stop().then(() => {
      stopped = true;
      return finished;
    });
    await new Promise(setImmediate); // every promise that can settle without the gate has settled
    expect(stopped).toBe(false);
    g.open();
    expect(await finishedWhenStopped).toBe(true);
    expect(await run).toBe(true);
    expect(await s.runNow('long')).toBe(false); // stopped: no new run
    await s.stop(); // twice is fine
  });
});
