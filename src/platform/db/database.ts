/**
 * Opens the system of record: PostgreSQL when `DATABASE_URL` is set, otherwise PGlite (the same
 * PostgreSQL, compiled to WASM, in-process) under `DATA_DIR/pglite`. Same SQL, same migrations.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PreparingClient } from './prepared.js';
import type { Logger } from 'pino';
import { LocalBus, PgBus, type EventBus } from './bus.js';
import { runMigrations } from './migrate.js';
import type { Database } from './schema.js';
import { tracedDialect } from './traced-dialect.js';

export type Db = Kysely<Database>;

/** A connection pool's use now (PostgreSQL): what /metrics reports as pool saturation. */
export interface PoolStats {
  /** `main`, or `index_scans` (INDEX_SCAN_POOL). */
  name: string;
  max: number;
  /** Open connections, in use or idle. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

export interface DatabaseHandle {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Where the data lives, without credentials: for logs. */
  location: string;
  bus: EventBus;
  /**
   * PostgreSQL: a pool of INDEX_SCAN_POOL connections whose sessions never plan a sequential scan
   * (`enable_seqscan=off`), for the few read queries that must use their indexes even where the
   * cost model guesses a scan is as cheap (the FAQ search: docs/decisions.md "FAQ"). It saves
   * those queries the transaction a `SET LOCAL` would need (three round trips). PGlite: null (one
   * connection; such a caller sets the planner in its own transaction).
   */
  indexScans: Db | null;
  migrate(): Promise<string[]>;
  /**
   * PGlite: the whole data directory as an uncompressed tarball, which `pglite-memory`'s `image`
   * opens again in well under a second (a fresh one runs initdb: seconds). PostgreSQL: refused.
   */
  snapshot(): Promise<Blob>;
  ping(): Promise<void>;
  /** PostgreSQL: each connection pool's use now (`main`, `index_scans`). PGlite: none. */
  pools(): PoolStats[];
  close(): Promise<void>;
}

export type DatabaseTarget =
  | { kind: 'postgres'; url: string; poolSize?: number; /** Named prepared statements on the main pool (src/platform/db/prepared.ts); default on. */ preparedStatements?: boolean }
  | { kind: 'pglite'; dataDir: string }
  | { kind: 'pglite-memory'; image?: Blob };

export { DatabaseLockedError } from './lock.js';

/** Redacts the password of a connection string for logs. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return 'PostgreSQL (unparseable DATABASE_URL)';
  }
}

/** Connections of `indexScans` (PostgreSQL), on top of the main pool. */
export const INDEX_SCAN_POOL = 4;

export async function openDatabase(target: DatabaseTarget, log: Logger): Promise<DatabaseHandle> {
  let db: Db;
  let indexScans: Db | null = null;
  let bus: EventBus;
  let location: string;
  let release = (): void => undefined;
  let closeDb = async (): Promise<void> => db.destroy();
  let pools = (): PoolStats[] => [];
  let snapshot = async (): Promise<Blob> => {
    throw new Error('only an embedded PGlite database can be snapshotted');
  };

  if (target.kind === 'postgres') {
    const preparing = target.preparedStatements === false ? {} : { Client: PreparingClient };
    const pool = new pg.Pool({ connectionString: target.url, max: target.poolSize ?? 10, ...preparing });
    pool.on('error', (err) => log.warn({ err }, 'idle PostgreSQL connection failed'));
    db = new Kysely<Database>({ dialect: tracedDialect(new PostgresDialect({ pool }), target.url) });
    const pgBus = new PgBus(pool, target.url, log);
    await pgBus.start();
    bus = pgBus;
    location = describeUrl(target.url);
    // In the URL: pg lets the URL's parameters override the config object's, so an `options` the
    // operator put in DATABASE_URL is kept and this one added to it.
    const scanUrl = new URL(target.url);
    scanUrl.searchParams.set('options', [scanUrl.searchParams.get('options'), '-c enable_seqscan=off'].filter(Boolean).join(' '));
    const scanPool = new pg.Pool({ connectionString: scanUrl.toString(), max: INDEX_SCAN_POOL, ...preparing });
    scanPool.on('error', (err) => log.warn({ err }, 'idle PostgreSQL connection failed'));
    const scans = new Kysely<Database>({ dialect: tracedDialect(new PostgresDialect({ pool: scanPool }), target.url) });
    indexScans = scans;
    const use = (name: string, p: pg.Pool, max: number): PoolStats => ({ name, max, total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount });
    pools = () => [use('main', pool, target.poolSize ?? 10), use('index_scans', scanPool, INDEX_SCAN_POOL)];
    closeDb = async () => {
      await scans.destroy();
      await db.destroy();
    };
  } else {
    // Loaded only here: a node on PostgreSQL never reads PGlite's code (docs/benchmarks.md "Idle memory").
    const { openPglite } = await import('./pglite.js');
    const embedded = await openPglite(target);
    db = embedded.db;
    bus = new LocalBus();
    location = embedded.location;
    release = embedded.release;
    snapshot = embedded.snapshot;
    closeDb = embedded.close;
  }

  return {
    db,
    kind: target.kind === 'postgres' ? 'postgres' : 'pglite',
    location,
    bus,
    indexScans,
    migrate: () => runMigrations(db, log),
    snapshot: () => snapshot(),
    async ping() {
      await sql`SELECT 1`.execute(db);
    },
    pools: () => pools(),
    async close() {
      await bus.close();
      await closeDb();
      release();
    },
  };
}
