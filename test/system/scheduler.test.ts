/**
 * One-node jobs across two nodes on one PostgreSQL: while one node runs a job, the other skips
 * its turn (the advisory lock is taken); once it ends, the other can run it; every-node jobs
 * run on both at once.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/platform/db/database.js';
import { Scheduler } from '../../src/platform/scheduler.js';
import { freshPostgresDatabase, openTestDatabase } from '../harness/app.js';

let a: DatabaseHandle;
let b: DatabaseHandle;

beforeEach(async () => {
  const url = await freshPostgresDatabase();
  a = await openTestDatabase('postgres', url);
  b = await openTestDatabase('postgres', url);
});
afterEach(async () => {
  await a.close();
  await b.close();
});

function node(h: DatabaseHandle): Scheduler {
  return new Scheduler({ db: h.db, kind: 'postgres', log: pino({ level: 'silent' }) });
}

describe('Scheduler on two nodes', () => {
  it('a one-node job runs on one node at a time; the other skips its turn, then runs it once the lock is free', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const runs: string[] = [];
    const nodeA = node(a);
    const nodeB = node(b);
    nodeA.add({ name: 'clean-up', everyMs: 60_000, scope: 'one-node', run: async () => { runs.push('a'); started(); await held; } });
    nodeB.add({ name: 'clean-up', everyMs: 60_000, scope: 'one-node', run: async () => { runs.push('b'); } });
    const onA = nodeA.runNow('clean-up');
    await running;
    expect(await nodeB.runNow('clean-up')).toBe(false);
    release();
    expect(await onA).toBe(true);
    expect(await nodeB.runNow('clean-up')).toBe(true);
    expect(runs).toEqual(['a', 'b']);
  });

  it('an every-node job runs on both nodes at once', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside = 0;
    let most = 0;
    let bothInside!: () => void;
    const bothEntered = new Promise<void>((resolve) => (bothInside = resolve));
    const job = { name: 'sync', everyMs: 60_000, scope: 'every-node' as const, run: async () => { inside++; most = Math.max(most, inside); if (inside === 2) bothInside(); await held; inside--; } };
    const nodeA = node(a);
    const nodeB = node(b);
    nodeA.add(job);
    nodeB.add(job);
    const both = Promise.all([nodeA.runNow('sync'), nodeB.runNow('sync')]);
    await bothEntered; // both nodes are inside the job at once
    release();
    expect(await both).toEqual([true, true]);
    expect(most).toBe(2);
  });

  it('a failing one-node job releases its lock', async () => {
    const nodeA = node(a);
    const nodeB = node(b);
    nodeA.add({ name: 'flaky', everyMs: 60_000, scope: 'one-node', run: async () => { throw new Error('boom'); } });
    nodeB.add({ name: 'flaky', everyMs: 60_000, scope: 'one-node', run: async () => undefined });
    await expect(nodeA.runNow('flaky')).rejects.toThrow('boom');
    expect(await nodeB.runNow('flaky')).toBe(true);
  });

  it('one-node jobs due together on a node run one at a time (one pooled connection); those still queued at stop do not run', async () => {
    const nodeA = node(a);
    let inside = 0;
    let most = 0;
    const started: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstIn!: () => void;
    const first = new Promise<void>((resolve) => (firstIn = resolve));
    for (const name of ['j1', 'j2', 'j3', 'j4']) {
      nodeA.add({ name, everyMs: 60_000, scope: 'one-node', run: async () => {
        started.push(name);
        most = Math.max(most, ++inside);
        firstIn();
        await held;
        inside--;
      } });
    }
    const runs = ['j1', 'j2', 'j3', 'j4'].map((n) => nodeA.runNow(n));
    await first;
    expect(started).toEqual(['j1']); // the others wait for their turn
    const stopping = nodeA.stop();
    release();
    await stopping;
    expect(await Promise.all(runs)).toEqual([true, false, false, false]);
    expect(started).toEqual(['j1']);
    expect(most).toBe(1);
  });
});
