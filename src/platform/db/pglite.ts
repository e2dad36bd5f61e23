/**
 * The embedded database (PGlite: PostgreSQL compiled to WASM, in this process). Imported by
 * `openDatabase` only when it opens one, so a node on PostgreSQL never loads PGlite's code.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { fuzzystrmatch } from '@electric-sql/pglite/contrib/fuzzystrmatch';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { takeLock } from './lock.js';
import type { Database } from './schema.js';
import { tracedDialect } from './traced-dialect.js';

/**
 * The embedded database is for one process with modest data: PostgreSQL's default 128 MB of
 * shared buffers cost about 140 MiB of resident memory in PGlite's heap for nothing
 * (docs/benchmarks.md). The file replaces PGlite's postgresql.conf at each start.
 */
const PGLITE_CONF = ['shared_buffers = 16MB', 'work_mem = 4MB'];
/** Contrib extensions the migrations create (PostgreSQL ships them; PGlite loads them on demand). */
const PGLITE_EXTENSIONS = { pg_trgm, fuzzystrmatch };

export interface EmbeddedDatabase {
  db: Kysely<Database>;
  location: string;
  release: () => void;
  snapshot: () => Promise<Blob>;
  close: () => Promise<void>;
}

export async function openPglite(target: { kind: 'pglite'; dataDir: string } | { kind: 'pglite-memory'; image?: Blob }): Promise<EmbeddedDatabase> {
  let pglite: PGlite;
  let location: string;
  let release = (): void => undefined;
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
  const db = new Kysely<Database>({ dialect: tracedDialect(new PGliteDialect(pglite)) });
  return {
    db, location, release,
    snapshot: async () => pglite.dumpDataDir('none'),
    // PGlite (0.4) hangs for good, spinning, when closed while a query runs (a worker's sync, a
    // keyring reload after a NOTIFY). Take the one connection the dialect hands out, so what was
    // queued first finishes, and close while holding it, so nothing starts in between; a later
    // query fails with "PGlite is closed" instead. (Kysely's destroy would only close PGlite.)
    close: async () => {
      if (!pglite.closed) await db.connection().execute(() => pglite.close());
    },
  };
}
