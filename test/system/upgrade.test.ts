/**
 * Upgrades, expand then contract: the previous release (this repository's code from before its
 * newest migration was added, run as its own server process) keeps serving while the new release
 * migrates the database under it, and the new release carries on the sessions the previous one
 * opened. A node restarting on a schema a newer release migrated serves without migrating; a
 * database migrated by another line of releases is refused. Released migrations are never edited.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsAhead, runMigrations } from '../../src/platform/db/migrate.js';
import { migrations } from '../../src/platform/db/migrations/index.js';
import { createTestApp, emptyPostgresDatabase, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { cliEnv } from '../harness/cli.js';
import { bearer, seedUser, signIn, OTHER_PASSWORD } from '../harness/fixtures.js';
import { freePort } from '../harness/postgres.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MIGRATIONS_DIR = 'src/platform/db/migrations';
const NEWEST = Object.keys(migrations).at(-1)!;

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
}

/** The commit before the one that added the newest migration: the previous release's code (it may lack more than that one). */
function previousRelease(): string {
  const added = git('log', '--format=%H', '--diff-filter=A', '--', `${MIGRATIONS_DIR}/${NEWEST}.ts`).split('\n').at(-1);
  if (!added) throw new Error(`no commit adds ${MIGRATIONS_DIR}/${NEWEST}.ts: the upgrade test needs the repository's history (a full clone)`);
  return git('rev-parse', `${added}^`);
}

/** Runs a command of a checkout (`src/cli.ts` or `src/server.ts`) as an operator would. */
function run(dir: string, script: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function output(child: ChildProcess, until?: string): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const take = (d: Buffer): void => {
      out += d.toString();
      if (until && out.includes(until)) resolve(out);
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    child.on('exit', (code) => (until || code !== 0 ? reject(new Error(`exited with ${code}:\n${out}`)) : resolve(out)));
  });
}

