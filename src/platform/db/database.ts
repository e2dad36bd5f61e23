/**
 * Opens the system of record: PostgreSQL when `DATABASE_URL` is set, otherwise PGlite (the same
 * PostgreSQL, compiled to WASM, in-process) under `DATA_DIR/pglite`. Same SQL, same migrations.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { fuzzystrmatch } from '@electric-sql/pglite/contrib/fuzzystrmatch';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
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

export class DatabaseLockedError extends Error {}

/**
 * The embedded database is for one process with modest data: PostgreSQL's default 128 MB of
 * shared buffers cost about 140 MiB of resident memory in PGlite's heap for nothing
 * (docs/benchmarks.md). The file replaces PGlite's postgresql.conf at each start.
 */
const PGLITE_CONF = ['shared_buffers = 16MB', 'work_mem = 4MB'];
/** Contrib extensions the migrations create (PostgreSQL ships them; PGlite loads them on demand). */
const PGLITE_EXTENSIONS = { pg_trgm, fuzzystrmatch };

/** Redacts the password of a connection string for logs. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return 'PostgreSQL (unparseable DATABASE_URL)';
  }
}

/**
 * PGlite is single-process: a lock file keeps a second server or a CLI from opening the same
 * data directory at once, which would corrupt it. A lock left by a dead process is taken over.
 */
function takeLock(dir: string): () => void {
  const file = path.join(dir, 'strongroom.lock');
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) { // empty file: Number("") is 0, a process group
      try {
        process.kill(pid, 0);
        throw new DatabaseLockedError(
          `The embedded database in ${dir} is in use by process ${pid}. Stop that process first, or set DATABASE_URL to use PostgreSQL.`,
        );
      } catch (err) {
        if (err instanceof DatabaseLockedError) throw err;
        // ESRCH: the process is gone; the lock is stale. EPERM: it lives, under another user.
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') {
          throw new DatabaseLockedError(`The embedded database in ${dir} is in use by process ${pid} (another user's). Stop that process first, or set DATABASE_URL to use PostgreSQL.`);
        }
      }
    }
  } catch (err) {
    if (err instanceof DatabaseLockedError) throw err;
  }
  writeFileSync(file, String(process.pid));
  return () => rmSync(file, { force: true });
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
    const pool = new pg.Pool({ connectionString: target.url, max: target.poolSize ?? 10, ...(target.preparedStatements === false ? {} : { Client: PreparingClient }) });
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
    const scanPool = new pg.Pool({ connectionString: scanUrl.toString(), max: INDEX_SCAN_POOL });
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
    let pglite: PGlite;
    if (target.kind === 'pglite') {
      mkdirSync(target.dataDir, { recursive: true, mode: 0o700 });
      release = takeLock(target.dataDir);
      pglite = new PGlite(path.join(target.dataDir, 'pglite'), { postgresqlconf: PGLITE_CONF, extensions: PGLITE_EXTENSIONS });
      location = `PGlite (embedded) at ${path.join(target.dataDir, 'pglite')}`;
    } else {
      pglite = new PGlite({ postgresqlconf: PGLITE_CONF, extensions: PGLITE_EXTENSIONS, loadDataDir: target.image });
      location = 'PGlite (embedded, in memory)';
    }
    await pglite.waitReady;
    db = new Kysely<Database>({ dialect: tracedDialect(new PGliteDialect(pglite)) });
    bus = new LocalBus();
    // PGlite (0.4) hangs for good, spinning, when closed while a query runs (a worker's sync, a
    // keyring reload after a NOTIFY). Take the one connection the dialect hands out, so what was
    // queued first finishes, and close while holding it, so nothing starts in between; a later
    // query fails with "PGlite is closed" instead. (Kysely's destroy would only close PGlite.)
    snapshot = async () => pglite.dumpDataDir('none');
    closeDb = async () => {
      if (!pglite.closed) await db.connection().execute(() => pglite.close());
    };
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
