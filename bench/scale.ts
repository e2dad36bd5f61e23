/**
 * `npm run bench:scale`: the service at a million users (issue 26 section 2), measured against
 * itself on an empty database in the same run. On one PostgreSQL of its own (durable defaults;
 * its data kept under STRONGROOM_SCALE_DIR for the next run, bench/lib/seed-postgres.ts) it keeps
 * two databases: `strongroom_scale`, seeded by `strongroom bench seed` with 1,000,000 users,
 * 1,000,000 sessions and 10,000,000 audit entries (made once, then reused while fresh), and
 * `strongroom_scale_empty`, seeded again each run with 100 users only. One server runs on each,
 * with the same keys and settings. Sign-in, validate and refresh are measured on both in turns
 * (target: the seeded rate within 10% of the empty one), then an administrator's audit queries,
 * one at a time (target: p99 <= 20 ms at full size).
 *
 * `scaleRows()` does all of that and returns the rows, for bench/run.ts; run as a script, this
 * builds the server first, prints the rows and writes bench/results/scale.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { passwordUsers, seedUuid } from '../src/cli/bench-seed-identity.js';
import { DEFAULT_PLAN, type SeedMarker, type SeedPlan } from '../src/cli/bench-seed-marker.js';
import { freePort } from '../test/harness/postgres.js';
import { login, type Tokens } from './lib/api.js';
import { awaitQuiet, postmasterPid, watchCpu } from './lib/cpu.js';
import { finishBench } from './lib/finish.js';
import { cannon, combineRates, type Rate } from './lib/load.js';
import { startNode, type Child } from './lib/proc.js';
import { refreshLoad, REFRESH } from './lib/refresh.js';
import { auditLoad, closeSeedAgent, signInEach, signInLoad, type AuditRate } from './lib/seed-load.js';
import { SCALE_DIR, startPersistentPostgres, type PersistentPostgres } from './lib/seed-postgres.js';
import { ensureSeeded, type Seeded } from './lib/seed.js';
import { ADMIN, SERVER_JS, strongroomEnv } from './lib/strongroom.js';

const ROOT = path.resolve(import.meta.dirname, '..');
/** PostgreSQL servers scaleRows has started and not stopped yet: stopped on Ctrl-C too. */
const running = new Set<PersistentPostgres>();

/** Load shapes, kept together so docs/benchmarks.md can quote them. */
export const SCALE_LOAD = {
  rounds: 4, // turns of each load on each database
  loginWorkers: 8, // each its own synthetic user; odd ones by email
  loginSeconds: 6,
  validateConnections: 50,
  validateSeconds: 4,
  auditSeconds: 5, // per query shape, one query at a time
  auditWarmupMs: 2000,
  auditUserDays: 90, // "what did this customer do in the last three months"
  emptyUsers: 100,
};

/** A row as bench/run.ts prints it (its `row()` adds the rest). */
export interface ScaleRow {
  key: string;
  label: string;
  figure: string;
  ratio: string;
  target: string;
  met: boolean | null;
  value: number;
  /** Share of the machine other processes used during the row. */
  otherLoad: string;
}

interface Measured {
  rate: Rate;
  foreign: number;
}

/** Both sides of a load measured in turns, and the median of the turns' seeded/empty ratios. */
interface Paired {
  empty: Measured;
  seeded: Measured;
  ratio: number;
  /** Each turn's rate, per side, in the order measured. */
  turns: { empty: number[]; seeded: number[] };
}