async function call(port: number, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe(`upgrade to the release that adds ${NEWEST}`, { timeout: 180_000 }, () => {
  const secrets = testSecrets();
  const dirs: string[] = [];
  let previous: string;
  let checkout: string;
  let url: string;
  let env: Record<string, string>;
  let server: ChildProcess | undefined;
  let port: number;
  let t: TestApp | undefined;
  /** The previous release's migration files, and the migrations this release adds (one or more), in order. */
  let shipped: string[] = [];
  let added: string[] = [];

  beforeAll(async () => {
    previous = previousRelease();
    checkout = mkdtempSync(path.join(os.tmpdir(), 'strongroom-previous-'));
    dirs.push(checkout);
    execFileSync('sh', ['-c', `git archive ${previous} | tar -x -C "${checkout}"`], { cwd: ROOT });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(checkout, 'node_modules'));
    shipped = readdirSync(path.join(checkout, MIGRATIONS_DIR)).filter((f) => /^\d{3}-.*\.ts$/.test(f)).sort();
    added = Object.keys(migrations).slice(shipped.length);
    url = await emptyPostgresDatabase('up');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-previous-data-'));
    dirs.push(dataDir);
    env = cliEnv(secrets, dataDir, { DATABASE_URL: url, NODE_ENV: 'development', HOST: '127.0.0.1', LOG_LEVEL: 'info', SIGNIN_RATE_LIMIT_PER_MINUTE: '1000' });
  });

  afterAll(async () => {
    if (server?.exitCode === null) server.kill('SIGKILL');
    await t?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the migrations the previous release shipped are unchanged (released migrations are never edited)', () => {
    expect(shipped).not.toContain(`${NEWEST}.ts`);
    // The previous release's migrations are the first of ours, in order; the release adds the rest.
    expect(shipped).toEqual(Object.keys(migrations).slice(0, shipped.length).map((name) => `${name}.ts`));
    expect(added.length).toBeGreaterThan(0);
    for (const file of shipped) {
      expect(readFileSync(path.join(ROOT, MIGRATIONS_DIR, file), 'utf8'), file).toBe(readFileSync(path.join(checkout, MIGRATIONS_DIR, file), 'utf8'));
    }
  });

  it('the previous release keeps serving while the new one migrates under it, and the new one carries on its sessions', async () => {
    // The previous release: a customer created by its CLI, who changes the temporary password and signs in on its server.
    const created = await output(run(checkout, 'src/cli.ts', ['users', 'create', '--username', 'ama.mensah', '--roles', 'customer'], env));
    const temporary = /^ {4}(\S+)$/m.exec(created)![1]!;
    port = await freePort();
    server = run(checkout, 'src/server.ts', [], { ...env, PORT: String(port) });
    await output(server, 'Strongroom listening on');
    const forced = await call(port, 'POST', '/api/v1/auth/login', { username: 'ama.mensah', password: temporary });
    expect(forced.json.error_code).toBe('PASSWORD_CHANGE_REQUIRED');
    const reset = await call(port, 'POST', '/api/v1/auth/reset/password', { reset_token: (forced.json.details as { reset_token: string }).reset_token, new_password: OTHER_PASSWORD });
    expect(reset.status).toBe(200);
    const before = await call(port, 'POST', '/api/v1/auth/login', { username: 'ama.mensah', password: OTHER_PASSWORD });
    expect(before.status).toBe(200);

    // The new release migrates (a migration Job, or its first node) while the previous one runs.
    const handle = await openTestDatabase('postgres', url);
    expect(await handle.migrate()).toEqual(added);

    // The previous release, on the migrated schema: validates, refreshes, signs in, signs out.
    expect((await call(port, 'POST', '/api/v1/auth/validate', undefined, bearer(before.json.access_token as string))).status).toBe(200);
    const refreshed = await call(port, 'POST', '/api/v1/auth/refresh', { refresh_token: before.json.refresh_token });
    expect(refreshed.status).toBe(200);
    const again = await call(port, 'POST', '/api/v1/auth/login', { username: 'ama.mensah', password: OTHER_PASSWORD });
    expect(again.status).toBe(200);
    expect((await call(port, 'POST', '/api/v1/auth/logout', {}, bearer(again.json.access_token as string))).status).toBe(200);

    // The new release: the previous one's session goes on (validate, refresh), its user signs in.
    t = await createTestApp({ database: handle, secrets });
    const access = refreshed.json.access_token as string;
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(access) })).statusCode).toBe(200);
    const next = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: refreshed.json.refresh_token } });
    expect(next.statusCode, next.body).toBe(200);
    await signIn(t.app, 'ama.mensah', OTHER_PASSWORD);
    // ...and the session the previous release ended stays ended.
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(again.json.access_token as string) })).statusCode).toBe(401);

    // It drains and exits cleanly on SIGTERM, as it would on a rolling restart.
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
  });
});

describe('a schema ahead of the release', () => {
  const log = pino({ level: 'silent' });

  it('a node restarting on a schema a newer release migrated serves without migrating, and says so', async () => {
    const handle = await openTestDatabase('postgres', await freshPostgresDatabase());
    try {
      // A newer release's expand: a table and a row in the migration table this release does not know.
      await sql`CREATE TABLE newer_release_things (id bigint PRIMARY KEY)`.execute(handle.db);
      await sql`INSERT INTO strongroom_migrations (name, timestamp) VALUES ('999-newer-release', now()::text)`.execute(handle.db);
      const warnings: string[] = [];
      const capture = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
      expect(await runMigrations(handle.db, capture)).toEqual([]);
      expect(warnings.join('')).toContain('999-newer-release');
      const t = await createTestApp({ database: handle });
      try {
        await seedUser(t.s, 'kofi.boateng');
        await signIn(t.app, 'kofi.boateng');
      } finally {
        await t.closeApp();
      }
    } finally {
      await handle.close();
    }
  });

  it('a database migrated by another line of releases (one unknown, one of ours missing) is refused, naming both', async () => {
    const handle = await openTestDatabase('postgres', await freshPostgresDatabase());
    try {
      await sql`INSERT INTO strongroom_migrations (name, timestamp) VALUES ('999-other-line', now()::text)`.execute(handle.db);
      await sql`DELETE FROM strongroom_migrations WHERE name = ${NEWEST}`.execute(handle.db);
      await expect(migrationsAhead(handle.db)).rejects.toThrow(new RegExp(`another line of releases.*999-other-line.*${NEWEST}`));
      await expect(runMigrations(handle.db, log)).rejects.toThrow('another line of releases');
    } finally {
      await handle.close();
    }
  });
});
