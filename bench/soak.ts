/**
 * `npm run soak`: an endurance run. Two Strongroom nodes (the built server, two processes on
 * their own ports) share one durable PostgreSQL and the fake FCM; a mixed customer load
 * (bench/lib/soak-load.ts) runs against both for SOAK_SECONDS (default 600) while the RSS of each
 * node and the PostgreSQL connections are sampled every second. It prints, per node and route,
 * the errors and the p99 of the first minute after the warm-up against the last minute's, the
 * RSS growth and connections per node, and exits non-zero when a target is missed.
 *
 * Environment: SOAK_SECONDS (600), SOAK_USERS (300 customers), SOAK_SESSIONS_PER_SEC (a quarter
 * of the machine's bcrypt-12 rate, measured just before the load), SOAK_PUSH_PER_SEC (2),
 * SOAK_WARMUP_SECONDS (60, or a fifth of a shorter run).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import bcrypt from 'bcrypt';
import { startFakeFcm, type FakeFcm } from '../test/harness/fcm.js';
import { freePort, startPostgres, type RunningPostgres } from '../test/harness/postgres.js';
import { login } from './lib/api.js';
import { awaitQuiet, postmasterPid } from './lib/cpu.js';
import { finishBench } from './lib/finish.js';
import { closedLoop } from './lib/load.js';
import { sleep, startNode, type Child } from './lib/proc.js';
import { MixedLoad, type LoadShape } from './lib/soak-load.js';
import { Recorder } from './lib/soak-record.js';
import { fmt, soakReport, type PushOutcome, type Windows } from './lib/soak-report.js';
import { importFaqArticles, seedCustomers, type SoakUser } from './lib/soak-seed.js';
import { connectionBound, startSampling, watchWindows } from './lib/soak-watch.js';
import { ADMIN, SERVER_JS, strongroomEnv } from './lib/strongroom.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DATABASE = 'strongroom_soak';
const NODES = 2;
/** Customer sessions per second, as a share of the machine's bcrypt-12 rate measured just before the load (each session signs in once). */
const SESSIONS_PER_BCRYPT = 0.25;

