/**
 * The scale bench's databases, filled by the operator command itself (`node dist/src/cli.js bench
 * seed`, built first). A finished seed is recognised by its record (`bench_seed`) and reused while
 * it is of the same sizes, under the same field key and fresh; otherwise the database is dropped
 * and seeded again. Its administrator is made afterwards with `create-admin`, as an operator would.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { readMarker, samePlan, type SeedMarker, type SeedPlan } from '../../src/cli/bench-seed-marker.js';
import { ENDED_SESSION_DAYS } from '../../src/cli/bench-seed-sessions.js';
import { loadConfig } from '../../src/platform/config.js';
import { KeyMaterial } from '../../src/platform/crypto/key-material.js';
import { resolveSecrets } from '../../src/platform/crypto/secrets.js';
import type { Database } from '../../src/platform/db/schema.js';
import { ADMIN } from './strongroom.js';

const CLI_JS = path.resolve(import.meta.dirname, '../../dist/src/cli.js');

/**
 * A seed older than this is made again: its ended sessions must stay younger than the server's
 * RECORD_RETENTION_DAYS (90 by default; the oldest are ENDED_SESSION_DAYS old at the seed), or the
 * first server started on it would spend the bench deleting them.
 */
export const SEED_FRESH_DAYS = 90 - ENDED_SESSION_DAYS - 5;

/** Runs the built CLI with `env`, its output shown as it comes; throws unless it exits 0. */
export function runBuiltCli(args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_JS, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`strongroom ${args.slice(0, 2).join(' ')} exited with ${code}`))));
  });
}

async function withDb<T>(url: string, f: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
  try {
    return await f(db);
  } finally {
    await db.destroy();
  }
}

async function adminQuery(adminUrl: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/** The blind-index key id the server and the CLI will use with `env` (its DATA_DIR's generated keys, made now if missing). */
export function benchKeyId(env: Record<string, string>): string {
  return new KeyMaterial(resolveSecrets(loadConfig(env))).blindIndex('blind-index').currentKeyId;
}

/** Why the seed in a database cannot be reused, or null when it can. */
function staleness(marker: SeedMarker, plan: SeedPlan, keyId: string, now = Date.now()): string | null {
  if (!samePlan(marker.plan, plan)) return `it is of other sizes (${JSON.stringify(marker.plan)})`;
  if (marker.keyId !== keyId) return 'it was written under another field key';
  const days = (now - marker.anchor.getTime()) / 86_400_000;
  if (days > SEED_FRESH_DAYS) return `it is ${days.toFixed(0)} days old (at most ${SEED_FRESH_DAYS})`;
  return null;
}

export interface Seeded {
  url: string;
  marker: SeedMarker;
  /** Seconds the seed took in this run; null when an earlier run's was reused. */
  seededSeconds: number | null;
}

/**
 * Database `name` on the server of `adminUrl`, seeded as `plan` says with the environment `env`
 * (the servers' own), with the bench administrator. `fresh`: drop it first, whatever it holds.
 */
export async function ensureSeeded(adminUrl: string, name: string, plan: SeedPlan, env: Record<string, string>, opts: { fresh?: boolean } = {}): Promise<Seeded> {
  const url = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const exists = (await adminQuery(adminUrl, `SELECT 1 FROM pg_database WHERE datname = '${name}'`)).rowCount === 1;
  let marker = exists && !opts.fresh ? await withDb(url, readMarker) : null;
  const why = marker ? staleness(marker, plan, benchKeyId(env)) : null;
  if (exists && (opts.fresh || why || !marker)) {
    if (why) console.log(`The seed in ${name} cannot be reused: ${why}. Seeding it again.`);
    await adminQuery(adminUrl, `DROP DATABASE ${name} WITH (FORCE)`);
    marker = null;
  }
  if (!marker) await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  let seededSeconds: number | null = null;
  if (!marker?.finishedAt) {
    const started = performance.now();
    await runBuiltCli(['bench', 'seed', '--database', name, '--users', String(plan.users), '--sessions', String(plan.sessions),
      '--active-sessions', String(plan.activeSessions), '--audit', String(plan.audit), '--months', String(plan.months)], { ...env, DATABASE_URL: url });
    seededSeconds = (performance.now() - started) / 1000;
    marker = await withDb(url, readMarker);
  }
  const hasAdmin = await withDb(url, async (db) => (await db.selectFrom('users').select('id').where('username', '=', ADMIN.username).executeTakeFirst()) !== undefined);
  if (!hasAdmin) await runBuiltCli(['create-admin', '--username', ADMIN.username], { ...env, DATABASE_URL: url, STRONGROOM_ADMIN_PASSWORD: ADMIN.password });
  return { url, marker: marker!, seededSeconds };
}
