/**
 * `npm run bench:budget`: what one operation costs each process in CPU, and so the highest rate
 * this machine's cores allow it, whatever the code around it waits for. For the two rows that are
 * ratios of another program on the same machine (refresh against pgbench's durable commits, the
 * LDAP sign-in against a bare ldapts loop), it prints the best ratio the cores allow at today's CPU
 * per operation, and the CPU per operation the target would need.
 *
 * CPU time per operation moves much less with other load than a rate does (it is what the
 * process itself used), so this row says something on a shared machine where rates do not.
 * Processes: the server; PostgreSQL (the postmaster and every backend); slapd; the load generator
 * (this process, and pgbench as its child).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, startPostgres, type RunningPostgres } from '../test/harness/postgres.js';
import { createUser, login, type Tokens } from './lib/api.js';
import { postmasterPid, watchCpu } from './lib/cpu.js';
import { finishBench } from './lib/finish.js';
import { bareLdapLoad, configureLdap, serviceLdapLoad, startDirectory, type BenchDirectory } from './lib/ldap.js';
import type { Rate } from './lib/load.js';
import { pgbenchCeiling } from './lib/pgbench.js';
import { startNode, type Child } from './lib/proc.js';
import { refreshLoad } from './lib/refresh.js';
import { ADMIN, SERVER_JS, strongroomEnv } from './lib/strongroom.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const USER = { username: 'budgetuser', password: 'Kw4!rTz8#mPq2$vN' };
const CORES = os.availableParallelism();
const LDAP = { workers: 16, seconds: 8 };

let postgres: RunningPostgres | undefined;
let directory: BenchDirectory | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-budget-'));

interface Costed {
  rate: Rate;
  /** CPU microseconds per operation, by process. */
  us: Record<string, number>;
}

async function costed(load: () => Promise<Rate>, focus: Record<string, { pid: number; tree?: boolean }>): Promise<Costed> {
  const watch = watchCpu();
  const rate = await load();
  const cpu = watch.end([process.pid], focus);
  if (rate.failed > 0) throw new Error(`${rate.failed} operations failed`);
  return { rate, us: Object.fromEntries(Object.entries(cpu.sec).map(([k, sec]) => [k, (1e6 * sec) / rate.all])) };
}

const total = (c: Costed): number => Object.values(c.us).reduce((a, b) => a + b, 0);
/** The rate the cores allow at this CPU per operation, everything busy and nothing waiting. */
const bound = (c: Costed): number => (CORES * 1e6) / total(c);
const split = (c: Costed): string => Object.entries(c.us).map(([k, us]) => `${k} ${Math.round(us)}`).join(' + ');

function row(what: string, c: Costed, baseline?: { rate: number; target: number }): string {
  const cells = [what, `${Math.round(c.rate.perSec)} /s`, `${split(c)} = ${Math.round(total(c))} us`, `${Math.round(bound(c))} /s`];
  if (baseline) {
    cells.push(`${(c.rate.perSec / baseline.rate).toFixed(2)}`, `${(bound(c) / baseline.rate).toFixed(2)}`, `${Math.round((CORES * 1e6) / (baseline.target * baseline.rate))} us`);
  } else cells.push('', '', '');
  return `| ${cells.join(' | ')} |`;
}

async function main(): Promise<void> {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  postgres = await startPostgres({ durable: true });
  const pgPort = Number(new URL(postgres.url('postgres')).port);
  const admin = new pg.Client({ connectionString: postgres.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE strongroom_budget');
  await admin.end();
  const server: Child = await startNode('strongroom', [SERVER_JS], strongroomEnv({ DATABASE_URL: postgres.url('strongroom_budget'), DATA_DIR: dataDir }), await freePort());
  const database = { pid: postmasterPid(pgPort)!, tree: true };
  const loadGenerator = { pid: process.pid };
  try {
    const root = await login(server.url, ADMIN.username, ADMIN.password);
    await createUser(server.url, root.access_token, USER.username, USER.password);

    console.log('pgbench durable commits (32 clients, 10 s) ...');
    const pgbench = await costed(() => pgbenchCeiling(postgres!.url('postgres')), { database, 'pgbench': loadGenerator });

    console.log('refresh, 32 token chains: a warm-up, then the measured window ...');
    const chains: Tokens[] = [];
    for (let c = 0; c < 32; c++) chains.push(await login(server.url, USER.username, USER.password));
    await refreshLoad(server.url, chains);
    const refresh = await costed(() => refreshLoad(server.url, chains), { server: { pid: server.pid }, database, 'load generator': loadGenerator });

    console.log(`LDAP: slapd, ${LDAP.workers} staff members; the bare loop, then sign-ins through the service ...`);
    directory = await startDirectory(LDAP.workers);
    await configureLdap(server.url, root.access_token, directory);
    const slapd = { pid: directory.slapd.pid };
    await bareLdapLoad(directory, 2);
    const bare = await costed(() => bareLdapLoad(directory!, LDAP.seconds), { slapd, 'ldapts loop': loadGenerator });
    await serviceLdapLoad(server.url, directory, 2);
    const ldap = await costed(() => serviceLdapLoad(server.url, directory!, LDAP.seconds), { server: { pid: server.pid }, database, slapd, 'load generator': loadGenerator });

    console.log(`\n${CORES} cores. "Cores allow": ${CORES} s of CPU a second divided by the CPU of one operation, all processes together.`);
    console.log('| Operation | Measured | CPU per operation (us) | Cores allow | Ratio measured | Best ratio the cores allow | CPU per operation the target needs |');
    console.log('|---|---|---|---|---|---|---|');
    console.log(row('pgbench durable commit', pgbench));
    console.log(row('POST /auth/refresh (target 0.50 of pgbench)', refresh, { rate: pgbench.rate.perSec, target: 0.5 }));
    console.log(row('ldapts search-and-bind', bare));
    console.log(row('POST /auth/ldap/login (target 0.50 of ldapts)', ldap, { rate: bare.rate.perSec, target: 0.5 }));
  } finally {
    await server.stop();
  }
}

main().then(
  () => finishBench(async () => { await directory?.slapd.stop(); postgres?.stop(); }, () => rmSync(dataDir, { recursive: true, force: true })),
  async (err: unknown) => {
    console.error(err);
    await finishBench(async () => { await directory?.slapd.stop(); postgres?.stop(); }, () => rmSync(dataDir, { recursive: true, force: true }));
    process.exit(1);
  },
);