function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}; got ${raw}`);
  return n;
}

const seconds = envNumber('SOAK_SECONDS', 600, 30);
const windowSec = Math.min(60, Math.floor(seconds / 5));
const warmupSec = envNumber('SOAK_WARMUP_SECONDS', windowSec, 5);
const W: Windows = { seconds, warmupSec, windowSec, rssSpanSec: Math.min(10, warmupSec) };
if (warmupSec + 2 * windowSec > seconds) throw new Error(`SOAK_WARMUP_SECONDS (${warmupSec}) leaves no room for two ${windowSec} s windows in SOAK_SECONDS (${seconds})`);
/** The load but its session rate (SOAK_SESSIONS_PER_SEC, or a share of the bcrypt rate measured before the load). */
const SHAPE: Omit<LoadShape, 'sessionsPerSec'> = { seconds, validatesPerSession: 20, faqPerSession: 2, thinkMs: 200, maxSessions: 100, pushPerSec: envNumber('SOAK_PUSH_PER_SEC', 2, 0) };
const SESSIONS_PER_SEC = envNumber('SOAK_SESSIONS_PER_SEC', NaN, 0.1);
const SEED = { users: envNumber('SOAK_USERS', 300, 10), totpEvery: 3, devicesEvery: 2, devicesPerUser: 2, concurrency: 8 };

let postgres: RunningPostgres | undefined;
let fcm: FakeFcm | undefined;
const tempDirs: string[] = [];

function build(): void {
  console.log('Building the server (npm run build) ...');
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  } catch (err) {
    // tsc emits JavaScript despite type errors; a half-edited tree elsewhere should not stop a bench.
    if (!existsSync(SERVER_JS)) throw err;
    console.warn('WARNING: the build reported errors (above); running the JavaScript it emitted.');
  }
}

/** The first node migrates the database and creates the administrator; the second starts on it. Both share the data directory (the generated secrets). */
async function startNodes(databaseUrl: string, f: FakeFcm): Promise<Child[]> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-soak-'));
  tempDirs.push(dataDir);
  const env = strongroomEnv({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ...f.env });
  const nodes: Child[] = [];
  for (let i = 0; i < NODES; i++) nodes.push(await startNode(`node ${String.fromCharCode(65 + i)}`, [SERVER_JS], env, await freePort()));
  return nodes;
}

/** The machine's parallel bcrypt-12 verify rate now (8 in flight, as `npm run bench` measures it), in this process. */
async function bcryptRate(): Promise<number> {
  const hash = await bcrypt.hash('Soak-bcrypt#2024!', 12);
  const r = await closedLoop({ workers: 8, warmupMs: 1000, seconds: 5, makeWorker: () => () => bcrypt.compare('Soak-bcrypt#2024!', hash) });
  return r.perSec;
}

/** The PostgreSQL connections both nodes may hold together, from their /metrics. */
async function connectionsAllowed(nodes: Child[]): Promise<number> {
  let sum = 0;
  for (const n of nodes) {
    const bound = await connectionBound(n.url);
    if (bound === undefined) throw new Error(`${n.name}: /metrics gave no strongroom_db_pool_max (is METRICS_TOKEN or MANAGEMENT_PORT set?)`);
    sum += bound;
  }
  return sum;
}

/** Waits until the outbox has nothing pending (at most 120 s); what became of the messages. */
async function drainPush(db: pg.Client, f: FakeFcm, queued: number, runId: string): Promise<PushOutcome> {
  const start = Date.now();
  for (;;) {
    const r = (await db.query<{ pending: string; sent: string; failed: string }>(
      `SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'sent') AS sent, count(*) FILTER (WHERE status = 'failed') AS failed
       FROM push_messages WHERE data->>'soak' = $1`, [runId])).rows[0]!;
    const pending = Number(r.pending);
    if (pending === 0 || Date.now() - start > 120_000) {
      return { queued, sent: Number(r.sent), failed: Number(r.failed), pending, fakeAccepted: f.sent.filter((m) => m.data?.soak === runId).length, drainSec: (Date.now() - start) / 1000 };
    }
    await sleep(500);
  }
}

interface Prepared {
  nodes: Child[];
  users: SoakUser[];
  admin: { token: string };
  databaseUrl: string;
}

/** PostgreSQL, the fake FCM, the nodes, the FAQ articles and the customers. */
async function prepare(): Promise<Prepared> {
  build();
  console.log('Starting PostgreSQL (durable defaults) and the fake FCM ...');
  postgres = await startPostgres({ durable: true });
  const setup = new pg.Client({ connectionString: postgres.url('postgres') });
  await setup.connect();
  await setup.query(`CREATE DATABASE ${DATABASE}`);
  await setup.end();
  const databaseUrl = postgres.url(DATABASE);
  fcm = await startFakeFcm();

  console.log(`Starting ${NODES} nodes on one database ...`);
  const nodes = await startNodes(databaseUrl, fcm);
  const bases = nodes.map((n) => n.url);
  const admin = { token: (await login(bases[0]!, ADMIN.username, ADMIN.password)).access_token };
  console.log(`Importing the FAQ bench articles: ${await importFaqArticles(bases[0]!, admin.token)} created.`);
  console.log(`Seeding ${SEED.users} customers (1 in ${SEED.totpEvery} with TOTP, 1 in ${SEED.devicesEvery} with ${SEED.devicesPerUser} phones) at BCRYPT_COST=12 ...`);
  const seedStart = Date.now();
  const users = await seedCustomers({ bases, adminToken: admin.token, ...SEED }, (done) => console.log(`  ${done} of ${SEED.users}`));
  console.log(`  seeded in ${fmt((Date.now() - seedStart) / 1000)} s.`);
  return { nodes, users, admin, databaseUrl };
}

async function main(): Promise<boolean> {
  const { nodes, users, admin, databaseUrl } = await prepare();
  const bases = nodes.map((n) => n.url);
  const pgPort = Number(new URL(databaseUrl).port);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const postmaster = postmasterPid(pgPort) ?? -1;
  const ours = [process.pid, postmaster];
  const pgBound = await connectionsAllowed(nodes);
  await awaitQuiet(ours);
  let sessionsPerSec = SESSIONS_PER_SEC;
  if (Number.isNaN(sessionsPerSec)) {
    const rate = await bcryptRate();
    sessionsPerSec = Math.round(100 * SESSIONS_PER_BCRYPT * rate) / 100;
    console.log(`bcrypt-12 verify rate of the machine now: ${fmt(rate, 2)} /s; customer sessions: ${SESSIONS_PER_BCRYPT} of it.`);
  }
  const shape: LoadShape = { ...SHAPE, sessionsPerSec };
  // The administrator's access token lasts 60 minutes: a new sign-in every 30 for longer runs.
  const renew = setInterval(() => void login(bases[0]!, ADMIN.username, ADMIN.password).then((t) => { admin.token = t.access_token; }, () => undefined), 30 * 60_000);

  const runId = `soak-${Date.now()}`;
  const rec = new Recorder(bases);
  const sampling = startSampling({ pids: nodes.map((n) => n.pid), db, database: DATABASE, pgPort, now: () => rec.now() });
  const focus = { ...Object.fromEntries(nodes.map((n, i) => [`node${i}`, { pid: n.pid }])), postgres: { pid: postmaster, tree: true } };
  const windows = watchWindows({ ours, focus, ...W });
  console.log(`Mixed load for ${seconds} s: ${shape.sessionsPerSec} customer sessions/s, ${shape.pushPerSec} push sends/s, round robin over ${NODES} nodes ...`);
  const counts = await new MixedLoad(rec, users, shape, admin, runId).run();
  const cpu = await windows.done();
  await sampling.stop();
  clearInterval(renew);
  console.log('Load over; waiting for the push outbox to drain ...');
  const push = await drainPush(db, fcm!, counts.pushQueued, runId);
  await db.end();

  const report = soakReport({ rec, nodeNames: nodes.map((n) => n.name), samples: sampling.samples, w: W, cpu, pgBound, counts, push });
  console.log('');
  console.log(report.text);
  const { text: _text, ...figures } = report;
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(path.join(ROOT, 'bench/results/soak-latest.json'), `${JSON.stringify({ date: new Date().toISOString(), command: 'npm run soak', windows: W, shape, seed: SEED, counts, push, ...figures, samples: sampling.samples.filter((_, i) => i % 10 === 0) }, null, 2)}\n`);
  console.log('Wrote bench/results/soak-latest.json.');
  return report.met;
}

async function cleanup(): Promise<void> {
  await finishBench(() => fcm?.close(), () => postgres?.stop(), () => { for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true }); });
  fcm = undefined;
  postgres = undefined;
}

process.once('SIGINT', () => {
  void cleanup().finally(() => process.exit(130));
});

try {
  if (!(await main())) process.exitCode = 1;
} catch (err) {
  console.error('Soak failed:', err);
  process.exitCode = 1;
} finally {
  await cleanup();
}
