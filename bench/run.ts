/**
 * `npm run bench`: the performance targets of ARCHITECTURE.md section 6, measured in one run on
 * this machine, loopback only. Builds the server, starts a PostgreSQL (test harness), a bare
 * Fastify hello-world and Strongroom as child processes, loads them, prints a table and writes
 * bench/results/latest.json. Every child and PostgreSQL is stopped at the end, even on error.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import pg from 'pg';
import { freePort, startPostgres, type RunningPostgres } from '../test/harness/postgres.js';
import type { RunningSlapd } from '../test/harness/slapd.js';
import { startFakeFcm } from '../test/harness/fcm.js';
import { createUser, login, type Tokens } from './lib/api.js';
import { pgbenchCeiling, PGBENCH } from './lib/pgbench.js';
import { refreshLoad, REFRESH } from './lib/refresh.js';
import { post } from './lib/client.js';
import { finishBench } from './lib/finish.js';
import { faqSearchBench, FAQ_ARTICLES, FAQ_QUERIES } from './lib/faq.js';
import { geoLookupBench, GEO_BENCH } from './lib/geo.js';
import { riskBench, RISK_BENCH } from './lib/risk.js';
import { pushBench, PUSH_DEFAULTS } from './lib/push.js';
import { bareLdapLoad, configureLdap, serviceLdapLoad, startDirectory } from './lib/ldap.js';
import { awaitQuiet, combineCpu, postmasterPid, watchCpu, type CpuUse } from './lib/cpu.js';
import { cannon, cannonBodies, closedLoop, combineRates, type Rate } from './lib/load.js';
import { rssMiB, sleep, startNode, type Child } from './lib/proc.js';
import { ADMIN, strongroomEnv } from './lib/strongroom.js';
import { scaleRows } from './scale.js';
import { checkEncryptedValidate, checkSealedGet, encryptedLogin, opensslRsaSignRate, preAuthJson, preAuthPool, rsaUnwrapRate, rsaUnwrapRateThreads, serverPublicKey } from './lib/transport.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const USER = { username: 'benchuser', password: 'Kw4!rTz8#mPq2$vN' };
/** Load shapes, kept together so the doc can quote them. */
const LOAD = {
  httpConnections: 50, // hello-world and validate: closed loop, same shape for both
  warmupSec: 2,
  seconds: 6,
  bcryptParallel: 8, // in flight at once; the libuv pool (4 threads) runs them on both cores
  loginWorkers: 8,
  loginSeconds: 8,
  mixedValidateRate: 200, // validate req/s offered while logins saturate the CPU
  mixedValidateConnections: 10,
  ldapWorkers: 16, // LDAP clients, each a staff member of its own, through the service and in the bare loop alike
  idleSec: 15, // past the password-check worker's 10 s idle exit
  // Transport comparisons: plaintext and encrypted (or openssl and the plugin) take turns, this
  // many rounds each, so other load that comes and goes weighs on both alike.
  abRounds: 3,
  /** Pre-auth envelopes made before the encrypted-validate turns: more than 3,000/s can use. */
  envelopePool: 30_000,
  abSeconds: 2, // per turn, HTTP rows
  rsaSeconds: 1, // per turn: the plugin's loop, and each of openssl speed's two phases (sign, verify)
};

interface Row {
  key: string;
  label: string;
  figure: string;
  ratio: string;
  target: string;
  met: boolean | null;
  metText: string;
  value: number;
  cpuPerOp: string;
  otherLoad: string;
}

const tempDirs: string[] = [];
let postgres: RunningPostgres | undefined;
let slapd: RunningSlapd | undefined;

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

async function cleanup(): Promise<void> {
  await finishBench(
    () => postgres?.stop(),
    () => slapd?.stop(),
    () => { for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true }); },
  );
  postgres = undefined;
  slapd = undefined;
}

/** `extra` may name DATA_DIR (a restart must find its generated secrets again); a new one otherwise. */
async function startStrongroom(name: string, extra: Record<string, string>): Promise<Child> {
  return startNode(name, [path.join(ROOT, 'dist/src/server.js')], strongroomEnv({ DATA_DIR: tempDir('strongroom-bench-'), ...extra }), await freePort());
}

/** The machine's parallel bcrypt-12 verify rate, with the same library and pool the server uses. */
async function bcryptRate(): Promise<Rate> {
  const password = 'Bench-bcrypt#2024!';
  const hash = await bcrypt.hash(password, 12);
  return closedLoop({ workers: LOAD.bcryptParallel, warmupMs: 1000, seconds: LOAD.loginSeconds, makeWorker: () => () => bcrypt.compare(password, hash) });
}

function loginLoad(base: string, seconds: number, warmupMs: number): Promise<Rate> {
  const body = JSON.stringify({ username: ADMIN.username, password: ADMIN.password });
  return closedLoop({
    workers: LOAD.loginWorkers, warmupMs, seconds,
    makeWorker: () => async () => (await post(`${base}/api/v1/auth/login`, body)).status === 200,
  });
}

