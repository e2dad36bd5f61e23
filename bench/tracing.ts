/**
 * `npx tsx bench/tracing.ts [--rounds N] [--cpu-prof DIR]`: what OpenTelemetry tracing costs, one build (the
 * working tree, `npm run build`) started three times side by side, each on its own database of
 * one durable PostgreSQL: tracing off (no OTEL_* variable), on with every trace kept, and on with
 * a tenth kept (`parentbased_traceidratio` 0.1), the two exporting over OTLP/HTTP to a collector
 * stand-in in this process that reads and drops what it gets. Rows: validate and an authenticated
 * route that reads the database (`GET /admin/users?limit=1`). The sides take turns, a round at
 * a time in rotating order, so other load weighs on all alike. Prints each row's rates and their
 * ratio to the side with tracing off. (bench/compare.ts compares two builds with one
 * environment; this compares one build with three.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, startPostgres, type RunningPostgres } from '../test/harness/postgres.js';
import { login } from './lib/api.js';
import { finishBench } from './lib/finish.js';
import { cannon, combineRates, type Rate } from './lib/load.js';
import { startNode, type Child } from './lib/proc.js';
import { ADMIN, SERVER_JS, strongroomEnv } from './lib/strongroom.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('rounds') ?? 6);
/** `--cpu-prof DIR`: each server's CPU profile, written there when it stops. */
const PROFILE = arg('cpu-prof');
const SECONDS = 2;
const CONNECTIONS = 50;

const cleanups: Array<() => void> = [];
let postgres: RunningPostgres | undefined;
let collector: http.Server | undefined;

interface Side { name: string; server: Child; token: string }

const ROWS: Array<[string, (s: Side) => Promise<Rate>]> = [
  ['POST /auth/validate', (s) => cannon({ url: `${s.server.url}/api/v1/auth/validate`, method: 'POST', headers: { authorization: `Bearer ${s.token}` }, connections: CONNECTIONS, seconds: SECONDS })],
  ['GET /admin/users?limit=1', (s) => cannon({ url: `${s.server.url}/api/v1/admin/users?limit=1`, headers: { authorization: `Bearer ${s.token}` }, connections: CONNECTIONS, seconds: SECONDS })],
];

async function startSide(name: string, env: Record<string, string>, database: string): Promise<Side> {
  const data = mkdtempSync(path.join(os.tmpdir(), 'strongroom-tracing-'));
  cleanups.push(() => rmSync(data, { recursive: true, force: true }));
  const server = await startNode(name, [...(PROFILE === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(PROFILE)}`, `--cpu-prof-name=${name.replace(/\W+/g, '-')}.cpuprofile`]), SERVER_JS], strongroomEnv({ DATABASE_URL: postgres!.url(database), DATA_DIR: data, ...env }), await freePort());
  return { name, server, token: (await login(server.url, ADMIN.username, ADMIN.password)).access_token };
}

async function main(): Promise<void> {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  collector = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => collector!.listen(0, '127.0.0.1', () => resolve()));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  postgres = await startPostgres({ durable: true });
  const client = new pg.Client({ connectionString: postgres.url('postgres') });
  await client.connect();
  for (const db of ['tracing_off', 'tracing_all', 'tracing_tenth']) await client.query(`CREATE DATABASE ${db}`);
  await client.end();
  const sides = [
    await startSide('off', {}, 'tracing_off'),
    await startSide('on, every trace', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, 'tracing_all'),
    await startSide('on, a tenth', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }, 'tracing_tenth'),
  ];
  console.log(`${ROUNDS} rounds of ${SECONDS} s per row and side, ${CONNECTIONS} connections ...`);
  const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  const lines: string[] = [];
  for (const [row, load] of ROWS) {
    for (const s of sides) await load(s); // warm-up
    const runs: Rate[][] = sides.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < sides.length; k++) {
        const at = (r + k) % sides.length;
        const rate = await load(sides[at]!);
        if (rate.failed > 0) throw new Error(`${row} on ${sides[at]!.name}: ${rate.failed} failed requests`);
        runs[at]!.push(rate);
      }
    }
    const rates = runs.map(combineRates);
    lines.push(`| ${row} | ${rates.map((x) => `${fmt(x.perSec)} /s`).join(' | ')} | ${rates.slice(1).map((x) => (x.perSec / rates[0]!.perSec).toFixed(3)).join(' / ')} |`);
    console.log(`  ${row}: done`);
  }
  console.log(`\n| row | ${sides.map((s) => s.name).join(' | ')} | on / off (every, a tenth) |\n|---|---|---|---|---|\n${lines.join('\n')}`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => finishBench(() => collector?.close(), () => postgres?.stop(), ...cleanups.reverse()));
