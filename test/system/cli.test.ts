/**
 * The operator CLI as an operator runs it: a child process (the built `dist/src/cli.js`, the package's `strongroom` binary) with
 * the configuration in its environment, against a real PostgreSQL (and once against the embedded
 * PGlite). What it did is checked in the database and by signing in through an app built on the
 * same database with the same secrets.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/platform/db/migrations/index.js';
import { cliEnv, runCli, type CliResult } from '../harness/cli.js';
import { createTestApp, emptyPostgresDatabase, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD, OTHER_PASSWORD } from '../harness/fixtures.js';

const ALL_MIGRATIONS = Object.keys(migrations);

/** The password the CLI prints once, on its own indented line. */
function printedPassword(stdout: string): string {
  const m = /^ {4}(\S+)$/m.exec(stdout);
  expect(m, stdout).not.toBeNull();
  return m![1]!;
}

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-cli-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('strongroom CLI on PostgreSQL', () => {
  const secrets = testSecrets();
  let url: string;
  let env: Record<string, string>;
  let t: TestApp;

  beforeAll(async () => {
    url = await freshPostgresDatabase();
    env = cliEnv(secrets, tempDir(), { DATABASE_URL: url });
    t = await createTestApp({ database: await openTestDatabase('postgres', url), secrets });
  });
  afterAll(async () => t.close());

  const newestKid = async (): Promise<string> =>
    (await t.s.database.db.selectFrom('jwt_signing_keys').select('kid').orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow()).kid;

  it('migrate applies the migrations to an empty database, then reports it up to date', async () => {
    const e = { ...env, DATABASE_URL: await emptyPostgresDatabase() };
    const first = await runCli(['migrate'], e);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`applied ${ALL_MIGRATIONS.length} migrations:\n${ALL_MIGRATIONS.map((m) => `  ${m}\n`).join('')}`);
    expect(first.stdout).not.toContain('strongroom@'); // the location, never the credentials
    const again = await runCli(['migrate'], e);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('up to date');
    expect(again.stderr).toBe('');
  });

  it('create-admin takes the password from STRONGROOM_ADMIN_PASSWORD; the administrator signs in', async () => {
    const r = await runCli(['create-admin', '--username', 'amina.otieno', '--email', 'amina@bank.example'], { ...env, STRONGROOM_ADMIN_PASSWORD: STRONG_PASSWORD });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Created administrator "amina.otieno" \(id [0-9a-f-]{36}\) with role admin\./);
    expect(r.stdout).not.toContain(STRONG_PASSWORD);
    expect(r.stdout).not.toContain('Temporary password');
    const body = await signIn(t.app, 'amina.otieno', STRONG_PASSWORD);
    expect(body.user_profile).toMatchObject({ username: 'amina.otieno', email: 'amina@bank.example', roles: ['admin'] });
    expect(body.permissions).toEqual(expect.arrayContaining(['users.create', 'users.read', 'users.update', 'audit.read']));
    const audit = await t.s.audit.query({ eventType: 'USER_CREATED', limit: 10, offset: 0 });
    expect(audit.entries.find((e) => e.username === 'amina.otieno')?.details).toMatchObject({ roles: ['admin'], created_by: expect.stringMatching(/^cli:/) });
  });

  it('create-admin --password-stdin reads the password from standard input', async () => {
    const r = await runCli(['create-admin', '--username', 'kofi.mensah', '--password-stdin'], env, `${OTHER_PASSWORD}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Created administrator "kofi.mensah"');
    await signIn(t.app, 'kofi.mensah', OTHER_PASSWORD);
  });

  it('create-admin without a password prints a temporary one that must be changed at first sign-in', async () => {
    const r = await runCli(['create-admin', '--username', 'abena.boateng'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Temporary password for "abena.boateng", shown only this once');
    expect(r.stdout).toContain('must be changed at the first sign-in');
    const res = await login(t.app, 'abena.boateng', printedPassword(r.stdout));
    const err = expectError(res, 403, 'PASSWORD_CHANGE_REQUIRED');
    expect(typeof (err.details as { reset_token?: unknown }).reset_token).toBe('string');
  });

  it('create-admin refuses a weak password, naming each violated rule, and creates nobody', async () => {
    const r = await runCli(['create-admin', '--username', 'weak.admin'], { ...env, STRONGROOM_ADMIN_PASSWORD: 'password1' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^PASSWORD_POLICY_VIOLATION: /);
    for (const rule of ['min_length', 'uppercase', 'symbol']) expect(r.stderr).toMatch(new RegExp(`^ {2}- ${rule}: `, 'm'));
    expect(r.stderr).not.toContain('password1');
    expect(await t.s.users.findByLogin('weak.admin')).toBeUndefined();
  });

  it('create-admin refuses a password given as an argument, before touching the database', async () => {
    const r = await runCli(['create-admin', '--username', 'argv.admin', `--password=${STRONG_PASSWORD}`], env);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('--password is not accepted');
    expect(r.stderr).not.toContain(STRONG_PASSWORD);
    expect(await t.s.users.findByLogin('argv.admin')).toBeUndefined();
  });

  it('users create prints a temporary password once and grants the roles', async () => {
    const r = await runCli(
      ['users', 'create', '--username', 'kwame.asante', '--roles', 'staff,operator', '--email', 'kwame@bank.example', '--phone', '+233200000001', '--full-name', 'Kwame Asante'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Created user "kwame.asante" \(id [0-9a-f-]{36}\) with roles operator, staff\./);
    const password = printedPassword(r.stdout);
    expect(r.stdout.split(password)).toHaveLength(2); // printed exactly once
    expectError(await login(t.app, 'kwame.asante', password), 403, 'PASSWORD_CHANGE_REQUIRED');
    const user = (await t.s.users.findByLogin('kwame.asante'))!;
    expect(user).toMatchObject({ email: 'kwame@bank.example', phone: '+233200000001', full_name: 'Kwame Asante', must_change_password: true, is_service_account: false });
    expect((await t.s.users.grants(user.id)).roles).toEqual(['operator', 'staff']);
  });

  it('users create refuses an existing username and unknown roles with their error codes', async () => {
    const exists = await runCli(['users', 'create', '--username', 'kwame.asante', '--roles', 'staff'], env);
    expect(exists.code).toBe(1);
    expect(exists.stderr).toMatch(/^USER_EXISTS: .*\n {2}fields: username\n/);
    const unknown = await runCli(['users', 'create', '--username', 'yaw.darko', '--roles', 'staff,wizard'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^UNKNOWN_ROLE: /);
    expect(unknown.stderr).toContain('unknown_roles: wizard');
    expect(unknown.stderr).toContain('known_roles: admin, agent, customer, operator, staff');
  });

  it('users create checks its flags: missing --roles is a usage error', async () => {
    const r = await runCli(['users', 'create', '--username', 'no.roles'], env);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('--roles is required');
    expect(r.stderr).toContain('Usage: strongroom users');
  });

  it('users unlock clears a lockout so the user signs in again', async () => {
    await seedUser(t.s, 'esi.locked');
    for (let i = 0; i < 5; i++) await login(t.app, 'esi.locked', 'Wrong#Passw0rd!x');
    expectError(await login(t.app, 'esi.locked', STRONG_PASSWORD), 429, 'ACCOUNT_LOCKED');

    const r = await runCli(['users', 'unlock', '--username', 'esi.locked'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Unlocked "esi.locked" \(id [0-9a-f-]{36}\): it was locked until \d{4}-\d\d-\d\dT/);
    await signIn(t.app, 'esi.locked');
    const audit = await t.s.audit.query({ eventType: 'ACCOUNT_UNLOCKED', limit: 10, offset: 0 });
    expect(audit.entries.some((e) => e.username === 'esi.locked')).toBe(true);

    const again = await runCli(['users', 'unlock', '--username', 'esi.locked'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('was not locked');
  });

  it('users unlock of an unknown user fails with USER_NOT_FOUND', async () => {
    const r = await runCli(['users', 'unlock', '--username', 'nobody.here'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^USER_NOT_FOUND: /);
  });

  it('rotate-keys adds a new newest kid; the previous key still verifies, older ones stop', async () => {
    const kidBefore = await newestKid();
    await seedUser(t.s, 'ama.rotate');
    const old = await signIn(t.app, 'ama.rotate');
    expect(decodeProtectedHeader(old.access_token).kid).toBe(kidBefore);

    const r = await runCli(['rotate-keys'], env);
    expect(r.code, r.stderr).toBe(0);
    const kidAfter = await newestKid();
    expect(kidAfter).not.toBe(kidBefore);
    expect(r.stdout).toContain(`new signing key:  kid ${kidAfter}`);
    expect(r.stdout).toContain(`previous key:     kid ${kidBefore} (still verifies`);
    expect(r.stdout).toContain('older keys no longer verify');

    await t.s.keyring.reload(); // what the NOTIFY does on a running server (tested in two-nodes)
    const validate = (token: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) });
    expect((await validate(old.access_token)).statusCode).toBe(200);
    expect(decodeProtectedHeader((await signIn(t.app, 'ama.rotate')).access_token).kid).toBe(kidAfter);

    expect((await runCli(['rotate-keys'], env)).code).toBe(0);
    await t.s.keyring.reload();
    expectError(await validate(old.access_token), 401, 'TOKEN_INVALID');
  });

  it('rotate-transport-key makes a new key pair current; the previous one stays accepted until its expires_at', async () => {
    const before = t.s.transportKeys.current();
    const r = await runCli(['rotate-transport-key'], env);
    expect(r.code, r.stderr).toBe(0);
    t.clock.set(Date.now()); // the CLI ran on the system clock
    await t.s.transportKeys.reload(); // what the NOTIFY does on a running server
    const after = t.s.transportKeys.current();
    expect(after.keyId).not.toBe(before.keyId);
    expect(r.stdout).toContain(`new key:       key_id ${after.keyId} (published by GET /api/v1/auth/public_key from now on; expires ${new Date(after.expiresAt).toISOString()})`);
    expect(r.stdout).toContain(`previous key:  key_id ${before.keyId} stays accepted until its expires_at, ${new Date(before.expiresAt).toISOString()}`);
    expect(t.s.transportKeys.live().map((k) => k.keyId)).toEqual(expect.arrayContaining([after.keyId, before.keyId]));
    const published = (await t.app.inject({ method: 'GET', url: '/api/v1/auth/public_key' })).json() as { key_id: string };
    expect(published.key_id).toBe(after.keyId);
  });

  it('rotate-transport-key --revoke-previous stops accepting every older key at once', async () => {
    const older = t.s.transportKeys.live().map((k) => k.keyId);
    const r = await runCli(['rotate-transport-key', '--revoke-previous'], env);
    expect(r.code, r.stderr).toBe(0);
    for (const id of older) expect(r.stdout).toContain(`revoked:       key_id ${id} is no longer accepted`);
    t.clock.set(Date.now());
    await t.s.transportKeys.reload();
    const live = t.s.transportKeys.live().map((k) => k.keyId);
    expect(live).toEqual([t.s.transportKeys.current().keyId]);
    expect(older).not.toContain(live[0]);
  });

  it('rotate-saml-sp-key makes a new SP signing key current; the previous one stays published, older ones are retired', async () => {
    const first = await runCli(['rotate-saml-sp-key'], env);
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['rotate-saml-sp-key'], env);
    expect(second.code, second.stderr).toBe(0);
    const third = await runCli(['rotate-saml-sp-key'], env);
    expect(third.code, third.stderr).toBe(0);
    const keys = await t.s.database.db.selectFrom('saml_sp_keys').select(['key_id', 'retired_at', 'private_key_enc']).orderBy('seq').execute();
    expect(keys).toHaveLength(3);
    expect(keys.map((k) => k.retired_at === null)).toEqual([false, true, true]);
    expect(keys.every((k) => k.private_key_enc.startsWith('fe1:') && !k.private_key_enc.includes('PRIVATE KEY'))).toBe(true);
    const [oldest, previous, current] = keys.map((k) => k.key_id);
    expect(third.stdout).toContain(`Made a new SAML SP signing key current: key_id ${current}.`);
    expect(third.stdout).toContain(`previous key:  key_id ${previous} stays in the SP metadata until the next rotation.`);
    expect(third.stdout).toContain(`retired:       key_id ${oldest} is no longer published.`);
  });

  it('faq seed loads the starter set once: a second run adds nothing and keeps an edited article as it is', async () => {
    const first = await runCli(['faq', 'seed'], env);
    expect(first.code, first.stderr).toBe(0);
    const count = Number(/Added (\d+) starter FAQ articles/.exec(first.stdout)?.[1]);
    expect(count).toBeGreaterThanOrEqual(100);
    const [card] = (await t.s.faq.search('lost my card', { limit: 1 })).hits;
    await t.s.faqAdmin.update({ actor: { uuid: null, username: 'test' }, context: {} }, card!.id, { answer: 'Edited by the bank.' });
    const second = await runCli(['faq', 'seed'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`The FAQ already has every starter article (${count}); nothing added.`);
    expect((await t.s.faqStore.byUuid(card!.id, { activeOnly: true }))!.answer).toBe('Edited by the bank.');
    expect((await runCli(['faq'], env)).code).toBe(64);
  });

  it('an unknown command exits 64 with the usage on stderr', async () => {
    const r = await runCli(['frobnicate'], env);
    expect(r.code).toBe(64);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Unknown command "frobnicate"');
    for (const cmd of ['migrate', 'create-admin', 'rotate-keys', 'rotate-field-key', 'rotate-transport-key', 'rotate-saml-sp-key', 'users create', 'users unlock', 'faq seed']) expect(r.stderr).toContain(cmd);
  });

  it('help lists every command and the environment it reads', async () => {
    for (const args of [[], ['help'], ['--help']]) {
      const r = await runCli(args, {});
      expect(r.code, args.join(' ')).toBe(0);
      for (const s of ['migrate', 'create-admin', 'rotate-keys', 'rotate-field-key', 'rotate-transport-key', 'rotate-saml-sp-key', 'users create', 'users unlock', 'gdpr ledger export', 'gdpr ledger reapply', 'DATABASE_URL', 'DATA_DIR', 'STRONGROOM_ADMIN_PASSWORD', 'one process at a time']) {
        expect(r.stdout).toContain(s);
      }
    }
  });

  it('an invalid environment exits 78 naming the variable', async () => {
    const r = await runCli(['migrate'], { ...env, PORT: 'abc' });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('PORT must be a whole number from 0 to 65535 (got "abc")');
  });
});

describe('strongroom CLI on the embedded PGlite', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let lock: string;
  let first: CliResult;

  beforeAll(async () => {
    dataDir = tempDir();
    env = cliEnv(testSecrets(), dataDir);
    lock = path.join(dataDir, 'strongroom.lock');
    first = await runCli(['migrate'], env);
  });

  it('migrate creates and migrates the database under DATA_DIR, then reports it up to date', async () => {
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`PGlite (embedded) at ${path.join(dataDir, 'pglite')}: applied ${ALL_MIGRATIONS.length} migrations:`);
    expect(existsSync(lock)).toBe(false); // released on close
    const again = await runCli(['migrate'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('up to date');
  });

  it('rotate-keys exits and releases the database (closing PGlite under a keyring reload used to hang)', async () => {
    const r = await runCli(['rotate-keys'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Rotated the JWT signing keyring.');
    expect(existsSync(lock)).toBe(false);
  });

  it('exits 75 saying the database is in use while the lock file names a live process', async () => {
    writeFileSync(lock, String(process.pid)); // this test process stands in for a running server
    try {
      const r = await runCli(['migrate'], env);
      expect(r.code).toBe(75);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`is in use by process ${process.pid}`);
      expect(r.stderr).toContain('stop the server');
    } finally {
      rmSync(lock, { force: true });
    }
  });

  it('takes over a lock file left empty by a crash', async () => {
    writeFileSync(lock, '');
    const r = await runCli(['migrate'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(lock)).toBe(false);
  });
});