async function validateLoad(base: string, token: string, opts: { connections: number; seconds: number; overallRate?: number }): Promise<Rate> {
  return cannon({ url: `${base}/api/v1/auth/validate`, method: 'POST', headers: { authorization: `Bearer ${token}` }, ...opts });
}

/** Validate with one precomputed pre-auth envelope, replayed: one RSA-OAEP decrypt and one RSA wrap per request. */
/** Each request a new pre-auth envelope: the server's replay cache refuses one seen before. */
function encryptedValidateLoad(base: string, token: string, bodies: { next(): string }, seconds: number): Promise<Rate> {
  return cannonBodies({ url: `${base}/api/v1/auth/validate`, headers: { authorization: `Bearer ${token}`, 'x-encrypted': 'true', 'content-type': 'application/json' }, bodies, connections: LOAD.httpConnections, seconds });
}

/** An authenticated GET, sealed under the session key when `encrypted` (AES-GCM only, no RSA). */
function listUsersLoad(base: string, token: string, encrypted: boolean, seconds: number): Promise<Rate> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(encrypted ? { 'x-encrypted': 'true' } : {}) };
  return cannon({ url: `${base}/api/v1/admin/users?limit=1`, headers, connections: LOAD.httpConnections, seconds });
}

/**
 * Like `loginLoad`, each request a new pre-auth envelope (a replay would be refused). Building
 * one costs the client about 0.1 ms against a 250 ms bcrypt sign-in: made inline.
 */
function encryptedLoginLoad(base: string, serverPem: string, seconds: number, warmupMs: number): Promise<Rate> {
  return closedLoop({
    workers: LOAD.loginWorkers, warmupMs, seconds,
    makeWorker: () => async () => (await post(`${base}/api/v1/auth/login`, preAuthJson(serverPem, { username: ADMIN.username, password: ADMIN.password }), { 'x-encrypted': 'true' })).status === 200,
  });
}

/** A figure computed in this process (no HTTP), as a Rate for \`measure\`. */
const fixedRate = (perSec: number, seconds: number): Rate => ({ perSec, ok: 1, failed: 0, all: NaN, p50Ms: NaN, p99Ms: NaN, seconds });

function checkClean(what: string, r: Rate): void {
  if (r.failed > 0) throw new Error(`${what}: ${r.failed} failed requests (of ${r.ok + r.failed}); the figure would be wrong`);
}

interface Measured {
  rate: Rate;
  cpu: CpuUse;
}

/** This bench's own processes (itself and its children, and the PostgreSQL it started): everything else is "other load". */
const ourRoots: number[] = [process.pid];
let postmaster = -1;

async function measure(what: string, focus: number, load: () => Promise<Rate>): Promise<Measured> {
  const before = await awaitQuiet(ourRoots);
  if (before >= 0.1) console.log(`  (other processes are using ${pct(before)} of the machine; measuring anyway)`);
  const watch = watchCpu();
  const rate = await load();
  const cpu = watch.end(ourRoots, { focus: { pid: focus }, postgres: { pid: postmaster, tree: true }, bench: { pid: process.pid } });
  checkClean(what, rate);
  return { rate, cpu };
}

