/**
 * `npm run bench:commit`: the refresh row of `npm run bench` alone, against the durable-commit
 * ceiling of the same PostgreSQL (bench/lib/pgbench.ts), in one run: what to run while working
 * on what a refresh commits. Builds the server, starts a durable PostgreSQL and Strongroom,
 * measures pgbench, then refresh (32 token chains) on a server with named prepared statements and
 * on one without, and prints them with their ratio to the ceiling.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, startPostgres, type RunningPostgres } from '../test/harness/postgres.js';
import { createUser, login, type Tokens } from './lib/api.js';
import { finishBench } from './lib/finish.js';
import { pgbenchCeiling, PGBENCH } from './lib/pgbench.js';
import { startNode } from './lib/proc.js';
import { refreshLoad, REFRESH } from './lib/refresh.js';
import { ADMIN, SERVER_JS, strongroomEnv } from './lib/strongroom.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const USER = { username: 'commituser', password: 'Kw4!rTz8#mPq2$vN' };

let postgres: RunningPostgres | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-commit-'));

async function main(): Promise<void> {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  postgres = await startPostgres({ durable: true });
  const admin = new pg.Client({ connectionString: postgres.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE strongroom_commit');
  await admin.end();
  // The same server twice on one PostgreSQL: named prepared statements (the default) and without
  // (DB_PREPARED_STATEMENTS=0), measured in turns against the same ceiling.
  const variants: { label: string; env: Record<string, string> }[] = [
    { label: 'prepared statements', env: {} },
    { label: 'unnamed statements', env: { DB_PREPARED_STATEMENTS: '0' } },
  ];
  const servers = [];
  for (const v of variants) {
    servers.push(await startNode('strongroom', [SERVER_JS], strongroomEnv({ DATABASE_URL: postgres.url('strongroom_commit'), DATA_DIR: dataDir, ...v.env }), await freePort()));
  }
  try {
    const root = await login(servers[0]!.url, ADMIN.username, ADMIN.password);
    await createUser(servers[0]!.url, root.access_token, USER.username, USER.password);
    const rows: string[] = [];
    console.log(`pgbench: ${PGBENCH.clients} clients, ${PGBENCH.seconds} s, one small write transaction per commit ...`);
    const ceiling = await pgbenchCeiling(postgres.url('postgres'));
    rows.push(`| pgbench durable commits | ${ceiling.perSec.toFixed(0)} /s | 1.00 |`);
    for (const [i, server] of servers.entries()) {
      const chains: Tokens[] = [];
      for (let c = 0; c < REFRESH.workers; c++) chains.push(await login(server.url, USER.username, USER.password));
      console.log(`Refresh (${variants[i]!.label}): ${REFRESH.workers} token chains, ${REFRESH.seconds} s ...`);
      const refresh = await refreshLoad(server.url, chains);
      if (refresh.failed > 0) throw new Error(`${refresh.failed} refreshes failed`);
      const single = await refreshLoad(server.url, chains, 1);
      if (single.failed > 0) throw new Error(`${single.failed} refreshes failed`);
      rows.push(`| POST /auth/refresh, ${variants[i]!.label}, ${REFRESH.workers} clients | ${refresh.perSec.toFixed(0)} /s (p99 ${refresh.p99Ms.toFixed(1)} ms) | ${(refresh.perSec / ceiling.perSec).toFixed(2)} |`);
      rows.push(`| POST /auth/refresh, ${variants[i]!.label}, one client | ${single.perSec.toFixed(0)} /s (p50 ${single.p50Ms.toFixed(2)} ms, p99 ${single.p99Ms.toFixed(2)} ms) | |`);
    }
    console.log(`\n| Measure | Figure | Ratio |\n|---|---|---|\n${rows.join('\n')}`);
  } finally {
    for (const server of servers) await server.stop();
  }
}

main().then(
  () => finishBench(() => postgres?.stop(), () => rmSync(dataDir, { recursive: true, force: true })),
  async (err: unknown) => {
    console.error(err);
    await finishBench(() => postgres?.stop(), () => rmSync(dataDir, { recursive: true, force: true }));
    process.exit(1);
  },
);
