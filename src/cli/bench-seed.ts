/**
 * `strongroom bench seed`: fills a PostgreSQL database with a million synthetic users, their
 * sessions and a year of audit entries (bench-seed-run.ts), for measuring the service at scale.
 *
 * A seeded database has a million accounts with one published password, so the command must
 * never reach a database people use. It opens only the database (not the services, which would
 * start jobs and bootstrap an administrator) and refuses, before writing anything: under
 * NODE_ENV=production; on the embedded PGlite database; unless the operator names the database
 * DATABASE_URL opens (--database); when the database holds any user it did not make; and when it
 * holds a seed of other sizes or another field key. There is no option to override these: a
 * benchmark database is cheap to create.
 */
import os from 'node:os';
import type { Logger } from 'pino';
import { sql } from 'kysely';
import type { Config, NodeEnv } from '../platform/config.js';
import { KeyMaterial } from '../platform/crypto/key-material.js';
import { resolveSecrets } from '../platform/crypto/secrets.js';
import { openDatabase, type Db } from '../platform/db/database.js';
import { databaseTarget } from '../runtime.js';
import type { BenchSeedCommand } from './bench-seed-args.js';
import { SEED_PASSWORD, passwordUsers } from './bench-seed-identity.js';
import { foreignUsers, readMarker, samePlan, type SeedMarker, type SeedPlan } from './bench-seed-marker.js';
import { seedDatabase, type SeedProgress } from './bench-seed-run.js';
import { CommandFailed, type Print } from './usage.js';

/** What the command knows about its target before it writes anything. */
export interface SeedFacts {
  env: NodeEnv;
  /** The database DATABASE_URL opens (current_database()), and the name the operator gave. */
  databaseName: string;
  given: string;
  /** Users the seed did not make (any user, when there is no seed yet). */
  foreignUsers: number;
  marker: SeedMarker | null;
  plan: SeedPlan;
  /** The blind-index key id of the environment's field key. */
  keyId: string;
}

/** Batches written at once: one PostgreSQL backend per core, at most four. */
const SEED_LANES = Math.min(4, os.availableParallelism());

const IN_PRODUCTION = 'bench seed does not run with NODE_ENV=production: it writes a million accounts with a published password.';

const fmt = (n: number): string => n.toLocaleString('en-US');
const describePlan = (p: SeedPlan): string =>
  `${fmt(p.users)} users, ${fmt(p.sessions)} sessions (${fmt(p.activeSessions)} active), ${fmt(p.audit)} audit entries over ${p.months} months`;

export type SeedDecision = { kind: 'refuse'; reason: string } | { kind: 'finished' } | { kind: 'seed' };

/**
 * What the command does with the database: refuse (and why), nothing (it holds this very seed,
 * finished: a user added since, such as its administrator, does not matter then), or seed it.
 */
export function seedDecision(f: SeedFacts): SeedDecision {
  const refuse = (reason: string): SeedDecision => ({ kind: 'refuse', reason });
  if (f.env === 'production') return refuse(IN_PRODUCTION);
  if (f.given !== f.databaseName) return refuse(`DATABASE_URL opens the database "${f.databaseName}", not "${f.given}" (--database): nothing was written. Name the database you mean to fill.`);
  if (f.marker && f.marker.keyId !== f.keyId) return refuse(`The seed in "${f.databaseName}" was written under another field key (blind-index key ${f.marker.keyId}; this environment's is ${f.keyId}): run the command with the environment of that seed, or seed a new database.`);
  if (f.marker && !samePlan(f.marker.plan, f.plan)) return refuse(`"${f.databaseName}" holds a seed of ${describePlan(f.marker.plan)}${f.marker.finishedAt ? '' : ' (unfinished)'}; this asks for ${describePlan(f.plan)}. Give the same sizes to continue or keep it, or seed a new database.`);
  if (f.marker?.finishedAt) return { kind: 'finished' };
  if (f.foreignUsers > 0) {
    return refuse(`The database "${f.databaseName}" holds ${fmt(f.foreignUsers)} user${f.foreignUsers === 1 ? '' : 's'} the seed did not make: it seeds only a database of its own. Create an empty database, seed it, then create its administrator (strongroom create-admin).`);
  }
  return { kind: 'seed' };
}

async function gatherFacts(db: Db, config: Config, cmd: BenchSeedCommand, keyId: string): Promise<SeedFacts> {
  const current = await sql<{ name: string; users: string | null }>`SELECT current_database() AS name, to_regclass('users')::text AS users`.execute(db);
  const row = current.rows[0]!;
  const marker = row.users === null ? null : await readMarker(db);
  return {
    env: config.env, databaseName: row.name, given: cmd.database, plan: cmd.plan, keyId, marker,
    foreignUsers: row.users === null ? 0 : await foreignUsers(db, marker !== null),
  };
}

/** Prints each phase's progress at most every 10 seconds, and its end. */
function progressPrinter(print: Print): (p: SeedProgress) => void {
  let last = 0;
  return (p) => {
    const now = performance.now();
    if (p.done < p.target && now - last < 10_000) return;
    last = now;
    print(p.phase === 'vacuum' ? `  VACUUM ANALYZE: ${p.seconds.toFixed(0)} s` : `  ${p.phase}: ${fmt(p.done)} of ${fmt(p.target)} (${p.seconds.toFixed(0)} s)`);
  };
}

export async function benchSeed(config: Config, cmd: BenchSeedCommand, log: Logger, print: Print): Promise<void> {
  if (config.env === 'production') throw new CommandFailed(IN_PRODUCTION);
  if (!config.databaseUrl) throw new CommandFailed('bench seed needs DATABASE_URL (a PostgreSQL database of its own); it never writes to the embedded PGlite database.');
  const keys = new KeyMaterial(resolveSecrets(config));
  const database = await openDatabase(databaseTarget(config), log);
  try {
    const facts = await gatherFacts(database.db, config, cmd, keys.blindIndex('blind-index').currentKeyId);
    const decision = seedDecision(facts);
    if (decision.kind === 'refuse') throw new CommandFailed(decision.reason);
    if (decision.kind === 'finished') {
      print(`${database.location}: already holds a finished seed of ${describePlan(cmd.plan)} (begun ${facts.marker!.startedAt.toISOString()}); nothing to do.`);
      return;
    }
    await database.migrate();
    print(`${database.location}: ${facts.marker ? 'continuing the seed of' : 'seeding'} ${describePlan(cmd.plan)} ...`);
    const started = performance.now();
    const marker = await seedDatabase(database.db, {
      keys, encrypt: config.dbFieldEncryption, bcryptCost: config.passwords.bcryptCost, plan: cmd.plan, now: new Date(), lanes: SEED_LANES, onProgress: progressPrinter(print),
    });
    const phases = Object.entries(marker.seconds).map(([k, v]) => `${k} ${v.toFixed(0)} s`).join(', ');
    print(`Seeded in ${((performance.now() - started) / 1000).toFixed(0)} s (${phases}).`);
    const [sample] = passwordUsers(cmd.plan.users, 1);
    print(`Sign in as any synthetic user whose number n has n mod 10 < 6, e.g. "${sample!.username}" or "${sample!.email}", with the password "${SEED_PASSWORD}".`);
  } finally {
    await database.close();
  }
}