/** `a` and `b` take turns, `LOAD.abRounds` times each; each side's windows are then added up. */
async function alternate(what: [string, string], focus: number, a: () => Promise<Rate>, b: () => Promise<Rate>): Promise<[Measured, Measured]> {
  const runs: [Measured[], Measured[]] = [[], []];
  for (let i = 0; i < LOAD.abRounds; i++) {
    runs[0].push(await measure(what[0], focus, a));
    runs[1].push(await measure(what[1], focus, b));
  }
  const join = (ms: Measured[]): Measured => ({ rate: combineRates(ms.map((m) => m.rate)), cpu: combineCpu(ms.map((m) => ({ cpu: m.cpu, seconds: m.rate.seconds }))) });
  return [join(runs[0]), join(runs[1])];
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

const pct = (x: number): string => `${fmt(100 * x)}%`;

/** CPU time of the measured process per operation, over every operation of the call. */
function cpuPerOp(m: Measured, ops = m.rate.all): string {
  if (Number.isNaN(ops)) return '';
  const us = (1e6 * m.cpu.sec.focus!) / ops;
  return us >= 10_000 ? `${fmt(us / 1000)} ms` : `${fmt(us)} us`;
}

function machine(): Record<string, string | number> {
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  return { nproc: os.availableParallelism(), cpu, memory_gib: Math.round(os.totalmem() / 2 ** 30), node: process.version, uv_threadpool_size: process.env.UV_THREADPOOL_SIZE ?? '4 (default)' };
}

const COLUMNS: Array<[string, keyof Row]> = [['Measure', 'label'], ['Figure', 'figure'], ['Ratio', 'ratio'], ['Target', 'target'], ['Met', 'metText'], ['CPU/op', 'cpuPerOp'], ['Other load', 'otherLoad']];

function printTable(rows: Row[]): void {
  const cells = rows.map((r) => COLUMNS.map(([, k]) => String(r[k])));
  const widths = COLUMNS.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]): string => `| ${c.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(COLUMNS.map(([h]) => h)));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const c of cells) console.log(line(c));
}

function build(): void {
  console.log('Building the server (npm run build) ...');
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  } catch (err) {
    // tsc emits JavaScript despite type errors; a half-edited tree elsewhere should not stop a bench.
    if (!existsSync(path.join(ROOT, 'dist/src/server.js'))) throw err;
    console.warn('WARNING: the build reported errors (above); benchmarking the JavaScript it emitted.');
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  build();

  console.log('Starting PostgreSQL ...');
  postgres = await startPostgres({ durable: true }); // fsync and synchronous_commit on
  const adminClient = new pg.Client({ connectionString: postgres.url('postgres') });
  await adminClient.connect();
  await adminClient.query('CREATE DATABASE strongroom_bench');
  const pgVersion = (await adminClient.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  await adminClient.end();
  const databaseUrl = postgres.url('strongroom_bench');
  postmaster = postmasterPid(Number(new URL(databaseUrl).port)) ?? -1;
  ourRoots.push(postmaster);

  console.log(`Bare Fastify hello-world (${LOAD.httpConnections} connections, ${LOAD.seconds} s) ...`);
  const hello = await startNode('hello-world', ['--import', 'tsx', path.join(ROOT, 'bench/hello.ts')], {}, await freePort());
  await cannon({ url: hello.url, connections: LOAD.httpConnections, seconds: LOAD.warmupSec });
  const helloRate = await measure('hello-world', hello.pid, () => cannon({ url: hello.url, connections: LOAD.httpConnections, seconds: LOAD.seconds }));
  await hello.stop();

  console.log(`Starting Strongroom on PostgreSQL, then ${LOAD.idleSec} s idle ...`);
  const dataDir = tempDir('strongroom-bench-');
  const server = await startStrongroom('strongroom (PostgreSQL)', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir });
  await sleep(LOAD.idleSec * 1000);
  const idleRss = rssMiB(server.pid);

  const admin = await login(server.url, ADMIN.username, ADMIN.password);
  await createUser(server.url, admin.access_token, USER.username, USER.password);
  const user = await login(server.url, USER.username, USER.password);

  console.log(`Validate on PostgreSQL (${LOAD.httpConnections} connections, ${LOAD.seconds} s) ...`);
  await validateLoad(server.url, user.access_token, { connections: LOAD.httpConnections, seconds: LOAD.warmupSec });
  const validate = await measure('validate', server.pid, () => validateLoad(server.url, user.access_token, { connections: LOAD.httpConnections, seconds: LOAD.seconds }));

  const turns = `${LOAD.abRounds} turns of ${LOAD.abSeconds} s each, ${LOAD.httpConnections} connections`;
  console.log(`Validate, plaintext and encrypted (a new pre-auth envelope per request, each checked against the replay cache) in turns (${turns}) ...`);
  const serverPem = await serverPublicKey(server.url);
  const envelopes = preAuthPool(serverPem, {}, LOAD.envelopePool);
  await checkEncryptedValidate(server.url, user.access_token, envelopes.next());
  await encryptedValidateLoad(server.url, user.access_token, envelopes, LOAD.warmupSec);
  const [validatePlain, validateEnc] = await alternate(['validate (alongside)', 'validate (encrypted)'], server.pid,
    () => validateLoad(server.url, user.access_token, { connections: LOAD.httpConnections, seconds: LOAD.abSeconds }),
    () => encryptedValidateLoad(server.url, user.access_token, envelopes, LOAD.abSeconds));

  console.log(`GET /admin/users?limit=1, plaintext and under the session key in turns (${turns}) ...`);
  const adminSession = await encryptedLogin(server.url, serverPem, ADMIN.username, ADMIN.password);
  await checkSealedGet(`${server.url}/api/v1/admin/users?limit=1`, adminSession);
  await listUsersLoad(server.url, adminSession.access_token, true, LOAD.warmupSec);
  const [listPlain, listEnc] = await alternate(['admin users', 'admin users (encrypted)'], server.pid,
    () => listUsersLoad(server.url, adminSession.access_token, false, LOAD.abSeconds),
    () => listUsersLoad(server.url, adminSession.access_token, true, LOAD.abSeconds));

  console.log(`bcrypt-12 parallel verify rate, next to the login row (${LOAD.bcryptParallel} in flight, ${LOAD.loginSeconds} s) ...`);
  const bcrypt = await measure('bcrypt', process.pid, bcryptRate);

  console.log(`Login at BCRYPT_COST=12 (${LOAD.loginWorkers} clients, ${LOAD.loginSeconds} s) ...`);
  const loginRate = await measure('login', server.pid, () => loginLoad(server.url, LOAD.loginSeconds, 2000));

  console.log(`Login, encrypted (${LOAD.loginWorkers} clients, ${LOAD.loginSeconds} s) ...`);
  const loginEnc = await measure('login (encrypted)', server.pid, () => encryptedLoginLoad(server.url, serverPem, LOAD.loginSeconds, 2000));

  console.log(`Validate at ${LOAD.mixedValidateRate} req/s while logins saturate the CPU (${LOAD.loginSeconds} s) ...`);
  let mixedLogin: Rate | undefined;
  const mixedValidate = await measure('validate (mixed)', server.pid, async () => {
    const [l, v] = await Promise.all([
      loginLoad(server.url, LOAD.loginSeconds, 2000),
      sleep(2000).then(() => validateLoad(server.url, user.access_token, { connections: LOAD.mixedValidateConnections, seconds: LOAD.loginSeconds, overallRate: LOAD.mixedValidateRate })),
    ]);
    checkClean('login (mixed)', l);
    mixedLogin = l;
    return v;
  });

  console.log(`The durable-commit ceiling of the same PostgreSQL: pgbench, ${PGBENCH.clients} clients, ${PGBENCH.seconds} s, one small write transaction per commit ...`);
  const ceiling = await measure('pgbench', postmaster, () => pgbenchCeiling(postgres!.url('postgres')));

  console.log(`Refresh on PostgreSQL (${REFRESH.workers} token chains, ${REFRESH.seconds} s) ...`);
  // One after another: an account has at most MAX_LOGIN_ATTEMPTS password checks reserved at
  // once (issue 9), so 32 parallel sign-ins of one user would be refused as RATE_LIMITED.
  const chains: Tokens[] = [];
  for (let i = 0; i < REFRESH.workers; i++) chains.push(await login(server.url, USER.username, USER.password));
  const refresh = await measure('refresh', server.pid, () => refreshLoad(server.url, chains));
  const refreshRatio = refresh.rate.perSec / ceiling.rate.perSec;

  console.log(`LDAP sign-in through the service and a bare ldapts search-and-bind loop on the same slapd, in turns (${LOAD.abRounds} turns of ${LOAD.abSeconds} s each, ${LOAD.ldapWorkers} in flight) ...`);
  const directory = await startDirectory(LOAD.ldapWorkers);
  slapd = directory.slapd;
  ourRoots.push(slapd.pid);
  // A new session: the login rows have ended the first one (MAX_CONCURRENT_SESSIONS).
  await configureLdap(server.url, (await login(server.url, ADMIN.username, ADMIN.password)).access_token, directory);
  const [ldapBare, ldapService] = await alternate(['ldapts search-and-bind', 'LDAP sign-in'], server.pid,
    () => bareLdapLoad(directory, LOAD.abSeconds),
    () => serviceLdapLoad(server.url, directory, LOAD.abSeconds));
  const loadedRss = rssMiB(server.pid);
  await server.stop();

  console.log(`Sign-in and validate with the risk evaluation on and off: two servers on one database, in turns (${LOAD.abRounds} turns each; sign-in: ${RISK_BENCH.workers} clients for ${RISK_BENCH.loginSeconds} s, each an account of its own from public addresses of one country; validate: ${RISK_BENCH.validateSeconds} s, ${LOAD.httpConnections} connections) ...`);
  const risk = await riskBench({ postgresUrl: (db) => postgres!.url(db), dataDir: tempDir('strongroom-bench-'), start: startStrongroom, measure, rounds: LOAD.abRounds, validate: { connections: LOAD.httpConnections, seconds: RISK_BENCH.validateSeconds, warmupSec: 1 } });

  console.log(`FAQ search at ${FAQ_ARTICLES} articles: the service's search and a naive ILIKE scan of the same rows, one query at a time, in turns (${LOAD.abRounds} turns of ${LOAD.abSeconds} s each, ${FAQ_QUERIES.length} queries in a loop) ...`);
  const faqClient = new pg.Client({ connectionString: postgres.url('postgres') });
  await faqClient.connect();
  await faqClient.query('CREATE DATABASE strongroom_faq_bench');
  await faqClient.end();
  const faq = await faqSearchBench(postgres.url('strongroom_faq_bench'), { rounds: LOAD.abRounds, seconds: LOAD.abSeconds });

  console.log(`Push delivery to the fake FCM: ${fmt(PUSH_DEFAULTS.messages)} messages, ${PUSH_DEFAULTS.users} users x ${PUSH_DEFAULTS.devicesPerUser} devices; then kill -9 mid-run and a restart (waits out the 60 s lease) ...`);
  const pushClient = new pg.Client({ connectionString: postgres.url('postgres') });
  await pushClient.connect();
  await pushClient.query('CREATE DATABASE strongroom_push_bench');
  await pushClient.end();
  await awaitQuiet(ourRoots);
  const fcm = await startFakeFcm();
  const push = await pushBench({ databaseUrl: postgres.url('strongroom_push_bench'), fcm, ...PUSH_DEFAULTS }).finally(() => fcm.close());
  const pushCrash = push.crash!;

  console.log('Restarting Strongroom on the same database (nothing to bootstrap) ...');
  const restarted = await startStrongroom('strongroom (PostgreSQL, restart)', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir });
  await sleep(LOAD.idleSec * 1000);
  const restartRss = rssMiB(restarted.pid);
  await restarted.stop();

  console.log(`Validate on PGlite (extra, ${LOAD.seconds} s) ...`);
  const embedded = await startStrongroom('strongroom (PGlite)', {});
  await sleep(LOAD.idleSec * 1000);
  const pgliteIdleRss = rssMiB(embedded.pid);
  const pgliteAdmin = await login(embedded.url, ADMIN.username, ADMIN.password);
  await validateLoad(embedded.url, pgliteAdmin.access_token, { connections: LOAD.httpConnections, seconds: LOAD.warmupSec });
  const pgliteValidate = await measure('validate (PGlite)', embedded.pid, () => validateLoad(embedded.url, pgliteAdmin.access_token, { connections: LOAD.httpConnections, seconds: LOAD.seconds }));
  await embedded.stop();

  // A million users (issue 26): the seeded database beside an empty one, on a PostgreSQL of their own.
  const scale = process.env.BENCH_SKIP_SCALE === '1' ? null : await scaleRows({ roots: ourRoots });

  console.log(`Geolocation lookups in this process (${fmt(GEO_BENCH.lookups)} a round, best of ${GEO_BENCH.rounds}; the bundled country database, then a synthetic city + ASN pair) ...`);
  const geo = await geoLookupBench();

  const threads = os.availableParallelism();
  console.log(`RSA-2048 private operations: openssl speed rsa2048 and the plugin's rsaUnwrap in turns, on 1 core, then ${threads} (${LOAD.abRounds} turns of ${LOAD.rsaSeconds} s each) ...`);
  const [openssl1, rsa1] = await alternate(['openssl speed rsa2048', 'rsaUnwrap, 1 core'], process.pid,
    async () => fixedRate(opensslRsaSignRate(LOAD.rsaSeconds), LOAD.rsaSeconds), async () => rsaUnwrapRate(LOAD.rsaSeconds));
  const [opensslN, rsaN] = await alternate([`openssl speed -multi ${threads} rsa2048`, `rsaUnwrap, ${threads} threads`], process.pid,
    async () => fixedRate(opensslRsaSignRate(LOAD.rsaSeconds, threads), LOAD.rsaSeconds), () => rsaUnwrapRateThreads(ROOT, threads, LOAD.rsaSeconds));

  const validateRatio = validate.rate.perSec / helloRate.rate.perSec;
  const pgliteRatio = pgliteValidate.rate.perSec / helloRate.rate.perSec;
  const loginRatio = loginRate.rate.perSec / bcrypt.rate.perSec;
  const validateEncRatio = validateEnc.rate.perSec / validatePlain.rate.perSec;
  const listEncRatio = listEnc.rate.perSec / listPlain.rate.perSec;
  const loginEncRatio = loginEnc.rate.perSec / loginRate.rate.perSec;
  const rsa1Ratio = rsa1.rate.perSec / openssl1.rate.perSec;
  const rsaNRatio = rsaN.rate.perSec / opensslN.rate.perSec;
  const ldapRatio = ldapService.rate.perSec / ldapBare.rate.perSec;
  const loginRiskRatio = risk.loginOn.rate.perSec / risk.loginOff.rate.perSec;
  const validateRiskRatio = risk.validateOn.rate.perSec / risk.validateOff.rate.perSec;
  const row = (r: Omit<Row, 'metText' | 'cpuPerOp' | 'otherLoad'>, m?: Measured, ops?: number): Row =>
    ({ ...r, metText: r.met === null ? '-' : r.met ? 'met' : 'NOT MET', cpuPerOp: m ? cpuPerOp(m, ops) : '', otherLoad: m ? pct(m.cpu.foreign) : '' });
  const rows: Row[] = [
    row({ key: 'hello_rps', label: 'Bare Fastify hello-world', figure: `${fmt(helloRate.rate.perSec)} req/s`, ratio: '1.00', target: 'baseline', met: null, value: helloRate.rate.perSec }, helloRate),
    row({ key: 'validate_rps', label: 'POST /auth/validate (PostgreSQL)', figure: `${fmt(validate.rate.perSec)} req/s`, ratio: fmt(validateRatio, 2), target: '>= 0.40 of hello', met: validateRatio >= 0.4, value: validate.rate.perSec }, validate),
    row({ key: 'validate_pglite_rps', label: 'POST /auth/validate (PGlite, extra)', figure: `${fmt(pgliteValidate.rate.perSec)} req/s`, ratio: fmt(pgliteRatio, 2), target: '>= 0.40 of hello', met: pgliteRatio >= 0.4, value: pgliteValidate.rate.perSec }, pgliteValidate),
    row({ key: 'bcrypt_verify_rate', label: 'bcrypt-12 verify, parallel (machine)', figure: `${fmt(bcrypt.rate.perSec, 2)} /s`, ratio: '1.00', target: 'baseline', met: null, value: bcrypt.rate.perSec }, bcrypt),
    row({ key: 'login_rps', label: 'POST /auth/login, BCRYPT_COST=12', figure: `${fmt(loginRate.rate.perSec, 2)} /s`, ratio: fmt(loginRatio, 2), target: '>= 0.90 of bcrypt', met: loginRatio >= 0.9, value: loginRate.rate.perSec }, loginRate),
    row({ key: 'validate_p99_under_login_ms', label: `validate p99 at ${LOAD.mixedValidateRate} req/s under login load`, figure: `${fmt(mixedValidate.rate.p99Ms, 1)} ms`, ratio: '', target: '<= 50 ms', met: mixedValidate.rate.p99Ms <= 50, value: mixedValidate.rate.p99Ms }, mixedValidate, NaN),
    row({ key: 'pgbench_commit_tps', label: `pgbench durable commits, ${PGBENCH.clients} clients`, figure: `${fmt(ceiling.rate.perSec)} /s`, ratio: '1.00', target: 'baseline', met: null, value: ceiling.rate.perSec }),
    row({ key: 'refresh_rps', label: 'POST /auth/refresh (PostgreSQL)', figure: `${fmt(refresh.rate.perSec)} /s`, ratio: fmt(refreshRatio, 2), target: '>= 0.50 of pgbench', met: refreshRatio >= 0.5, value: refresh.rate.perSec }, refresh),
    // LDAP (issue 11): CPU/op is the server's on the service row and this process's on the bare loop.
    row({ key: 'ldap_bare_rps', label: 'ldapts search-and-bind loop (slapd)', figure: `${fmt(ldapBare.rate.perSec)} /s`, ratio: '1.00', target: 'baseline', met: null, value: ldapBare.rate.perSec }),
    row({ key: 'ldap_signin_rps', label: 'POST /auth/ldap/login (same slapd)', figure: `${fmt(ldapService.rate.perSec)} /s`, ratio: fmt(ldapRatio, 2), target: '>= 0.50 of ldapts', met: ldapRatio >= 0.5, value: ldapService.rate.perSec }, ldapService),
    // FAQ (issue 13): query latency in this process, one query at a time (no HTTP), p99 of the worst turn.
    row({ key: 'faq_ilike_p99_ms', label: `FAQ naive ILIKE scan, ${fmt(faq.articles)} articles, p99`, figure: `${fmt(faq.ilike.p99Ms, 2)} ms`, ratio: '1.00', target: 'baseline', met: null, value: faq.ilike.p99Ms }),
    row({ key: 'faq_search_p99_ms', label: `FAQ search, ${fmt(faq.articles)} articles, p99`, figure: `${fmt(faq.search.p99Ms, 2)} ms`, ratio: fmt(faq.search.p99Ms / faq.ilike.p99Ms, 2), target: '<= 5 ms', met: faq.search.p99Ms <= 5, value: faq.search.p99Ms }),
    // Push (issue 14): the drain rate of a full queue on one node (CPU/op: the server's per message); then kill -9 at half sent and a restart.
    { ...row({ key: 'push_delivered_per_sec', label: 'Push delivered to the fake FCM (1 node)', figure: `${fmt(push.rate.perSec)} /s`, ratio: '', target: '>= 500 /s', met: push.rate.perSec >= 500, value: push.rate.perSec }), cpuPerOp: `${fmt(1000 * push.rate.cpuMsPerMessage.server)} us`, otherLoad: pct(push.rate.foreign) },
    row({ key: 'push_kill9_lost', label: 'Push, kill -9 at half sent: lost, duplicates', figure: `${pushCrash.lost} lost, ${pushCrash.duplicates} dup. of ${fmt(pushCrash.messages)}`, ratio: '', target: 'none lost', met: pushCrash.lost === 0 && pushCrash.pending === 0, value: pushCrash.lost }),
    // Scale (issue 26): each row's ratio is the seeded database's figure over the empty one's, in turns.
    ...(scale?.rows ?? []).map((r) => ({ ...r, metText: r.met === null ? '-' : r.met ? 'met' : 'NOT MET', cpuPerOp: '' })),
    row({ key: 'idle_rss_mib', label: 'Idle RSS, first start (PostgreSQL)', figure: `${fmt(idleRss, 1)} MiB`, ratio: '', target: '<= 120 MB', met: idleRss <= 120, value: idleRss }),
    row({ key: 'idle_rss_restart_mib', label: 'Idle RSS, restart (PostgreSQL)', figure: `${fmt(restartRss, 1)} MiB`, ratio: '', target: '<= 120 MB', met: restartRss <= 120, value: restartRss }),
    // Geolocation (issue 29): per lookup in this process, on addresses never seen before (no answer cache); recurring clients in the details.
    row({ key: 'geoip_lookup_country_ns', label: 'Geolocation lookup, country (bundled DB)', figure: `${fmt(geo.bundledNewNs / 1000, 2)} us`, ratio: '', target: '<= 5 us', met: geo.bundledNewNs <= 5000, value: geo.bundledNewNs }),
    row({ key: 'geoip_lookup_city_asn_ns', label: 'Geolocation lookup, city + ASN (2 DBs)', figure: `${fmt(geo.cityAsnNewNs / 1000, 2)} us`, ratio: '', target: '<= 10 us', met: geo.cityAsnNewNs <= 10_000, value: geo.cityAsnNewNs }),
    // Risk evaluation (issue 29): two servers on one database, RISK_EVALUATION=0 and 1, in turns; each ratio is to the row above it.
    row({ key: 'login_risk_off_rps', label: 'POST /auth/login, risk evaluation off (in turns)', figure: `${fmt(risk.loginOff.rate.perSec, 2)} /s`, ratio: '1.00', target: 'baseline', met: null, value: risk.loginOff.rate.perSec }, risk.loginOff),
    row({ key: 'login_risk_on_rps', label: 'POST /auth/login, risk evaluation on', figure: `${fmt(risk.loginOn.rate.perSec, 2)} /s`, ratio: fmt(loginRiskRatio, 2), target: '>= 0.95 of risk off', met: loginRiskRatio >= 0.95, value: risk.loginOn.rate.perSec }, risk.loginOn),
    row({ key: 'validate_risk_off_rps', label: 'POST /auth/validate, risk evaluation off (in turns)', figure: `${fmt(risk.validateOff.rate.perSec)} req/s`, ratio: '1.00', target: 'baseline', met: null, value: risk.validateOff.rate.perSec }, risk.validateOff),
    row({ key: 'validate_risk_on_rps', label: 'POST /auth/validate, risk evaluation on', figure: `${fmt(risk.validateOn.rate.perSec)} req/s`, ratio: fmt(validateRiskRatio, 2), target: '>= 0.95 of risk off', met: validateRiskRatio >= 0.95, value: risk.validateOn.rate.perSec }, risk.validateOn),
    // Transport encryption (issue 3 section 5). Ratios are to the baseline row just above, measured
    // in turns with it. No CPU/op on the RSA rows: each turn also spends CPU on a key pair and a warm-up.
    row({ key: 'validate_alongside_rps', label: 'POST /auth/validate, plaintext (in turns)', figure: `${fmt(validatePlain.rate.perSec)} req/s`, ratio: '1.00', target: 'baseline', met: null, value: validatePlain.rate.perSec }, validatePlain),
    row({ key: 'validate_encrypted_rps', label: 'POST /auth/validate, encrypted (pre-auth)', figure: `${fmt(validateEnc.rate.perSec)} req/s`, ratio: fmt(validateEncRatio, 2), target: '>= 0.85 of plaintext', met: validateEncRatio >= 0.85, value: validateEnc.rate.perSec }, validateEnc),
    row({ key: 'admin_users_rps', label: 'GET /admin/users?limit=1, plaintext (in turns)', figure: `${fmt(listPlain.rate.perSec)} req/s`, ratio: '1.00', target: 'baseline', met: null, value: listPlain.rate.perSec }, listPlain),
    row({ key: 'admin_users_encrypted_rps', label: 'GET /admin/users?limit=1, session key', figure: `${fmt(listEnc.rate.perSec)} req/s`, ratio: fmt(listEncRatio, 2), target: '>= 0.85 of plaintext', met: listEncRatio >= 0.85, value: listEnc.rate.perSec }, listEnc),
    row({ key: 'login_encrypted_rps', label: 'POST /auth/login, encrypted', figure: `${fmt(loginEnc.rate.perSec, 2)} /s`, ratio: fmt(loginEncRatio, 2), target: 'vs plaintext login', met: null, value: loginEnc.rate.perSec }, loginEnc),
    row({ key: 'openssl_rsa2048_sign', label: 'openssl speed rsa2048, sign/s (1 core)', figure: `${fmt(openssl1.rate.perSec)} /s`, ratio: '1.00', target: 'baseline', met: null, value: openssl1.rate.perSec }, openssl1, NaN),
    row({ key: 'rsa_oaep_decrypt_rate', label: 'plugin RSA-OAEP-2048 decrypt (1 core)', figure: `${fmt(rsa1.rate.perSec)} /s`, ratio: fmt(rsa1Ratio, 2), target: 'vs openssl', met: null, value: rsa1.rate.perSec }, rsa1, NaN),
    row({ key: 'openssl_rsa2048_sign_multi', label: `openssl speed -multi ${threads} rsa2048, sign/s`, figure: `${fmt(opensslN.rate.perSec)} /s`, ratio: '1.00', target: 'baseline', met: null, value: opensslN.rate.perSec }, opensslN, NaN),
    row({ key: 'rsa_oaep_decrypt_rate_threads', label: `plugin RSA-OAEP-2048 decrypt (${threads} threads)`, figure: `${fmt(rsaN.rate.perSec)} /s`, ratio: fmt(rsaNRatio, 2), target: 'vs openssl', met: null, value: rsaN.rate.perSec }, rsaN, NaN),
  ];

  console.log('');
  printTable(rows);
  console.log('');
  console.log('CPU/op: CPU time of the measured process (all its threads: the server, or this process for bcrypt) per operation.');
  console.log('Other load: share of the whole machine used by processes this bench did not start, during that row.');
  console.log(`Details: validate p50 ${fmt(validate.rate.p50Ms, 1)} ms, p99 ${fmt(validate.rate.p99Ms, 1)} ms; login p50 ${fmt(loginRate.rate.p50Ms)} ms; ` +
    `during the mixed run login ${fmt(mixedLogin?.perSec ?? 0, 2)} /s (${fmt((mixedLogin?.perSec ?? 0) / bcrypt.rate.perSec, 2)} of bcrypt), validate p50 ${fmt(mixedValidate.rate.p50Ms, 1)} ms; ` +
    `FAQ search p50 ${fmt(faq.search.p50Ms, 2)} ms (${fmt(faq.search.perSec)} queries/s, ${faq.found.search}/${FAQ_QUERIES.length} queries found something), ILIKE p50 ${fmt(faq.ilike.p50Ms, 2)} ms (${faq.found.ilike}/${FAQ_QUERIES.length}); ` +
    `push: ${fmt(push.rate.drained)} sent in ${fmt(push.rate.drainSec, 1)} s after the queue was full (${fmt(push.rate.idleSec, 1)} s of it between worker turns), ${fmt(push.rate.overallPerSec)} /s from the first enqueue, PostgreSQL CPU ${fmt(1000 * push.rate.cpuMsPerMessage.postgres)} us per message; after kill -9 none pending ${fmt(pushCrash.recoverSec, 1)} s after the kill; refresh p50 ${fmt(refresh.rate.p50Ms, 1)} ms, p99 ${fmt(refresh.rate.p99Ms, 1)} ms, PostgreSQL CPU ${fmt((1e6 * refresh.cpu.sec.postgres!) / refresh.rate.all)} us and load generator (this process) CPU ${fmt((1e6 * refresh.cpu.sec.bench!) / refresh.rate.all)} us per refresh; RSS after load ${fmt(loadedRss, 1)} MiB; PGlite idle RSS ${fmt(pgliteIdleRss, 1)} MiB.`);
  console.log(`Geolocation: a recurring client (answer cache) ${fmt(geo.bundledRecurringNs)} ns with the country database, ${fmt(geo.cityAsnRecurringNs)} ns with city + ASN; ${fmt(geo.found.bundled)} of ${fmt(GEO_BENCH.lookups)} new addresses found a country in the bundled database.`);
  console.log(`Transport: encrypted validate p50 ${fmt(validateEnc.rate.p50Ms, 1)} ms, p99 ${fmt(validateEnc.rate.p99Ms, 1)} ms; admin users p50 ${fmt(listPlain.rate.p50Ms, 1)} ms plaintext, ${fmt(listEnc.rate.p50Ms, 1)} ms sealed; ` +
    `encrypted login p50 ${fmt(loginEnc.rate.p50Ms)} ms.`);
  const riskCpuMs = (m: Measured): string => fmt((1000 * m.cpu.sec.focus!) / m.rate.all, 1);
  console.log(`Risk evaluation: the server's CPU per sign-in ${riskCpuMs(risk.loginOff)} ms off, ${riskCpuMs(risk.loginOn)} ms on; sign-in p50 ${fmt(risk.loginOff.rate.p50Ms)} ms off, ${fmt(risk.loginOn.rate.p50Ms)} ms on; ` +
    `validate p50 ${fmt(risk.validateOff.rate.p50Ms, 1)} ms off, ${fmt(risk.validateOn.rate.p50Ms, 1)} ms on; the profiles counted ${fmt(risk.profileSignIns)} sign-ins, every one of the risk-on server's and none of the other's.`);
  const busiest = Math.max(...[bcrypt, helloRate, validate, loginRate, mixedValidate, refresh, ldapBare, ldapService, validatePlain, validateEnc, listPlain, listEnc, loginEnc, rsa1, rsaN, openssl1, opensslN, risk.loginOff, risk.loginOn, risk.validateOff, risk.validateOn].map((m) => m.cpu.foreign));
  if (busiest > 0.1) console.log(`WARNING: other processes used up to ${pct(busiest)} of the machine during a row: those figures are below what a quiet machine gives.`);

  const results = {
    date: new Date().toISOString(),
    command: 'npm run bench',
    machine: { ...machine(), postgresql: pgVersion },
    load: LOAD,
    rows: rows.map(({ key, label, value, ratio: r, target, met, cpuPerOp: c, otherLoad }) => ({ key, label, value, ratio: r === '' ? null : Number(r), target, met, cpu_per_op: c || null, other_load: otherLoad || null })),
    raw: {
      hello: helloRate, validate, pgliteValidate, bcrypt, login: loginRate, mixedLogin, mixedValidate, refresh, ldap: { bare: ldapBare, service: ldapService, workers: LOAD.ldapWorkers }, faq, push, geo, risk: { ...risk, load: RISK_BENCH }, idleRssMiB: idleRss, restartRssMiB: restartRss, loadedRssMiB: loadedRss, pgliteIdleRssMiB: pgliteIdleRss, scale: scale?.raw ?? null,
      transport: { validatePlaintext: validatePlain, validateEncrypted: validateEnc, adminUsers: listPlain, adminUsersEncrypted: listEnc, loginEncrypted: loginEnc, rsaUnwrap1: rsa1, rsaUnwrapThreads: rsaN, opensslSign1: openssl1, opensslSignMulti: opensslN, threads },
    },
    seconds: Math.round((Date.now() - started) / 1000),
  };
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(path.join(ROOT, 'bench/results/latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`Wrote bench/results/latest.json (${results.seconds} s in all).`);
}

process.once('SIGINT', () => {
  void cleanup().finally(() => process.exit(130));
});

try {
  await main();
} catch (err) {
  console.error('Benchmark failed:', err);
  process.exitCode = 1;
} finally {
  await cleanup();
}
