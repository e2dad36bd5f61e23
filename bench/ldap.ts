/**
 * `npx tsx bench/ldap.ts`: the LDAP row of `npm run bench` alone, set up as that run sets it up
 * (a durable PostgreSQL, the built server, the suite's slapd with one staff member per client),
 * the service and the bare ldapts loop in turns. What to run while working on the directory
 * sign-in. LDAP_BENCH_ROUNDS (default 3) turns of 2 s each.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPostgres, freePort, type RunningPostgres } from '../test/harness/postgres.js';
import { login } from './lib/api.js';
import { combineCpu, postmasterPid, watchCpu } from './lib/cpu.js';
import { finishBench } from './lib/finish.js';
import { bareLdapLoad, configureLdap, serviceLdapLoad, startDirectory, type BenchDirectory } from './lib/ldap.js';
import { combineRates, type Rate } from './lib/load.js';
import { startNode } from './lib/proc.js';
import { ADMIN, SERVER_JS, strongroomEnv } from './lib/strongroom.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const WORKERS = 16;
const ROUNDS = Number(process.env.LDAP_BENCH_ROUNDS ?? 3);
const SECONDS = 2;

let postgres: RunningPostgres | undefined;
let directory: BenchDirectory | undefined;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-ldap-bench-'));

async function main(): Promise<void> {
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  } catch {
    console.warn('WARNING: the build reported errors (above); benchmarking the JavaScript it emitted.');
  }
  postgres = await startPostgres({ durable: true });
  const admin = new pg.Client({ connectionString: postgres.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE strongroom_ldap');
  await admin.end();
  const postmaster = postmasterPid(Number(new URL(postgres.url('postgres')).port)) ?? -1;
  const server = await startNode('strongroom', [SERVER_JS], strongroomEnv({ DATABASE_URL: postgres.url('strongroom_ldap'), DATA_DIR: dataDir }), await freePort());
  directory = await startDirectory(WORKERS);
  await configureLdap(server.url, (await login(server.url, ADMIN.username, ADMIN.password)).access_token, directory);
  const dir = directory;
  const runs: Record<'bare' | 'service', Array<{ rate: Rate; cpu: ReturnType<ReturnType<typeof watchCpu>['end']> }>> = { bare: [], service: [] };
  const roots = [process.pid, postmaster, dir.slapd.pid];
  const focus = { server: { pid: server.pid }, postgres: { pid: postmaster, tree: true }, slapd: { pid: dir.slapd.pid }, bench: { pid: process.pid } };
  for (let i = 0; i < ROUNDS; i++) {
    for (const side of ['bare', 'service'] as const) {
      const watch = watchCpu();
      const rate = await (side === 'bare' ? bareLdapLoad(dir, SECONDS) : serviceLdapLoad(server.url, dir, SECONDS));
      runs[side].push({ rate, cpu: watch.end(roots, focus) });
      if (rate.failed > 0) throw new Error(`${side}: ${rate.failed} failed`);
    }
  }
  const [bare, service] = (['bare', 'service'] as const).map((side) => ({
    rate: combineRates(runs[side].map((r) => r.rate)),
    cpu: combineCpu(runs[side].map((r) => ({ cpu: r.cpu, seconds: r.rate.seconds }))),
  }));
  const us = (sec: number | undefined, ops: number): string => `${((1e6 * (sec ?? NaN)) / ops).toFixed(0)} us`;
  console.log(`\n| Measure | Figure | Ratio | CPU/op: server | PostgreSQL | slapd | this process | p50 |\n|---|---|---|---|---|---|---|---|`);
  for (const [label, m] of [['ldapts search-and-bind loop', bare!], ['POST /auth/ldap/login', service!]] as const) {
    const cpu = (['server', 'postgres', 'slapd', 'bench'] as const).map((k) => us(m.cpu.sec[k], m.rate.all)).join(' | ');
    console.log(`| ${label} | ${m.rate.perSec.toFixed(0)} /s | ${(m.rate.perSec / bare!.rate.perSec).toFixed(2)} | ${cpu} | ${m.rate.p50Ms.toFixed(1)} ms |`);
  }
  console.log(`(${ROUNDS} turns of ${SECONDS} s each, ${WORKERS} clients; other load up to ${(100 * Math.max(bare!.cpu.foreign, service!.cpu.foreign)).toFixed(0)}%)`);
}

main().then(
  () => finishBench(() => directory?.slapd.stop(), () => postgres?.stop(), () => rmSync(dataDir, { recursive: true, force: true })),
  async (err: unknown) => {
    console.error(err);
    await finishBench(() => directory?.slapd.stop(), () => postgres?.stop(), () => rmSync(dataDir, { recursive: true, force: true }));
    process.exit(1);
  },
);
