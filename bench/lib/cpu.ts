/**
 * How much of the machine's CPU other processes used while a row ran. The bench shares two cores
 * with whatever else runs here (test suites, builds); a figure measured while something else ate
 * half the machine is not this service's figure, so each row reports it.
 */
import { readdirSync, readFileSync } from 'node:fs';

interface Snapshot {
  busy: number;
  total: number;
  procs: Map<number, { ppid: number; ticks: number }>;
}

function snapshot(): Snapshot {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0); // guest time is already in user
  const idle = cpu[3]! + cpu[4]!;
  const procs = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
      // utime + stime, plus cutime + cstime: children that ended and were reaped during the row
      // (a short-lived `openssl speed`, a PostgreSQL backend) still count for their parent.
      procs.set(Number(name), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    } catch {
      // the process ended meanwhile
    }
  }
  return { busy: total - idle, total, procs };
}

function descendants(procs: Snapshot['procs'], roots: number[]): Set<number> {
  const ours = new Set(roots.filter((p) => procs.has(p)));
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, p] of procs) {
      if (!ours.has(pid) && ours.has(p.ppid)) {
        ours.add(pid);
        grew = true;
      }
    }
  }
  return ours;
}

export interface CpuUse {
  /** Share of the whole machine (0..1) used by processes outside ours. */
  foreign: number;
  /** CPU seconds used by each named process (all its threads), with its descendants when `tree`. */
  sec: Record<string, number>;
}

const TICKS_PER_SEC = 100; // USER_HZ

/** Several windows as one: CPU seconds added up, the other load weighted by each window's length. */
export function combineCpu(parts: Array<{ cpu: CpuUse; seconds: number }>): CpuUse {
  const seconds = parts.reduce((a, p) => a + p.seconds, 0);
  const sec: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.cpu.sec)) sec[k] = (sec[k] ?? 0) + v;
  return { foreign: parts.reduce((a, p) => a + p.cpu.foreign * p.seconds, 0) / seconds, sec };
}

/** Starts watching; `end(ours, focus)` counts `ours` and their descendants as this bench's own processes. */
export function watchCpu(): { end(ours: number[], focus: Record<string, { pid: number; tree?: boolean }>): CpuUse } {
  const a = snapshot();
  return {
    end(roots, focus) {
      const b = snapshot();
      const used = (pids: Set<number>): number => {
        let ticks = 0;
        for (const pid of pids) ticks += b.procs.get(pid)!.ticks - (a.procs.get(pid)?.ticks ?? 0);
        return ticks;
      };
      const total = b.total - a.total;
      const foreign = total > 0 ? Math.max(0, b.busy - a.busy - used(descendants(b.procs, roots))) / total : 0;
      const sec = Object.fromEntries(Object.entries(focus).map(([name, f]) => [name, used(f.tree ? descendants(b.procs, [f.pid]) : new Set(b.procs.has(f.pid) ? [f.pid] : [])) / TICKS_PER_SEC]));
      return { foreign, sec };
    },
  };
}

/** The postmaster listening on `port` (the harness passes `-p PORT` on its command line). */
export function postmasterPid(port: number): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const i = args.indexOf('-p');
      if (i >= 0 && args[i + 1] === String(port) && args[0]!.endsWith('postgres')) return Number(name);
    } catch {
      // ended meanwhile
    }
  }
  return undefined;
}

let quietBudgetMs = 60_000;

/**
 * Waits until other processes use less than `share` of the machine over one second, at most 15 s
 * a call and 60 s a run, so a test suite that someone else runs meanwhile can finish first.
 * Returns the share seen last.
 */
export async function awaitQuiet(ours: number[], share = 0.1): Promise<number> {
  const deadline = Date.now() + Math.min(15_000, quietBudgetMs);
  const begun = Date.now();
  try {
    for (;;) {
      const watch = watchCpu();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const foreign = watch.end(ours, {}).foreign;
      if (foreign < share || Date.now() >= deadline) return foreign;
    }
  } finally {
    quietBudgetMs = Math.max(0, quietBudgetMs - (Date.now() - begun));
  }
}
