/**
 * A whole seed, phase after phase (users with their sessions, then audit entries, then VACUUM
 * ANALYZE), each in batches that commit with their record: a seed stopped at any point continues
 * where it was. `lanes` batches are written at once, each on its own connection (PostgreSQL runs
 * one statement on one core; two lanes use both of a two-core machine). The callers (the
 * command, the PostgreSQL suite) decide first whether the database may be seeded at all
 * (bench-seed.ts).
 */
import { sql } from 'kysely';
import { ensureAuditPartitions, listAuditPartitions } from '../audit/partitions.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Db } from '../platform/db/database.js';
import { auditPeriod, insertAudit } from './bench-seed-audit.js';
import { seedContext, type SeedContext } from './bench-seed-context.js';
import { addSeconds, createMarker, ensureMarkerTable, finishMarker, readMarker, samePlan, type SeedBatch, type SeedMarker, type SeedPhase, type SeedPlan } from './bench-seed-marker.js';
import { insertUsers } from './bench-seed-users.js';

/** Rows per batch and transaction, per phase: small enough to commit often, large enough to be set-based. */
export const SEED_BATCH: Record<SeedPhase, number> = { users: 10_000, audit: 250_000 };

export interface SeedProgress {
  phase: SeedPhase | 'vacuum';
  done: number;
  target: number;
  /** Seconds since this phase began in this run. */
  seconds: number;
}

export interface SeedRunOptions {
  keys: KeyMaterial;
  /** DB_FIELD_ENCRYPTION: whether email, phone, push tokens and session keys are written encrypted. */
  encrypt: boolean;
  bcryptCost: number;
  plan: SeedPlan;
  /** The seed's "now" when it starts a new seed (a continued one keeps its own). */
  now: Date;
  /** Batches written at once, each on its own connection (default 1; PGlite has one connection). */
  lanes?: number;
  onProgress?: (p: SeedProgress) => void;
}

/** The tables a seed fills (the audit log's partitions are vacuumed one by one), vacuumed and analysed at its end. */
const SEEDED_TABLES = ['users', 'credentials', 'credential_history', 'user_roles', 'mfa_factors', 'device_tokens', 'sessions', 'refresh_families', 'refresh_tokens'];

/**
 * Runs `tasks` with `lanes` of them at a time. After a failure no task starts, and this throws
 * only once the tasks under way have ended (none is left writing when the caller closes the database).
 */
async function inLanes<T>(tasks: T[], lanes: number, run: (task: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < tasks.length && !failed; i = next++) {
      try {
        await run(tasks[i]!);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const ended = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(lanes, tasks.length)) }, lane));
  const failure = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
  if (failure) throw failure.reason;
}

/** The batches of a phase of `target` rows not written yet. */
function remaining(marker: SeedMarker, phase: SeedPhase, target: number): SeedBatch[] {
  const size = marker.batchSize[phase];
  const written = new Set(marker.batches[phase]);
  const batches: SeedBatch[] = [];
  for (let index = 0; index * size < target; index++) {
    if (!written.has(index)) batches.push({ index, from: index * size + 1, to: Math.min(target, (index + 1) * size) });
  }
  return batches;
}

async function runPhase(ctx: SeedContext, marker: SeedMarker, phase: SeedPhase, insert: (ctx: SeedContext, b: SeedBatch) => Promise<void>, opts: SeedRunOptions): Promise<void> {
  const target = phase === 'users' ? marker.plan.users : marker.plan.audit;
  const todo = remaining(marker, phase, target);
  if (todo.length === 0) return;
  const started = performance.now();
  let done = marker.done[phase];
  await inLanes(todo, opts.lanes ?? 1, async (batch) => {
    await insert(ctx, batch);
    done += batch.to - batch.from + 1;
    opts.onProgress?.({ phase, done, target, seconds: (performance.now() - started) / 1000 });
  });
  await addSeconds(ctx.db, phase, (performance.now() - started) / 1000);
}

/**
 * Bulk-loaded tables: VACUUM sets the visibility map (index-only scans, as the audit counts use)
 * and hint bits, so the first queries of a bench do not pay for them; ANALYZE gives the planner
 * their sizes, the partitioned parent's included.
 */
async function vacuum(db: Db, opts: SeedRunOptions): Promise<void> {
  const started = performance.now();
  const partitions = (await listAuditPartitions(db)).map((p) => p.name);
  await inLanes([...SEEDED_TABLES, ...partitions], opts.lanes ?? 1, async (table) => {
    await sql`VACUUM (ANALYZE) ${sql.table(table)}`.execute(db);
  });
  await sql`ANALYZE audit_log`.execute(db);
  const seconds = (performance.now() - started) / 1000;
  opts.onProgress?.({ phase: 'vacuum', done: 1, target: 1, seconds });
  await addSeconds(db, 'vacuum', seconds);
}

/**
 * Seeds `db` (migrated) as `opts.plan` says, or continues the seed it holds. Returns the seed's
 * record once finished. Throws when the database holds a seed of another plan or field key: the
 * callers check that first (`seedDecision`).
 */
export async function seedDatabase(db: Db, opts: SeedRunOptions): Promise<SeedMarker> {
  await ensureMarkerTable(db);
  const keyId = opts.keys.blindIndex('blind-index').currentKeyId;
  let marker = await readMarker(db);
  if (!marker) {
    await createMarker(db, opts.plan, keyId, opts.now, SEED_BATCH);
    marker = (await readMarker(db))!;
  }
  if (marker.keyId !== keyId) throw new Error(`The seed in this database was written under another field key (${marker.keyId}, not ${keyId}).`);
  if (!samePlan(marker.plan, opts.plan)) throw new Error(`The seed in this database is of another size (${JSON.stringify(marker.plan)}).`);
  if (marker.finishedAt) return marker;
  const ctx = await seedContext(db, { ...opts, plan: marker.plan, anchor: marker.anchor });
  await runPhase(ctx, marker, 'users', insertUsers, opts);
  if (marker.done.audit < marker.plan.audit) {
    const period = auditPeriod(marker.anchor, marker.plan.months);
    await ensureAuditPartitions(db, period.from, period.to);
  }
  await runPhase(ctx, marker, 'audit', insertAudit, opts);
  await vacuum(db, opts);
  await finishMarker(db);
  return (await readMarker(db))!;
}
