/**
 * `npx tsx bench/compare.ts [--before <git ref>] [--rounds N] [--env A=1,B=2]`: the hot authenticated paths of
 * two builds side by side in one run, for a change that touches them: the working tree against
 * `--before` (default `HEAD`), each built the same way (`tsc -p tsconfig.build.json`; the older
 * one in a temporary git worktree sharing this tree's node_modules), each on its own database of
 * one durable PostgreSQL. Rows: validate, an authenticated route (`GET /admin/users?limit=1`)
 * and refresh; first with no access policy, then with a web policy (IP allow list) covering
 * every request. The two builds take turns, a round at a time and in alternating order, so
 * other load that comes and goes weighs on both alike. Prints each row's rates and their ratio.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, startPostgres, type RunningPostgres } from '../test/harness/postgres.js';
import { createUser, login, postJson, type Tokens } from './lib/api.js';
import { post } from './lib/client.js';
import { finishBench } from './lib/finish.js';
import { cannon, closedLoop, combineRates, type Rate } from './lib/load.js';
import { startNode, type Child } from './lib/proc.js';
import { ADMIN, strongroomEnv } from './lib/strongroom.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const BEFORE = arg('before', 'HEAD');
/** `--env A=1,B=2`: set for both servers (LOG_LEVEL=info to weigh what logging costs, say). */
const ENV = Object.fromEntries(arg('env', '').split(',').filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const ROUNDS = Number(arg('rounds', '4'));
const SECONDS = 2;
const CONNECTIONS = 50;
const REFRESH_WORKERS = 32;
const USER = { username: 'compareuser', password: 'Kw4!rTz8#mPq2$vN' };

interface Side {
  name: string;
  server: Child;
  user: Tokens;
  admin: Tokens;
  chains: Tokens[];
}

const cleanups: Array<() => void> = [];
let postgres: RunningPostgres | undefined;

function buildBefore(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-before-'));
  execFileSync('git', ['worktree', 'add', '--detach', dir, BEFORE], { cwd: ROOT, stdio: 'inherit' });
  cleanups.push(() => execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT }));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  return dir;
}

async function startSide(name: string, root: string, databaseUrl: string): Promise<Side> {
  const data = mkdtempSync(path.join(os.tmpdir(), 'strongroom-compare-'));
  cleanups.push(() => rmSync(data, { recursive: true, force: true }));
  const server = await startNode(name, [path.join(root, 'dist/src/server.js')], strongroomEnv({ DATABASE_URL: databaseUrl, DATA_DIR: data, ...ENV }), await freePort());
  const admin = await login(server.url, ADMIN.username, ADMIN.password);
  await createUser(server.url, admin.access_token, USER.username, USER.password);
  const user = await login(server.url, USER.username, USER.password);
  const chains: Tokens[] = [];
  for (let i = 0; i < REFRESH_WORKERS; i++) chains.push(await login(server.url, USER.username, USER.password));
  return { name, server, user, admin, chains };
}

const ROWS: Array<[string, (s: Side) => Promise<Rate>]> = [
  ['POST /auth/validate', (s) => cannon({ url: `${s.server.url}/api/v1/auth/validate`, method: 'POST', headers: { authorization: `Bearer ${s.user.access_token}` }, connections: CONNECTIONS, seconds: SECONDS })],
  ['GET /admin/users?limit=1', (s) => cannon({ url: `${s.server.url}/api/v1/admin/users?limit=1`, headers: { authorization: `Bearer ${s.admin.access_token}` }, connections: CONNECTIONS, seconds: SECONDS })],
  ['POST /auth/refresh', (s) => closedLoop({
    workers: REFRESH_WORKERS, warmupMs: 500, seconds: SECONDS,
    makeWorker: (i) => async () => {
      const res = await post(`${s.server.url}/api/v1/auth/refresh`, JSON.stringify({ refresh_token: s.chains[i]!.refresh_token }));
      if (res.status !== 200) return false;
      s.chains[i] = JSON.parse(res.body) as Tokens;
      return true;
    },
  })],
];

/** Every row on both sides, `ROUNDS` turns each, the order of the sides alternating. */
async function measure(sides: [Side, Side], label: string): Promise<Array<{ row: string; rates: [Rate, Rate] }>> {
  const out = [];
  for (const [row, load] of ROWS) {
    await load(sides[0]);
    await load(sides[1]); // warm-up
    const runs: [Rate[], Rate[]] = [[], []];
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const rate = await load(sides[i]!);
        if (rate.failed > 0) throw new Error(`${row} on ${sides[i]!.name}: ${rate.failed} failed requests`);
        runs[i as 0 | 1].push(rate);
      }
    }
    out.push({ row: `${row}, ${label}`, rates: [combineRates(runs[0]), combineRates(runs[1])] as [Rate, Rate] });
    console.log(`  ${row}, ${label}: done`);
  }
  return out;
}

async function addPolicy(s: Side): Promise<void> {
  const admin = await login(s.server.url, ADMIN.username, ADMIN.password);
  const res = await postJson(`${s.server.url}/api/v1/admin/access-policies`, { name: 'web: loopback', channel: 'web', rules: { ip: { allow: ['127.0.0.0/8', '10.0.0.0/8'] } } }, admin.access_token);
  if (res.status !== 201) throw new Error(`policy on ${s.name}: ${res.status} ${JSON.stringify(res.json)}`);
}

async function main(): Promise<void> {
  console.log(`Building ${BEFORE} (before) in a worktree, and the working tree (after) ...`);
  const beforeRoot = buildBefore();
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  postgres = await startPostgres({ durable: true });
  const client = new pg.Client({ connectionString: postgres.url('postgres') });
  await client.connect();
  await client.query('CREATE DATABASE compare_before');
  await client.query('CREATE DATABASE compare_after');
  await client.end();
  const sides: [Side, Side] = [
    await startSide('before', beforeRoot, postgres.url('compare_before')),
    await startSide('after', ROOT, postgres.url('compare_after')),
  ];
  console.log(`${ROUNDS} rounds of ${SECONDS} s per row and side, ${CONNECTIONS} connections (refresh: ${REFRESH_WORKERS} clients) ...`);
  const results = await measure(sides, 'no policy');
  for (const s of sides) await addPolicy(s);
  results.push(...(await measure(sides, 'a web IP policy')));

  const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  console.log(`\n| row | before (${BEFORE}) | after (working tree) | after / before |\n|---|---|---|---|`);
  for (const { row, rates: [b, a] } of results) console.log(`| ${row} | ${fmt(b.perSec)} /s | ${fmt(a.perSec)} /s | ${(a.perSec / b.perSec).toFixed(3)} |`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => finishBench(() => postgres?.stop(), ...cleanups.reverse()));
