/**
 * zxcvbn pattern matching off the event loop. The dictionaries take about 45 MiB and a few
 * hundred milliseconds to load, and a check of a long password takes milliseconds: both would
 * stall every other request. A worker thread loads them on first use and exits after
 * `idleMs` without work, which gives the memory back (docs/benchmarks.md, idle RSS).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface Match {
  pattern: string;
  length: number;
}

const require = createRequire(import.meta.url);

// CommonJS evaluated in the worker: module paths are resolved here, so it runs the same under
// node, tsx and vitest.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { ZxcvbnFactory } = require(workerData.core);
const common = require(workerData.common);
const en = require(workerData.en);
const zxcvbn = new ZxcvbnFactory({ dictionary: { ...common.dictionary, ...en.dictionary }, graphs: common.adjacencyGraphs });
parentPort.on('message', ({ id, password }) => {
  try {
    const matches = zxcvbn.check(password).sequence.map((m) => ({ pattern: m.pattern, length: m.token.length }));
    parentPort.postMessage({ id, matches });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err) });
  }
});`;

type Pending = Map<number, { resolve: (m: Match[]) => void; reject: (e: Error) => void }>;

export class StrengthChecker {
  /** The live worker and the checks it owes: a worker that exits fails only its own checks. */
  private current: { worker: Worker; pending: Pending } | undefined;
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly idleMs = 10_000) {}

  /** The patterns zxcvbn finds in `password`. */
  check(password: string): Promise<Match[]> {
    const { worker, pending } = this.ensureWorker();
    clearTimeout(this.idleTimer);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, password });
    });
  }

  private ensureWorker(): { worker: Worker; pending: Pending } {
    if (this.current) return this.current;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { core: require.resolve('@zxcvbn-ts/core'), common: require.resolve('@zxcvbn-ts/language-common'), en: require.resolve('@zxcvbn-ts/language-en') },
    });
    worker.unref();
    const pending: Pending = new Map();
    worker.on('message', (msg: { id: number; matches?: Match[]; error?: string }) => {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.matches) p?.resolve(msg.matches);
      else p?.reject(new Error(`password strength check failed: ${msg.error}`));
      if (pending.size === 0 && this.current?.worker === worker) this.scheduleIdleExit();
    });
    const fail = (err: Error): void => {
      for (const p of pending.values()) p.reject(err);
      pending.clear();
      if (this.current?.worker === worker) this.current = undefined;
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('password strength worker exited')));
    this.current = { worker, pending };
    return this.current;
  }

  private scheduleIdleExit(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.close(), this.idleMs);
    this.idleTimer.unref();
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const w = this.current?.worker;
    this.current = undefined;
    if (w) await w.terminate();
  }
}
