/**
 * `npm run bench:rss`: the idle memory rows of `npm run bench` alone, with where the memory goes.
 * Builds the server, starts a durable PostgreSQL and Strongroom on it the way `npm run bench`
 * does (same environment, `node dist/src/server.js`), waits the same 15 s, and reads the
 * resident memory (VmRSS) and its split (anonymous memory, mapped files) from /proc, then V8's
 * heap from the server's /metrics. Then: the first and a later `POST /mcp` (the one route whose
 * library is loaded on first use that needs no outside system), a restart on the same database,
 * and a first start on PGlite. `--idle <s>` changes the wait.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, startPostgres, type RunningPostgres } from '../test/harness/postgres.js';
import { createUser, login } from './lib/api.js';
import { finishBench } from './lib/finish.js';
import { rssMiB, sleep, startNode, type Child } from './lib/proc.js';
import { ADMIN, SERVER_JS, strongroomEnv } from './lib/strongroom.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const arg = process.argv.indexOf('--idle');
/** As `npm run bench`: past the password-check worker's 10 s idle exit. */
const IDLE_SEC = arg >= 0 ? Number(process.argv[arg + 1]) : 15;
const STAFF = { username: 'rssstaff', password: 'Kw4!rTz8#mPq2$vN' };
const MIB = 1048576;

interface Reading {
  label: string;
  rss: number;
  anon: number;
  file: number;
  heap: Record<string, number>;
}

let postgres: RunningPostgres | undefined;
const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-rss-'));
  dirs.push(dir);
  return dir;
};

/** VmRSS first (nothing of ours runs in the server before it), then the split and V8's heap. */
async function read(label: string, server: Child): Promise<Reading> {
  const rss = rssMiB(server.pid);
  const rollup = readFileSync(`/proc/${server.pid}/smaps_rollup`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(rollup)?.[1] ?? NaN) / 1024;
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const metric = (name: string): number => Number(new RegExp(`^strongroom_${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN) / MIB;
  const heap = {
    total: metric('nodejs_heap_size_total_bytes'), used: metric('nodejs_heap_size_used_bytes'),
    young: metric('nodejs_heap_space_size_total_bytes\\{space="new"\\}'), old: metric('nodejs_heap_space_size_total_bytes\\{space="old"\\}'),
    code: metric('nodejs_heap_space_size_total_bytes\\{space="code"\\}'), external: metric('nodejs_external_memory_bytes'),
  };
  return { label, rss, anon: kib('Anonymous'), file: kib('Rss') - kib('Anonymous'), heap };
}

async function idleReading(label: string, env: Record<string, string>): Promise<{ server: Child; reading: Reading }> {
  const server = await startNode(label, [SERVER_JS], strongroomEnv(env), await freePort());
  await sleep(IDLE_SEC * 1000);
  return { server, reading: await read(label, server) };
}

/** Milliseconds of one MCP `tools/list` as a staff member (who holds `access_ai_chat`). */
async function mcpCall(base: string, token: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.text();
  if (res.status !== 200) throw new Error(`POST /mcp: ${res.status}`);
  return performance.now() - started;
}

async function firstMcpCalls(base: string): Promise<number[]> {
  const admin = await login(base, ADMIN.username, ADMIN.password);
  await createUser(base, admin.access_token, STAFF.username, STAFF.password);
  const staff = await login(base, STAFF.username, STAFF.password);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) times.push(await mcpCall(base, staff.access_token));
  return times;
}

function print(readings: Reading[], mcp: number[]): void {
  const f = (n: number): string => n.toFixed(1);
  console.log('\n| Start | Idle RSS | anonymous | mapped files | V8 heap reserved (used) | of it young / old / code | external |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of readings) {
    console.log(`| ${r.label} | **${f(r.rss)} MiB** | ${f(r.anon)} | ${f(r.file)} | ${f(r.heap.total!)} (${f(r.heap.used!)}) | ${f(r.heap.young!)} / ${f(r.heap.old!)} / ${f(r.heap.code!)} | ${f(r.heap.external!)} |`);
  }
  console.log(`\nPOST /mcp tools/list after start, five in a row: ${mcp.map((ms) => `${ms.toFixed(0)} ms`).join(', ')} (the first loads the MCP SDK).`);
  console.log(`Target (npm run bench): idle RSS after start <= 120 MB, first start and restart on PostgreSQL.`);
}

async function main(): Promise<void> {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  postgres = await startPostgres({ durable: true });
  const client = new pg.Client({ connectionString: postgres.url('postgres') });
  await client.connect();
  await client.query('CREATE DATABASE strongroom_rss');
  await client.end();
  const env = { DATABASE_URL: postgres.url('strongroom_rss'), DATA_DIR: tempDir() };

  console.log(`Strongroom on PostgreSQL, first start, then ${IDLE_SEC} s idle ...`);
  const first = await idleReading('PostgreSQL, first start', env);
  const mcp = await firstMcpCalls(first.server.url);
  await first.server.stop();
  console.log(`Restart on the same database, then ${IDLE_SEC} s idle ...`);
  const restart = await idleReading('PostgreSQL, restart', env);
  await restart.server.stop();
  console.log(`PGlite (the embedded development database), first start, then ${IDLE_SEC} s idle ...`);
  const embedded = await idleReading('PGlite, first start', { DATA_DIR: tempDir() });
  await embedded.server.stop();
  print([first.reading, restart.reading, embedded.reading], mcp);
}

main().then(
  () => finishBench(() => postgres?.stop(), () => dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))),
  async (err: unknown) => {
    console.error(err);
    await finishBench(() => postgres?.stop(), () => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
    process.exitCode = 1;
  },
);
