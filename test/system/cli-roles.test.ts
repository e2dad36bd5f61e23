/**
 * `strongroom roles ...` as an operator runs it (a child process against PostgreSQL): list,
 * show, create, update and delete, with the API's rules (built-in roles protected, unknown
 * permissions named) and the audit trail naming the operator's CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../harness/cli.js';
import { createTestApp, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { seedUser, signIn } from '../harness/fixtures.js';

// Each test runs the CLI three or four times, each a Node.js process that loads the service.
describe('strongroom roles', { timeout: 120_000 }, () => {
  const secrets = testSecrets();
  let dir: string;
  let env: Record<string, string>;
  let t: TestApp;

  beforeAll(async () => {
    const url = await freshPostgresDatabase();
    dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-cli-roles-'));
    env = cliEnv(secrets, dir, { DATABASE_URL: url });
    t = await createTestApp({ database: await openTestDatabase('postgres', url), secrets });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('create, show, update (--add/--remove), list and delete a role; each change audited as the CLI', async () => {
    const created = await runCli(['roles', 'create', 'teller.supervisor', '--description', 'Teller supervisor', '--permissions', 'users.read,users.update'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('Created role "teller.supervisor".');
    expect(created.stdout).toMatch(/users\.read +List and read users/);

    const updated = await runCli(['roles', 'update', 'teller.supervisor', '--add', 'audit.read', '--remove', 'users.update'], env);
    expect(updated.code, updated.stderr).toBe(0);
    expect((await t.s.roleAdmin.get('teller.supervisor')).permissions).toEqual(['audit.read', 'users.read']);

    const list = await runCli(['roles', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAME +BUILT-IN +HOLDERS +PERMISSIONS +DESCRIPTION$/m);
    expect(list.stdout).toMatch(/^teller\.supervisor +no +0 +2 +Teller supervisor$/m);
    expect(list.stdout).toMatch(/^admin +yes +0 +\d+ +Administrator/m);

    const deleted = await runCli(['roles', 'delete', 'teller.supervisor'], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain('Deleted role "teller.supervisor" (it granted: audit.read, users.read).');

    const audit = await t.s.audit.query({ limit: 50, offset: 0 });
    const events = audit.entries.filter((e) => e.details.role === 'teller.supervisor');
    expect(events.map((e) => e.event_type).sort()).toEqual(['ROLE_CREATED', 'ROLE_DELETED', 'ROLE_UPDATED']);
    for (const e of events) expect(e.username).toMatch(/^cli:/);
  });

  it('refuses what the API refuses, with the error code and what to change (exit 1)', async () => {
    const builtIn = await runCli(['roles', 'update', 'customer', '--add', 'users.read'], env);
    expect(builtIn.code).toBe(1);
    expect(builtIn.stderr).toMatch(/^ROLE_BUILT_IN: /);
    const unknown = await runCli(['roles', 'create', 'wishful', '--description', 'x', '--permissions', 'money.print'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^UNKNOWN_PERMISSION: /);
    expect(unknown.stderr).toContain('unknown_permissions: money.print');
    const missing = await runCli(['roles', 'show', 'no.such.role'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^ROLE_NOT_FOUND: /);
  });

  it('show prints a role with its holders and what each permission allows; removing a permission signs its holders out', async () => {
    expect((await runCli(['roles', 'create', 'readers', '--description', 'Read roles', '--permissions', 'roles.read'], env)).code).toBe(0);
    await seedUser(t.s, 'rhoda.reader', { roles: ['readers'] });
    const session = await signIn(t.app, 'rhoda.reader');

    const shown = await runCli(['roles', 'show', 'readers'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('holders:     1 user\n');
    expect(shown.stdout).toMatch(/roles\.read +List roles with their permissions/);

    const removed = await runCli(['roles', 'update', 'readers', '--remove', 'roles.read'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('1 holder lost a permission and was signed out.');
    const row = await t.s.database.db.selectFrom('sessions').select(['is_active', 'end_reason']).where('session_id', '=', session.session_id).executeTakeFirstOrThrow();
    expect(row).toEqual({ is_active: false, end_reason: 'admin' });
  });
});
