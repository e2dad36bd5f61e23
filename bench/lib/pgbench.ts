/**
 * The durable-commit ceiling of a PostgreSQL: what it commits per second when each commit is one
 * small write transaction, measured with pgbench in the same run and on the same server as the
 * service. 32 clients, one thread, 10 s, over a table of 100,000 rows and an empty history:
 * `\set id random(1, 100000)`, `BEGIN; UPDATE t SET v = v + 1 WHERE id = :id; INSERT INTO h
 * VALUES (:id, now()); END;`. The service's refresh (one commit each) is measured against it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Rate } from './load.js';

export const PGBENCH = { clients: 32, threads: 1, seconds: 10, rows: 100_000 };

const SCRIPT = `\\set id random(1, ${PGBENCH.rows})
BEGIN;
UPDATE t SET v = v + 1 WHERE id = :id;
INSERT INTO h VALUES (:id, now());
END;
`;

/** Creates `database` on the server of `adminUrl` (the `postgres` database) with the two tables, then runs pgbench on it. */
export async function pgbenchCeiling(adminUrl: string, database = 'strongroom_pgbench'): Promise<Rate> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  await db.query('CREATE TABLE t (id integer PRIMARY KEY, v integer NOT NULL)');
  await db.query(`INSERT INTO t SELECT g, 0 FROM generate_series(1, ${PGBENCH.rows}) g`);
  await db.query('CREATE TABLE h (id integer NOT NULL, at timestamptz NOT NULL)');
  await db.query('VACUUM ANALYZE t');
  await db.end();

  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgbench-'));
  try {
    const script = path.join(dir, 'commit.sql');
    writeFileSync(script, SCRIPT);
    const { stdout } = await promisify(execFile)('pgbench', ['-n', `-c${PGBENCH.clients}`, `-j${PGBENCH.threads}`, `-T${PGBENCH.seconds}`, '-f', script, url.toString()], { maxBuffer: 1 << 20 });
    const tps = /tps = ([0-9.]+) \(without initial connection time\)/.exec(stdout)?.[1];
    const done = /number of transactions actually processed: (\d+)/.exec(stdout)?.[1];
    if (tps === undefined || done === undefined) throw new Error(`pgbench printed no rate:\n${stdout}`);
    return { perSec: Number(tps), ok: Number(done), failed: 0, all: Number(done), p50Ms: NaN, p99Ms: NaN, seconds: PGBENCH.seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
