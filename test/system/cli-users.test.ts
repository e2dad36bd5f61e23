/**
 * The user lifecycle commands of the operator CLI (`strongroom users list|show|update|disable|
 * enable|delete|sessions|end-sessions`), run as an operator runs them, against a real
 * PostgreSQL; what they did is checked through an app on the same database with the same secrets.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../harness/cli.js';
import { createTestApp, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn } from '../harness/fixtures.js';

// Each command is a process that opens the database: seconds each on a busy machine.
describe('strongroom users: the lifecycle commands', { timeout: 240_000 }, () => {
  const secrets = testSecrets();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-cli-users-'));
  let env: Record<string, string>;
  let t: TestApp;

  beforeAll(async () => {
    const url = await freshPostgresDatabase();
    env = cliEnv(secrets, dir, { DATABASE_URL: url });
    t = await createTestApp({ database: await openTestDatabase('postgres', url), secrets });
    await seedUser(t.s, 'cli.admin', { roles: ['admin'] });
    for (const i of [1, 2, 3]) await seedUser(t.s, `cli.user.${i}`, { email: `cli${i}@bank.example`, roles: ['staff'] });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('users list pages in username order and prints the cursor of the next page', async () => {
    const first = await runCli(['users', 'list', '--search', 'cli.user', '--limit', '2'], env);
    expect(first.code, first.stderr).toBe(0);
    const lines = first.stdout.trim().split('\n');
    expect(lines.slice(0, 2).map((l) => l.split(/\s+/)[1])).toEqual(['cli.user.1', 'cli.user.2']);
    expect(lines[0]).toMatch(/^[0-9a-f-]{36} {2}cli\.user\.1 {2}active {2}roles: staff$/);
    const cursor = /--cursor (\S+)$/.exec(lines[2]!)?.[1];
    expect(cursor, first.stdout).toBeDefined();
    const second = await runCli(['users', 'list', '--search', 'cli.user', '--limit', '2', '--cursor', cursor!], env);
    expect(second.stdout.trim().split('\n').map((l) => l.split(/\s+/)[1])).toEqual(['cli.user.3']);
    const byEmail = await runCli(['users', 'list', '--search', 'CLI2@bank.example'], env);
    expect(byEmail.stdout).toContain('cli.user.2');
    expect(byEmail.stdout).not.toContain('cli.user.1');
  });

  it('users show and update by --id (the uuid) or --username; update is audited with the CLI as the actor', async () => {
    const user = (await t.s.users.findByLogin('cli.user.1'))!;
    const show = await runCli(['users', 'show', '--id', user.uuid], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`"cli.user.1" (id ${user.uuid})`);
    expect(show.stdout).toMatch(/status: +active/);

    const r = await runCli(['users', 'update', '--username', 'cli1@bank.example', '--full-name', 'Ama Owusu', '--roles', 'staff,operator', '--language', 'fr'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Changed "cli.user.1" (id ${user.uuid})`);
    expect(r.stdout).toMatch(/roles: +operator, staff/);
    expect(await t.s.users.findByUuid(user.uuid)).toMatchObject({ full_name: 'Ama Owusu', language: 'fr' });
    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'USER_UPDATED', limit: 5, offset: 0 });
    expect(audit.entries[0]?.details).toMatchObject({ changed: ['full_name', 'language', 'roles'], changed_by: expect.stringMatching(/^cli:/), changed_by_id: null });
  });

  it('users disable ends the sessions at once; enable lets the user back in', async () => {
    const s = await signIn(t.app, 'cli.user.2');
    const r = await runCli(['users', 'disable', '--username', 'cli.user.2'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Disabled "cli\.user\.2" \(id [0-9a-f-]{36}\); ended 1 session\(s\)\./);
    // The CLI is another process: the app reads the ended session from PostgreSQL (it had not cached it).
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(s.access_token) }), 401, 'SESSION_INVALID');
    expectError(await login(t.app, 'cli.user.2'), 403, 'ACCOUNT_DISABLED');
    expect((await runCli(['users', 'enable', '--username', 'cli.user.2'], env)).code).toBe(0);
    await signIn(t.app, 'cli.user.2');
  });

  it('users sessions lists them; end-sessions ends one or all', async () => {
    const a = await signIn(t.app, 'cli.user.3');
    const b = await signIn(t.app, 'cli.user.3');
    const list = await runCli(['users', 'sessions', '--username', 'cli.user.3'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(a.session_id);
    expect(list.stdout).toContain(b.session_id);
    expect(list.stdout).not.toContain(a.access_token);
    const one = await runCli(['users', 'end-sessions', '--username', 'cli.user.3', '--session', a.session_id], env);
    expect(one.stdout).toContain(`Ended 1 session(s) of "cli.user.3"`);
    const all = await runCli(['users', 'end-sessions', '--username', 'cli.user.3'], env);
    expect(all.stdout).toContain(`: ${b.session_id}.`);
    const none = await runCli(['users', 'end-sessions', '--username', 'cli.user.3', '--session', a.session_id], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^SESSION_NOT_FOUND: /);
  });

  it('users delete is soft and refuses the last administrator; usage errors exit 64', async () => {
    const del = await runCli(['users', 'delete', '--username', 'cli.user.3'], env);
    expect(del.code, del.stderr).toBe(0);
    expect(del.stdout).toMatch(/^Deleted "cli\.user\.3"/);
    expect((await runCli(['users', 'show', '--username', 'cli.user.3'], env)).stdout).toMatch(/status: +deleted/);
    const again = await runCli(['users', 'update', '--username', 'cli.user.3', '--full-name', 'X'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^ACCOUNT_DELETED: /);

    const last = await runCli(['users', 'disable', '--username', 'cli.admin'], env);
    expect(last.code).toBe(1);
    expect(last.stderr).toMatch(/^LAST_ADMIN: /);

    for (const [args, says] of [[['users', 'show'], '--username NAME'], [['users', 'show', '--id', '42'], 'uuid'], [['users', 'update', '--username', 'cli.user.1'], 'needs a change'], [['users', 'list', '--status', 'gone'], 'active, disabled, locked, deleted']] as const) {
      const r = await runCli([...args], env);
      expect(r.code, args.join(' ')).toBe(64);
      expect(r.stderr).toContain(says);
      expect(r.stderr).toContain('Usage: strongroom users');
    }
  });
});
