/**
 * What `npm run soak` samples while its load runs: once a second the RSS of each node, and the
 * PostgreSQL connections to the soak's database from `pg_stat_activity`, each attributed to the
 * node that holds it (the client port of the connection is a socket of that node's process,
 * found through /proc; the sampler's own connection is left out); and CPU per window.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type pg from 'pg';
import { watchCpu, type CpuUse } from './cpu.js';
import { rssMiB } from './proc.js';

/**
 * Connections a node may hold: the sizes of its pools, read from its /metrics
 * (`strongroom_db_pool_max`), plus its LISTEN connection; undefined when /metrics does not say.
 */
export async function connectionBound(base: string): Promise<number | undefined> {
  const res = await fetch(`${base}/metrics`);
  const text = await res.text();
  if (res.status !== 200) return undefined;
  const sizes = [...text.matchAll(/^strongroom_db_pool_max\{[^}]*\} (\d+)$/gm)].map((m) => Number(m[1]));
  return sizes.length === 0 ? undefined : sizes.reduce((a, b) => a + b, 0) + 1;
}

export interface Sample {
  /** Seconds since the load began. */
  t: number;
  rssMiB: number[];
  /** Connections of each node, and all of the database's (others included). */
  pgPerNode: number[];
  pgTotal: number;
}

/** Local ports of `pid`'s TCP connections to `remotePort` (IPv4 and IPv6 tables). */
function portsTo(pid: number, remotePort: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      const port = (addr: string): number => parseInt(addr.slice(addr.lastIndexOf(':') + 1), 16);
      if (port(f[2]!) === remotePort) ports.add(port(f[1]!));
    }
  }
  return ports;
}

export async function takeSample(t: number, pids: number[], db: pg.Client, database: string, pgPort: number): Promise<Sample> {
  const rows = (await db.query<{ client_port: number | null }>('SELECT client_port FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database])).rows;
  const perNode = pids.map((pid) => {
    const ports = portsTo(pid, pgPort);
    return rows.filter((r) => r.client_port !== null && ports.has(r.client_port)).length;
  });
  return { t, rssMiB: pids.map(rssMiB), pgPerNode: perNode, pgTotal: rows.length };
}

/** Samples every `intervalMs` until `stop()`; `now()` gives the load's clock. */
export function startSampling(o: { pids: number[]; db: pg.Client; database: string; pgPort: number; now: () => number; intervalMs?: number }): { samples: Sample[]; stop(): Promise<void> } {
  const samples: Sample[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const due = Date.now() + (o.intervalMs ?? 1000);
      samples.push(await takeSample(o.now(), o.pids, o.db, o.database, o.pgPort));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/**
 * CPU over the run, on the load's clock: the processes in `focus` (the nodes, PostgreSQL) in
 * the first window after the warm-up and in the last, and other processes' share of the machine
 * in each `windowSec` from the start. `done()` waits for the last window's figure.
 */
export function watchWindows(o: { ours: number[]; focus: Record<string, { pid: number; tree?: boolean }>; warmupSec: number; windowSec: number; seconds: number }): {
  cpu: { first?: CpuUse; last?: CpuUse; foreign: number[] };
  done(): Promise<{ first: CpuUse; last: CpuUse; foreign: number[] }>;
} {
  const cpu: { first?: CpuUse; last?: CpuUse; foreign: number[] } = { foreign: [] };
  const windows = Math.ceil(o.seconds / o.windowSec);
  const timers: NodeJS.Timeout[] = [];
  const span = (from: number, key: 'first' | 'last'): void => {
    timers.push(setTimeout(() => {
      const watch = watchCpu();
      timers.push(setTimeout(() => { cpu[key] = watch.end(o.ours, o.focus); }, o.windowSec * 1000));
    }, from * 1000));
  };
  span(o.warmupSec, 'first');
  span(o.seconds - o.windowSec, 'last');
  let current = watchCpu();
  const tick = setInterval(() => {
    cpu.foreign.push(current.end(o.ours, {}).foreign);
    current = watchCpu();
    if (cpu.foreign.length >= windows) clearInterval(tick);
  }, o.windowSec * 1000);
  return {
    cpu,
    async done() {
      while (!cpu.first || !cpu.last) await new Promise((resolve) => setTimeout(resolve, 50));
      clearInterval(tick);
      timers.forEach(clearTimeout);
      if (cpu.foreign.length < windows) cpu.foreign.push(current.end(o.ours, {}).foreign);
      return { first: cpu.first, last: cpu.last, foreign: cpu.foreign };
    },
  };
}
