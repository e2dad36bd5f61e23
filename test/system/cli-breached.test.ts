/**
 * `strongroom passwords ...` as an operator runs it (a child process, on the built service): a
 * Pwned Passwords file in the downloader's format (SHA-1 of known passwords and of seeded
 * random ones, CRLF) imported into a filter, with progress on stderr and the summary on stdout;
 * a malformed file refused naming the line; a password checked from stdin, never argv. Then a
 * service started with BREACHED_PASSWORDS_FILTER on that file refuses one of those passwords at a
 * password change, and picks up a new import moved over the file without a restart.
 */
import { mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREACHED_RELOAD_JOB } from '../../src/credentials/module.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { runCli } from '../harness/cli.js';
import { bearer, expectError, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { pwnedFile } from '../harness/pwned.js';

const BREACHED = 'Hx5#vNq9!bLr3%';
const LATER = 'Jm3$tRv8!cQw5#'; // only in the second import

describe('strongroom passwords', { timeout: 300_000 }, () => {
  let dir: string;
  let filter: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-cli-breached-'));
    filter = path.join(dir, 'breached.filter');
    // Nothing but the filter's path: these commands need no database and no other setting.
    env = { BREACHED_PASSWORDS_FILTER: filter };
    writeFileSync(path.join(dir, 'pwned.txt'), pwnedFile([BREACHED, ['Rare#Passw0rd!x', 1]], { random: 20_000, seed: 'cli' }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports a Pwned Passwords file: progress on stderr, entries, size and false-positive rate on stdout', async () => {
    const r = await runCli(['passwords', 'import-breached', '--file', path.join(dir, 'pwned.txt'), '--min-count', '2'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/pass 1 of 2 \(checking and counting\): 100% of .*, 19,\d{3} entries/);
    expect(r.stderr).toMatch(/pass 2 of 2 \(adding to the filter\): 100%/);
    // 20,002 lines; the rare password and 1 in 50 of the random ones were seen once.
    expect(r.stdout).toContain(`Imported 19,601 entries from ${path.join(dir, 'pwned.txt')} into ${filter}.`);
    expect(r.stdout).toContain('lines read:         20,002 (401 seen fewer than --min-count 2 times, left out)');
    expect(r.stdout).toMatch(/filter size: +\d+\.\d KiB \(15\.\d\d bits per entry/);
    expect(r.stdout).toMatch(/false positives: +1 in 1,0\d\d \(0\.\d+%\)/);
    expect(statSync(filter).size).toBeGreaterThan(128);
  });

  it('checks a password read from stdin: exit 1 in the corpus, 0 not; a password as an argument is refused (64)', async () => {
    const found = await runCli(['passwords', 'check-breached'], env, `${BREACHED}\n`);
    expect(found.code, found.stderr).toBe(1);
    expect(found.stdout).toContain('Found in the breach corpus');
    const rare = await runCli(['passwords', 'check-breached', '--filter', filter], {}, 'Rare#Passw0rd!x\n');
    expect(rare.code, rare.stderr).toBe(0);
    expect(rare.stdout).toContain('Not in the breach corpus.');
    const argv = await runCli(['passwords', 'check-breached', BREACHED], env);
    expect(argv.code).toBe(64);
    expect(argv.stdout + argv.stderr).not.toContain('Found');
  });

  it('refuses a malformed file naming the line, and writes nothing', async () => {
    const bad = path.join(dir, 'ntlm.txt');
    writeFileSync(bad, `${pwnedFile(['a', 'b'])}8846F7EAEE8FB117AD06BDD830B7586C:12\r\n`);
    const before = statSync(filter).mtimeMs;
    const r = await runCli(['passwords', 'import-breached', '--file', bad], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}: line 3: has a 32-character hash: this is the NTLM file`);
    expect(r.stderr).toContain(`Nothing was written (${filter} is unchanged).`);
    expect(statSync(filter).mtimeMs).toBe(before);
  });

  describe('a service using the filter', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ env: { BREACHED_PASSWORDS_FILTER: filter } });
    });
    afterAll(async () => t?.close());

    it('refuses one of the imported passwords at a password change (422, rule breached), then reloads a new import without a restart', async () => {
      await seedUser(t.s, 'cli.breach');
      const { access_token } = await signIn(t.app, 'cli.breach');
      const change = (next: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(access_token), payload: { current_password: STRONG_PASSWORD, new_password: next } });
      const body = expectError(await change(BREACHED), 422, 'PASSWORD_POLICY_VIOLATION');
      expect((body.details as { violations: Array<{ rule: string }> }).violations.map((v) => v.rule)).toEqual(['breached']);
      expect(t.s.breachedPasswords.isBreached(LATER)).toBe(false);

      // A new download, imported elsewhere and moved over the file the service reads.
      writeFileSync(path.join(dir, 'pwned-2.txt'), pwnedFile([BREACHED, LATER], { random: 1000, seed: 'cli-2' }));
      const next = path.join(dir, 'next.filter');
      const r = await runCli(['passwords', 'import-breached', '--file', path.join(dir, 'pwned-2.txt'), '--output', next], {});
      expect(r.code, r.stderr).toBe(0);
      const reloaded = t.s.breachedPasswords.nextReload();
      renameSync(next, filter);
      expect(await t.scheduler.runNow(BREACHED_RELOAD_JOB)).toBe(true);
      expect(await reloaded).toEqual({ outcome: 'reloaded', entries: 1002 });
      const later = expectError(await change(LATER), 422, 'PASSWORD_POLICY_VIOLATION');
      expect((later.details as { violations: Array<{ rule: string }> }).violations.map((v) => v.rule)).toEqual(['breached']);
      expect((await change(OTHER_PASSWORD)).statusCode).toBe(200);
    });
  });
});