interface Side {
  name: 'empty' | 'seeded';
  seeded: Seeded;
  server: Child;
  users: number;
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (x: number): string => `${fmt(100 * x)}%`;

async function measure(roots: number[], what: string, load: () => Promise<Rate>): Promise<Measured> {
  await awaitQuiet(roots);
  const watch = watchCpu();
  const rate = await load();
  const { foreign } = watch.end(roots, {});
  if (rate.failed > 0) throw new Error(`${what}: ${rate.failed} failed of ${rate.ok + rate.failed}; the figure would be wrong`);
  return { rate, foreign };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * The empty and the seeded side take turns, SCALE_LOAD.rounds times each; each side's windows
 * are then added up. The ratio is the median of each turn's seeded rate over the empty rate just
 * before it: a burst of other load on this shared machine then moves one turn, not the figure.
 */
async function turns(roots: number[], what: string, empty: () => Promise<Rate>, seeded: () => Promise<Rate>): Promise<Paired> {
  const runs: Record<'empty' | 'seeded', Measured[]> = { empty: [], seeded: [] };
  for (let i = 0; i < SCALE_LOAD.rounds; i++) {
    runs.empty.push(await measure(roots, `${what} (empty)`, empty));
    runs.seeded.push(await measure(roots, `${what} (seeded)`, seeded));
  }
  const join = (ms: Measured[]): Measured => ({
    rate: combineRates(ms.map((m) => m.rate)),
    foreign: ms.reduce((a, m) => a + m.foreign * m.rate.seconds, 0) / ms.reduce((a, m) => a + m.rate.seconds, 0),
  });
  return {
    empty: join(runs.empty), seeded: join(runs.seeded), ratio: median(runs.seeded.map((m, i) => m.rate.perSec / runs.empty[i]!.rate.perSec)),
    turns: { empty: runs.empty.map((m) => m.rate.perSec), seeded: runs.seeded.map((m) => m.rate.perSec) },
  };
}

function ratioRow(key: string, label: string, unit: string, m: Paired, digits = 0): ScaleRow {
  const { ratio } = m;
  return {
    key, label, figure: `${fmt(m.seeded.rate.perSec, digits)} ${unit} (empty: ${fmt(m.empty.rate.perSec, digits)})`, ratio: fmt(ratio, 2),
    target: '>= 0.90 of empty', met: ratio >= 0.9, value: m.seeded.rate.perSec, otherLoad: pct(Math.max(m.empty.foreign, m.seeded.foreign)),
  };
}

/** Sign-in, validate and refresh on both sides, in turns. */
async function throughput(roots: number[], e: Side, s: Side): Promise<Record<'signin' | 'validate' | 'refresh', Paired>> {
  const pick = (side: Side): ReturnType<typeof passwordUsers> => passwordUsers(side.users, SCALE_LOAD.loginWorkers + 1 + REFRESH.workers);
  const [pe, ps] = [pick(e), pick(s)];
  const loginUsers = (p: typeof pe): typeof pe => p.slice(0, SCALE_LOAD.loginWorkers);
  console.log(`Sign-in (${SCALE_LOAD.loginWorkers} synthetic users, half by email, ${SCALE_LOAD.loginSeconds} s a turn) ...`);
  const signin = await turns(roots, 'sign-in',
    () => signInLoad(e.server.url, loginUsers(pe), SCALE_LOAD.loginSeconds, 1000),
    () => signInLoad(s.server.url, loginUsers(ps), SCALE_LOAD.loginSeconds, 1000));

  const [te] = await signInEach(e.server.url, pe.slice(SCALE_LOAD.loginWorkers, SCALE_LOAD.loginWorkers + 1));
  const [ts] = await signInEach(s.server.url, ps.slice(SCALE_LOAD.loginWorkers, SCALE_LOAD.loginWorkers + 1));
  const validate = (base: string, t: Tokens, seconds: number): Promise<Rate> =>
    cannon({ url: `${base}/api/v1/auth/validate`, method: 'POST', headers: { authorization: `Bearer ${t.access_token}` }, connections: SCALE_LOAD.validateConnections, seconds });
  await validate(e.server.url, te!, 1);
  await validate(s.server.url, ts!, 1);
  console.log(`Validate (${SCALE_LOAD.validateConnections} connections, ${SCALE_LOAD.validateSeconds} s a turn) ...`);
  const validated = await turns(roots, 'validate', () => validate(e.server.url, te!, SCALE_LOAD.validateSeconds), () => validate(s.server.url, ts!, SCALE_LOAD.validateSeconds));

  console.log(`Refresh (${REFRESH.workers} token chains, each its own synthetic user, ${REFRESH.seconds} s a turn) ...`);
  const chainsE = await signInEach(e.server.url, pe.slice(SCALE_LOAD.loginWorkers + 1));
  const chainsS = await signInEach(s.server.url, ps.slice(SCALE_LOAD.loginWorkers + 1));
  const refresh = await turns(roots, 'refresh', () => refreshLoad(e.server.url, chainsE), () => refreshLoad(s.server.url, chainsS));
  return { signin, validate: validated, refresh };
}

/** The two audit query shapes, one at a time: by user over 90 days, and by event type over one day. */
async function auditQueries(roots: number[], side: Side, plan: SeedPlan): Promise<{ byUser: AuditRate; byEventDay: AuditRate; foreign: number }> {
  const token = (await login(side.server.url, ADMIN.username, ADMIN.password)).access_token;
  const anchor = side.seeded.marker.anchor.getTime();
  const days = Math.max(1, Math.floor((anchor - Date.UTC(new Date(anchor).getUTCFullYear(), new Date(anchor).getUTCMonth() - plan.months, 1)) / 86_400_000) - 1);
  const iso = (ms: number): string => new Date(ms).toISOString();
  const byUser = (): string => {
    const n = 1 + Math.floor(Math.random() * side.users);
    return `user_id=${seedUuid(n)}&from=${iso(Date.now() - SCALE_LOAD.auditUserDays * 86_400_000)}&to=${iso(Date.now())}`;
  };
  const byEventDay = (): string => {
    const day = Math.floor(anchor / 86_400_000) - 1 - Math.floor(Math.random() * days);
    return `event_type=USER_LOGIN&from=${iso(day * 86_400_000)}&to=${iso((day + 1) * 86_400_000)}`;
  };
  let user: AuditRate | undefined;
  let event: AuditRate | undefined;
  const a = await measure(roots, `audit by user (${side.name})`, async () => (user = await auditLoad(side.server.url, token, byUser, SCALE_LOAD.auditSeconds, SCALE_LOAD.auditWarmupMs)));
  const b = await measure(roots, `audit by event and day (${side.name})`, async () => (event = await auditLoad(side.server.url, token, byEventDay, SCALE_LOAD.auditSeconds, SCALE_LOAD.auditWarmupMs)));
  return { byUser: user!, byEventDay: event!, foreign: Math.max(a.foreign, b.foreign) };
}

export interface ScaleResult {
  rows: ScaleRow[];
  raw: Record<string, unknown>;
}

function auditRow(key: string, label: string, m: AuditRate, empty: AuditRate, foreign: number): ScaleRow {
  return {
    key, label, figure: `${fmt(m.p99Ms, 1)} ms (p50 ${fmt(m.p50Ms, 1)}; empty: p99 ${fmt(empty.p99Ms, 1)})`, ratio: '',
    target: '<= 20 ms', met: m.p99Ms <= 20, value: m.p99Ms, otherLoad: pct(foreign),
  };
}

function rowsOf(plan: SeedPlan, marker: SeedMarker, seededSeconds: number | null, t: Awaited<ReturnType<typeof throughput>>, ae: Awaited<ReturnType<typeof auditQueries>>, as: Awaited<ReturnType<typeof auditQueries>>): ScaleRow[] {
  const at = `${fmt(plan.users)} users`;
  const seedSeconds = Object.values(marker.seconds).reduce((a, b) => a + b, 0);
  return [
    { key: 'scale_seed_seconds', label: `bench seed: ${at}, ${fmt(plan.sessions)} sessions, ${fmt(plan.audit)} audit entries`, figure: `${fmt(seedSeconds)} s${seededSeconds === null ? ` (made ${marker.startedAt.toISOString().slice(0, 10)}, reused)` : ''}`, ratio: '', target: 'minutes', met: null, value: seedSeconds, otherLoad: '' },
    ratioRow('scale_signin_rps', `POST /auth/login at ${at}`, '/s', t.signin, 2),
    ratioRow('scale_validate_rps', `POST /auth/validate at ${at}`, 'req/s', t.validate),
    ratioRow('scale_refresh_rps', `POST /auth/refresh at ${at}`, '/s', t.refresh),
    auditRow('scale_audit_user_p99_ms', `GET /admin/audit by user, ${SCALE_LOAD.auditUserDays} days, p99`, as.byUser, ae.byUser, as.foreign),
    auditRow('scale_audit_event_day_p99_ms', 'GET /admin/audit by event type, one day, p99', as.byEventDay, ae.byEventDay, as.foreign),
  ];
}

/**
 * The million-user rows: starts (and stops) its PostgreSQL and two servers of the built
 * `dist/src/server.js`; seeds what is missing. `roots`: processes whose CPU is the bench's own.
 */
export async function scaleRows(opts: { plan?: SeedPlan; dir?: string; roots?: number[] } = {}): Promise<ScaleResult> {
  const plan = opts.plan ?? DEFAULT_PLAN;
  const dir = opts.dir ?? SCALE_DIR;
  console.log(`Starting the scale bench's PostgreSQL (data kept in ${dir}) ...`);
  const postgres: PersistentPostgres = await startPersistentPostgres(dir);
  running.add(postgres);
  const servers: Child[] = [];
  try {
    const roots = [...(opts.roots ?? [process.pid]), postmasterPid(postgres.port) ?? -1];
    const env = strongroomEnv({ DATA_DIR: path.join(dir, 'data') });
    console.log(`Seeding strongroom_scale (${fmt(plan.users)} users), or reusing its seed ...`);
    const seeded = await ensureSeeded(postgres.url('postgres'), 'strongroom_scale', plan, env);
    const emptyPlan: SeedPlan = { users: SCALE_LOAD.emptyUsers, sessions: 0, activeSessions: 0, audit: 0, months: 1 };
    const empty = await ensureSeeded(postgres.url('postgres'), 'strongroom_scale_empty', emptyPlan, env, { fresh: true });
    const start = async (name: string, s: Seeded): Promise<Child> => {
      const child = await startNode(name, [SERVER_JS], { ...env, DATABASE_URL: s.url }, await freePort());
      servers.push(child);
      return child;
    };
    const e: Side = { name: 'empty', seeded: empty, server: await start('strongroom (empty)', empty), users: emptyPlan.users };
    const s: Side = { name: 'seeded', seeded, server: await start('strongroom (1,000,000 users)', seeded), users: plan.users };
    roots.push(e.server.pid, s.server.pid);
    const t = await throughput(roots, e, s);
    console.log(`Audit queries, one at a time (${SCALE_LOAD.auditSeconds} s each shape and database) ...`);
    const ae = await auditQueries(roots, e, emptyPlan);
    const as = await auditQueries(roots, s, plan);
    const rows = rowsOf(plan, seeded.marker, seeded.seededSeconds, t, ae, as);
    return { rows, raw: { plan, seed: { ...seeded.marker, seededSeconds: seeded.seededSeconds }, load: SCALE_LOAD, throughput: t, audit: { empty: ae, seeded: as } } };
  } finally {
    for (const child of servers) await child.stop();
    closeSeedAgent();
    running.delete(postgres);
    postgres.stop();
  }
}

function printRows(rows: ScaleRow[]): void {
  const cols: Array<[string, (r: ScaleRow) => string]> = [['Measure', (r) => r.label], ['Figure', (r) => r.figure], ['Ratio', (r) => r.ratio], ['Target', (r) => r.target],
    ['Met', (r) => (r.met === null ? '-' : r.met ? 'met' : 'NOT MET')], ['Other load', (r) => r.otherLoad]];
  const cells = rows.map((r) => cols.map(([, f]) => f(r)));
  const widths = cols.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]): string => `| ${c.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(cols.map(([h]) => h)));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const c of cells) console.log(line(c));
}

async function main(): Promise<void> {
  const started = Date.now();
  console.log('Building the server (npm run build) ...');
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  } catch (err) {
    // tsc emits JavaScript despite type errors (as bench/run.ts allows): a half-edited tree elsewhere should not stop a bench.
    if (!existsSync(SERVER_JS)) throw err;
    console.warn('WARNING: the build reported errors (above); benchmarking the JavaScript it emitted.');
  }
  const result = await scaleRows();
  console.log('');
  printRows(result.rows);
  console.log('Ratio: the median over the turns of the seeded rate over the empty rate measured just before it.');
  const busiest = Math.max(...result.rows.map((r) => (r.otherLoad ? Number(r.otherLoad.replace('%', '')) / 100 : 0)));
  if (busiest > 0.1) console.log(`WARNING: other processes used up to ${pct(busiest)} of the machine during a row: those figures are below what a quiet machine gives, and the ratios noisier.`);
  const results = { date: new Date().toISOString(), command: 'npm run bench:scale', rows: result.rows, raw: result.raw, seconds: Math.round((Date.now() - started) / 1000) };
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(path.join(ROOT, 'bench/results/scale.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nWrote bench/results/scale.json (${results.seconds} s in all).`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.once('SIGINT', () => {
    void finishBench(() => { for (const p of running) p.stop(); }).finally(() => process.exit(130));
  });
  try {
    await main();
  } catch (err) {
    console.error('Scale bench failed:', err);
    process.exitCode = 1;
  } finally {
    await finishBench();
  }
}
