/**
 * `strongroom audit ...` as an operator runs it (a child process against PostgreSQL): a legal
 * hold placed, listed and released, a month past the retention period shown by a dry run and
 * then dropped, the held user's entries kept, and each step audited as the CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureAuditPartitions, monthPartitionName, monthStart } from '../../src/audit/partitions.js';
import { cliEnv, runCli } from '../harness/cli.js';
import { createTestApp, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';

describe('strongroom audit', { timeout: 300_000 }, () => {
  const secrets = testSecrets();
  let dir: string;
  let env: Record<string, string>;
  let t: TestApp;
  const old = monthStart(new Date(), -4);
  const [held, other] = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    const url = await freshPostgresDatabase();
    dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-cli-audit-'));
    env = cliEnv(secrets, dir, { DATABASE_URL: url, AUDIT_RETENTION_MONTHS: '3' });
    t = await createTestApp({ database: await openTestDatabase('postgres', url), secrets });
    await ensureAuditPartitions(t.s.db, old, old);
    for (const userId of [held, other]) {
      await t.s.db.insertInto('audit_log').values({ ...t.s.audit.row({ eventType: 'USER_LOGIN', status: 'SUCCESS', userId }), timestamp: new Date(old.getTime() + 86_400_000) }).execute();
    }
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds one user\'s entries, drops their month, keeps the held entries, releases the hold', async () => {
    const hold = await runCli(['audit', 'hold', '--reason', 'dispute 2026-0415', '--from', old.toISOString().slice(0, 10), '--to', monthStart(old, 1).toISOString(), '--user', held], env);
    expect(hold.code, hold.stderr).toBe(0);
    const id = /legal hold ([0-9a-f-]{36})/.exec(hold.stdout)![1]!;

    const holds = await runCli(['audit', 'holds'], env);
    expect(holds.stdout).toContain(id);
    expect(holds.stdout).toContain('dispute 2026-0415');

    const dry = await runCli(['audit', 'prune', '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`Would drop ${monthPartitionName(old)}`);

    const prune = await runCli(['audit', 'prune'], env);
    expect(prune.code, prune.stderr).toBe(0);
    expect(prune.stdout).toContain(`Dropped ${monthPartitionName(old)}`);
    expect(prune.stdout).toContain('2 entries, 1 of them kept under a legal hold');
    const kept = await t.s.audit.query({ userId: held, eventType: 'USER_LOGIN', limit: 10, offset: 0 });
    expect(kept.total).toBe(1);
    expect((await t.s.audit.query({ userId: other, eventType: 'USER_LOGIN', limit: 10, offset: 0 })).total).toBe(0);

    const released = await runCli(['audit', 'release', id], env);
    expect(released.code, released.stderr).toBe(0);
    const again = await runCli(['audit', 'release', id], env);
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toContain('No legal hold in force has the id');

    const events = await t.s.db.selectFrom('audit_log').select(['event_type', 'details']).where('event_type', 'in', ['AUDIT_HOLD_PLACED', 'AUDIT_MONTH_DROPPED', 'AUDIT_HOLD_RELEASED']).orderBy('timestamp').execute();
    expect(events.map((e) => e.event_type)).toEqual(['AUDIT_HOLD_PLACED', 'AUDIT_MONTH_DROPPED', 'AUDIT_HOLD_RELEASED']);
    expect((events[0]!.details as { by: string }).by).toMatch(/^cli:/);
  });

  it('refuses a hold without a reason, naming the option (exit 64)', async () => {
    const r = await runCli(['audit', 'hold', '--from', '2025-01-01', '--to', '2025-02-01'], env);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('--reason is required');
  });
});
