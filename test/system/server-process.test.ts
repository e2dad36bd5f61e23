/**
 * The real server process: configuration refusal in production, what the start-up log says
 * (and on a restart), graceful SIGTERM, and the embedded PGlite database surviving `kill -9` in
 * the middle of writes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../harness/postgres.js';
import { serviceCommand } from '../harness/cli.js';

const ADMIN_PASSWORD = 'Vt7#qLm2!xRp9$';
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'strongroom-proc-'));
  dirs.push(d);
  return d;
}

interface Server {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts the server (the built `dist/src/server.js`, as `npm start` does) and resolves once it logs that it listens. */
async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, serviceCommand('server'), {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'development', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', BCRYPT_COST: '4', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (out.includes('Strongroom listening on')) resolve();
    };
    child.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${out}`)));
  });
  return { child, port, output: () => out, exited };
}

function request(port: number, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, method, path: url, headers: { ...(data ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

describe('server process', { timeout: 180_000 }, () => {
  it('refuses to start in production without explicit secrets and DATABASE_URL, naming each', () => {
    const r = spawnSync(process.execPath, serviceCommand('server'), { env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' }, encoding: 'utf8' });
    expect(r.status).toBe(78);
    for (const name of ['DATABASE_URL', 'FIELD_ENCRYPTION_KEY', 'IP_HASH_KEY', 'TRANSPORT_PRIVATE_KEY_PATH']) expect(r.stderr).toContain(name);
  });

  it('explains a bad value instead of starting', () => {
    const r = spawnSync(process.execPath, serviceCommand('server'), { env: { PATH: process.env.PATH ?? '', PORT: 'eighty', DATA_DIR: tempDir() }, encoding: 'utf8' });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('PORT must be a whole number');
  });

  it('starts on PGlite with no configuration, logs where it listens and every development relaxation, creates the first admin, loads the FAQ starter set, and stops cleanly on SIGTERM; a restart says which secrets come from DATA_DIR, and the admin\'s password file goes once that password is changed', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'bootstrap-admin-password.txt');
    const srv = await startServer({ DATA_DIR: dataDir });
    expect(srv.output()).toContain('PGlite (embedded)');
    expect(srv.output()).toContain('/api/docs');
    expect(srv.output()).toContain('Generated development secrets');
    expect(srv.output()).toContain('Transport encryption is not enforced');
    expect(srv.output()).toContain('Plain HTTP: terminate TLS in front');
    expect(srv.output()).toContain('JWT signing key created');
    expect(srv.output()).toContain('bootstrap-admin-password.txt');
    expect(srv.output()).toMatch(/Loaded the FAQ starter set: 1\d\d articles/);
    expect((await request(srv.port, 'GET', '/health')).json).toMatchObject({ status: 'ok', database: { status: 'ok', kind: 'pglite' } });
    expect((await request(srv.port, 'GET', '/api/v1/faq/categories')).json).toMatchObject({ total_articles: expect.any(Number) });
    // A second server on the same data directory is refused instead of corrupting it.
    const second = spawnSync(process.execPath, serviceCommand('server'), { env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: '0' }, encoding: 'utf8' });
    expect(second.status).toBe(75);
    expect(second.stderr).toContain('in use by process');
    srv.child.kill('SIGTERM');
    expect(await srv.exited).toBe(0);
    expect(srv.output()).toContain('Stopped cleanly');

    const again = await startServer({ DATA_DIR: dataDir });
    expect(again.output()).toContain('Using development secrets from');
    expect(again.output()).not.toContain('Generated development secrets');
    expect(again.output()).toContain('still has the temporary password');
    const forced = await request(again.port, 'POST', '/api/v1/auth/login', { username: 'admin', password: readFileSync(file, 'utf8').trim() });
    expect(forced.status).toBe(403);
    const changed = await request(again.port, 'POST', '/api/v1/auth/reset/password', { reset_token: (forced.json.details as { reset_token: string }).reset_token, new_password: ADMIN_PASSWORD });
    expect(changed.status).toBe(200);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    expect(existsSync(file)).toBe(true);

    // LOG_FORMAT=pretty (what a terminal gets): one readable line a request, with the request id an error body names.
    const third = await startServer({ DATA_DIR: dataDir, LOG_FORMAT: 'pretty' });
    const refused = await request(third.port, 'POST', '/api/v1/auth/login', { username: 'nobody', password: 'wrong-password-1' });
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    // eslint-disable-next-line no-control-regex
    const lines = third.output().replace(/\u001b\[[0-9;]*m/g, '');
    const requestId = (refused.json.details as { request_id: string }).request_id;
    expect(lines).toMatch(new RegExp(`POST /api/v1/auth/login 401 [0-9.]+ ms  \\(error_code=INVALID_CREDENTIALS ip=127\\.0\\.0\\.1 req_id=${requestId}\\)`));
    expect(lines).not.toContain('{"level"');
    expect(third.output()).toContain('Deleted');
    expect(existsSync(file)).toBe(false);
  });

  it('drains an in-flight sign-in on SIGTERM', async () => {
    const srv = await startServer({ DATA_DIR: tempDir(), BCRYPT_COST: '14', BOOTSTRAP_ADMIN_USERNAME: 'root', BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD });
    const inflight = request(srv.port, 'POST', '/api/v1/auth/login', { username: 'root', password: ADMIN_PASSWORD });
    // Give the request time to reach the handler (bcrypt at cost 14 then takes about a second).
    await new Promise((r) => setTimeout(r, 300));
    srv.child.kill('SIGTERM');
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(res.json.access_token).toBeTruthy();
    expect(await srv.exited).toBe(0);
  });

  it('keeps PGlite data usable after kill -9 in the middle of writes', async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, BOOTSTRAP_ADMIN_USERNAME: 'root', BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const first = await startServer(env);
    const admin = await request(first.port, 'POST', '/api/v1/auth/login', { username: 'root', password: ADMIN_PASSWORD });
    const token = String(admin.json.access_token);
    const created: string[] = [];
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 40; i++) {
      const name = `teller.${i}`;
      writes.push(
        request(first.port, 'POST', '/api/v1/admin/users', { username: name, roles: ['staff'] }, { authorization: `Bearer ${token}` })
          .then((r) => r.status === 201 && created.push(name))
          .catch(() => undefined),
      );
      if (i === 20) {
        while (created.length < 5) await new Promise((r) => setImmediate(r));
        first.child.kill('SIGKILL');
      }
    }
    await Promise.all(writes);
    await first.exited;
    expect(created.length).toBeGreaterThanOrEqual(5);

    const second = await startServer(env); // takes over the stale lock, recovers the WAL
    expect((await request(second.port, 'GET', '/health')).status).toBe(200);
    const again = await request(second.port, 'POST', '/api/v1/auth/login', { username: 'root', password: ADMIN_PASSWORD });
    expect(again.status).toBe(200);
    const list = await request(second.port, 'GET', '/api/v1/admin/users?limit=200', undefined, { authorization: `Bearer ${String(again.json.access_token)}` });
    const names = (list.json.users as Array<{ username: string }>).map((u) => u.username);
    for (const name of created) expect(names).toContain(name); // every acknowledged write survived
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
