/**
 * The record a seeded database keeps of its seed (`bench_seed`, one row, made by the seeding
 * command, not by a migration): what was asked for, under which field key, the instant every
 * synthetic time is relative to, and which batches of each phase are written
 * (`bench_seed_batches`). Each batch of rows and its record commit together, so an interrupted
 * seed continues where it stopped, whatever order its batches were written in, and the bench can
 * tell a finished seed it may reuse.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import { SEED_USERNAME_REGEX } from './bench-seed-identity.js';

export interface SeedPlan {
  users: number;
  sessions: number;
  activeSessions: number;
  audit: number;
  /** The audit entries are spread over this many months before the seed's start. */
  months: number;
}

export const DEFAULT_PLAN: SeedPlan = { users: 1_000_000, sessions: 1_000_000, activeSessions: 100_000, audit: 10_000_000, months: 13 };

/** The users are written with their sessions (bench-seed-sessions.ts); the audit entries on their own. */
export type SeedPhase = 'users' | 'audit';

export interface SeedMarker {
  plan: SeedPlan;
  /** The blind-index key id (the prefix of every blind index written): the field key the seed used. */
  keyId: string;
  /** The seed's "now": every synthetic date is relative to it, so a continued seed matches its start. */
  anchor: Date;
  startedAt: Date;
  finishedAt: Date | null;
  /** Rows per batch of each phase, fixed when the seed began (a continued seed keeps them). */
  batchSize: Record<SeedPhase, number>;
  /** The batches written, by phase (batch `b` holds rows `b * size + 1` to `(b + 1) * size`). */
  batches: Record<SeedPhase, number[]>;
  /** Rows written, by phase. */
  done: Record<SeedPhase, number>;
  /** Seconds each phase took, summed over the runs that worked on it. */
  seconds: Record<string, number>;
}

export const MARKER_TABLE = 'bench_seed';

export async function ensureMarkerTable(db: Db): Promise<void> {
  await sql`
    CREATE TABLE IF NOT EXISTS bench_seed (
      id integer PRIMARY KEY CHECK (id = 1),
      plan jsonb NOT NULL,
      key_id text NOT NULL,
      anchor timestamptz NOT NULL,
      started_at timestamptz NOT NULL,
      finished_at timestamptz,
      batch_size jsonb NOT NULL,
      seconds jsonb NOT NULL DEFAULT '{}'
    )`.execute(db);
  await sql`CREATE TABLE IF NOT EXISTS bench_seed_batches (phase text NOT NULL, batch integer NOT NULL, PRIMARY KEY (phase, batch))`.execute(db);
}

interface MarkerRow {
  plan: SeedPlan | string;
  key_id: string;
  anchor: Date | string;
  started_at: Date | string;
  finished_at: Date | string | null;
  batch_size: Record<SeedPhase, number> | string;
  seconds: Record<string, number> | string;
}

const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

/** Batch `index` of a phase: its rows `from..to` (numbered from 1). */
export interface SeedBatch {
  index: number;
  from: number;
  to: number;
}

/** The rows batches `batches` of a phase of `target` rows hold, at `size` rows a batch. */
export function rowsIn(batches: number[], size: number, target: number): number {
  return batches.reduce((n, b) => n + Math.max(0, Math.min(target, (b + 1) * size) - b * size), 0);
}

/** The seed record, or null when the database has none (never seeded, or the table is missing). */
export async function readMarker(db: Db): Promise<SeedMarker | null> {
  const exists = await sql<{ t: string | null }>`SELECT to_regclass('bench_seed_batches')::text AS t`.execute(db);
  if (!exists.rows[0]?.t) return null;
  const r = (await sql<MarkerRow>`SELECT * FROM bench_seed WHERE id = 1`.execute(db)).rows[0];
  if (!r) return null;
  const written = (await sql<{ phase: SeedPhase; batch: number }>`SELECT phase, batch FROM bench_seed_batches ORDER BY phase, batch`.execute(db)).rows;
  const plan = json(r.plan);
  const batchSize = json(r.batch_size);
  const batches = { users: written.filter((w) => w.phase === 'users').map((w) => w.batch), audit: written.filter((w) => w.phase === 'audit').map((w) => w.batch) };
  return {
    plan, keyId: r.key_id, anchor: new Date(r.anchor), startedAt: new Date(r.started_at),
    finishedAt: r.finished_at === null ? null : new Date(r.finished_at), batchSize, batches,
    done: { users: rowsIn(batches.users, batchSize.users, plan.users), audit: rowsIn(batches.audit, batchSize.audit, plan.audit) },
    seconds: json(r.seconds),
  };
}

export async function createMarker(db: Db, plan: SeedPlan, keyId: string, anchor: Date, batchSize: Record<SeedPhase, number>): Promise<void> {
  await sql`INSERT INTO bench_seed (id, plan, key_id, anchor, started_at, batch_size) VALUES (1, ${JSON.stringify(plan)}::jsonb, ${keyId}, ${anchor}, now(), ${JSON.stringify(batchSize)}::jsonb)`.execute(db);
}

/**
 * Records, in the batch's own transaction, that batch `batch` of `phase` is written. A batch
 * recorded already means another seeding run wrote it meanwhile: this throws, and the batch's
 * transaction rolls back.
 */
export async function recordBatch(trx: Db, phase: SeedPhase, batch: number): Promise<void> {
  const r = await sql`INSERT INTO bench_seed_batches (phase, batch) VALUES (${phase}, ${batch}) ON CONFLICT DO NOTHING`.execute(trx);
  if (Number(r.numAffectedRows ?? 0) !== 1) throw new Error(`Another seeding run is writing this database (batch ${batch} of ${phase} is written already); run one at a time.`);
}

export async function addSeconds(db: Db, phase: string, seconds: number): Promise<void> {
  await sql`UPDATE bench_seed SET seconds = jsonb_set(seconds, ${`{${phase}}`}::text[], to_jsonb(round((coalesce((seconds->>${phase})::numeric, 0) + ${seconds})::numeric, 1))) WHERE id = 1`.execute(db);
}

export async function finishMarker(db: Db): Promise<void> {
  await sql`UPDATE bench_seed SET finished_at = now() WHERE id = 1`.execute(db);
}

/** Users of the database the seed did not make (any user at all when it holds no seed). */
export async function foreignUsers(db: Db, seeded: boolean): Promise<number> {
  const q = seeded
    ? sql<{ n: number }>`SELECT count(*)::int AS n FROM users WHERE username !~ ${SEED_USERNAME_REGEX}`
    : sql<{ n: number }>`SELECT count(*)::int AS n FROM users`;
  return (await q.execute(db)).rows[0]?.n ?? 0;
}

export function samePlan(a: SeedPlan, b: SeedPlan): boolean {
  return a.users === b.users && a.sessions === b.sessions && a.activeSessions === b.activeSessions && a.audit === b.audit && a.months === b.months;
}
