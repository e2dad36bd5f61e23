/**
 * The in-process background scheduler. Modules hand it their jobs (`Module.jobs`); it knows none
 * by name. A job runs every `everyMs`, never overlapping itself on this node:
 *
 * - `every-node`: each node runs it (re-syncing a node's own caches).
 * - `one-node`: one node at a time across the cluster, under a PostgreSQL session advisory lock
 *   keyed by the job's name; a node that finds the lock taken skips that turn. On PGlite there
 *   is one process by construction (its lock file), so no lock is taken.
 *
 * Jobs must be idempotent all the same: a node may run a one-node job just after another did.
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from './db/database.js';
import { ADVISORY_LOCKS } from './db/locks.js';

export interface Job {
  /** Unique, readable: it names the job in logs and in `runNow`. */
  name: string;
  everyMs: number;
  scope: 'every-node' | 'one-node';
  /** `stopping` is aborted when the scheduler stops: a long run (a backlog) ends at its next step. */
  run(stopping: AbortSignal): Promise<unknown>;
}


export class Scheduler {
  private readonly jobs = new Map<string, Job>();
  /** The run under way of each job on this node. */
  private readonly underWay = new Map<string, Promise<boolean>>();
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private readonly stopping = new AbortController();
  /** One-node jobs run one after another on a node (each holds a pooled connection). */
  private lane: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: { db: Db; kind: 'pglite' | 'postgres'; log: Logger }) {}

  add(job: Job): void {
    if (this.jobs.has(job.name)) throw new Error(`Two background jobs are named "${job.name}".`);
    this.jobs.set(job.name, job);
  }

  names(): string[] {
    return [...this.jobs.keys()];
  }

  start(): void {
    for (const job of this.jobs.values()) {
      const t = setInterval(() => {
        this.runNow(job.name).catch((err: unknown) => this.deps.log.warn({ err, job: job.name }, `background job "${job.name}" failed; will retry`));
      }, job.everyMs);
      t.unref();
      this.timers.push(t);
    }
  }

  /**
   * Starts no more runs (one-node runs still queued for their turn are dropped), and resolves
   * once the runs under way have ended, so the database may then close. Safe to call twice.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.allSettled([...this.underWay.values()]);
  }

  /**
   * Runs a job now, as its timer would. Resolves false when it did not run: this node is still
   * running it, the scheduler is stopped, or (one-node) another node holds its lock.
   */
  async runNow(name: string): Promise<boolean> {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`No background job is named "${name}".`);
    if (this.stopped || this.underWay.has(name)) return false;
    const run = this.run(job);
    this.underWay.set(name, run);
    try {
      return await run;
    } finally {
      this.underWay.delete(name);
    }
  }

  private async run(job: Job): Promise<boolean> {
    if (job.scope === 'every-node' || this.deps.kind === 'pglite') {
      await job.run(this.stopping.signal);
      return true;
    }
    // A session-level lock on one pooled connection, held while the job runs on others. One
    // such job at a time on a node (the lane), so the scheduler never holds more than one
    // connection of the pool, however many jobs fall due together.
    const turn = this.lane.then(() => this.runLocked(job));
    this.lane = turn.catch(() => undefined);
    return turn;
  }

  private async runLocked(job: Job): Promise<boolean> {
    if (this.stopped) return false; // its turn came after stop
    const name = job.name;
    return this.deps.db.connection().execute(async (conn) => {
      const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${ADVISORY_LOCKS.jobs}::int, hashtext(${name})) AS locked`.execute(conn);
      if (rows[0]?.locked !== true) return false;
      try {
        await job.run(this.stopping.signal);
        return true;
      } finally {
        await sql`SELECT pg_advisory_unlock(${ADVISORY_LOCKS.jobs}::int, hashtext(${name}))`.execute(conn);
      }
    });
  }
}
