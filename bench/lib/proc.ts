/** Child processes for the bench: start one, wait until it answers /health, read its RSS, stop it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Child {
  name: string;
  pid: number;
  url: string;
  /** Last lines the process printed, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<Child>();

/** Stops every child still running (used in `finally` and on SIGINT). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((c) => c.stop()));
}

function exited(proc: ChildProcess): Promise<void> {
  return proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : new Promise((resolve) => proc.once('exit', () => resolve()));
}

export async function startNode(name: string, args: string[], env: Record<string, string>, port: number): Promise<Child> {
  const proc = spawn(process.execPath, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const child: Child = {
    name,
    pid: proc.pid!,
    url: `http://127.0.0.1:${port}`,
    output: () => tail,
    async stop() {
      running.delete(child);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited(proc);
      clearTimeout(timer);
    },
  };
  running.add(child);

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with code ${proc.exitCode} before answering:\n${tail}`);
    try {
      const res = await fetch(`${child.url}/health`);
      await res.arrayBuffer();
      if (res.ok) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`${name} did not answer /health within 60 s:\n${tail}`);
    }
    await sleep(100);
  }
}

/** Resident set size of a process in MiB, from /proc/<pid>/status (VmRSS is in KiB). */
export function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
