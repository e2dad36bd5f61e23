/**
 * `strongroom gdpr ledger ...` as an operator runs it (child processes against PostgreSQL):
 * erasures survive a restore. People are erased by the job on a frozen clock; a backup is taken
 * in the middle (a copy of the database, `CREATE DATABASE ... TEMPLATE`, which is what restoring
 * a physical backup gives: the database exactly as it was); the ledger is exported after the
 * erasures; the backup is restored and the ledger re-applied to it: every erased person is gone
 * again from every table, whoever was already erased in the backup is left alone, an account
 * the backup never had is counted as unknown, and running it twice changes nothing. A malformed
 * ledger is refused naming the line, with nothing changed. Field encryption is off here so that
 * contacts sit in plaintext, where the dump would see a value the erasure missed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DatabaseHandle } from '../../src/platform/db/database.js';
import { ManualClock } from '../../src/platform/clock.js';
import { cliEnv, runCli } from '../harness/cli.js';
import { createTestApp, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { dumpEveryTable, tablesHolding } from '../harness/table-dump.js';

const DAY = 86_400_000;
const ENV = { DB_FIELD_ENCRYPTION: '0', GDPR_ERASURE_GRACE_DAYS: '30' };

/** The people of the story, each with a username, an email and a phone that must end up nowhere. */
const person = (name: string, n: number) => ({ name, email: `${name}@ledger.example`, phone: `+25471100${String(n).padStart(4, '0')}` });
const EARLY = person('ledger.early', 1); // erased before the backup
const HELD = person('ledger.held', 2); // asked before the backup, under a legal hold in it; erased after
const LATE = person('ledger.late', 3); // asked and erased after the backup
const AFTER = person('ledger.after', 4); // created after the backup, then erased
const KEPT = person('ledger.kept', 5); // never asks

type Person = ReturnType<typeof person>;
const identifiers = (p: Person) => [p.name, p.email, p.phone];

describe('strongroom gdpr ledger', { timeout: 300_000 }, () => {
  const secrets = testSecrets();
  const clock = new ManualClock(Date.now());
  const uuids = new Map<Person, string>();
  let dir: string;
  let source: string;
  let restored: string;
  let t: TestApp;
  let backupAt: Date;
  let ledger: string;
  let restoredDb: DatabaseHandle;

  const app = async (url: string) => createTestApp({ database: await openTestDatabase('postgres', url), secrets, clock, env: ENV });
  const env = (url: string) => cliEnv(secrets, dir, { DATABASE_URL: url, ...ENV });
  const seed = async (p: Person) => {
    uuids.set(p, (await seedUser(t.s, p.name, { email: p.email, phone: p.phone })).uuid);
    await signIn(t.app, p.name); // a session and audit entries that name them
  };
  const askErasure = async (p: Person) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/gdpr/delete', headers: bearer((await signIn(t.app, p.name)).access_token), payload: { current_password: STRONG_PASSWORD } });
    expect(res.statusCode, res.body).toBe(202);
    return (res.json() as { erasure_id: string }).erasure_id;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-cli-gdpr-'));
    source = await freshPostgresDatabase();
    t = await app(source);
    for (const p of [EARLY, HELD, LATE, KEPT]) await seed(p);
    await askErasure(EARLY);
    clock.advance(31 * DAY);
    expect(await t.s.erasureJob.run()).toBe(1);
    const held = await askErasure(HELD);
    await t.s.erasure.hold(held, 'Fraud case FR-2207: keep until closed', { actor: { uuid: null, username: 'test' }, context: {} });

    // The backup, a minute later: the database as it is then, copied while nothing is connected to it.
    clock.advance(60_000);
    await t.close();
    const name = `restored_${randomUUID().replace(/-/g, '')}`;
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${new URL(source).pathname.slice(1)}`);
    await admin.end();
    restored = source.replace(/\/[^/]+$/, `/${name}`);
    backupAt = new Date(clock.now());

    // Life goes on: the hold is released, two more people are erased, one of them new.
    t = await app(source);
    await t.s.erasure.hold(held, null, { actor: { uuid: null, username: 'test' }, context: {} });
    await askErasure(LATE);
    await seed(AFTER);
    await askErasure(AFTER);
    clock.advance(31 * DAY);
    expect(await t.s.erasureJob.run()).toBe(3);
    restoredDb = await openTestDatabase('postgres', restored);
  });
  afterAll(async () => {
    await restoredDb?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('export: one JSON line per erased account, uuid and dates only, in the order applied; --since keeps the later ones', async () => {
    const r = await runCli(['gdpr', 'ledger', 'export'], env(source));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    ledger = r.stdout;
    const lines = ledger.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
    // Applied in order: the early one first; the job erased the other three in one run (one frozen instant).
    expect(lines[0]!.user_id).toBe(uuids.get(EARLY));
    expect(lines.slice(1).map((l) => l.user_id).sort()).toEqual([HELD, LATE, AFTER].map((p) => uuids.get(p)).sort());
    for (const l of lines) {
      expect(Object.keys(l).sort()).toEqual(['erased_at', 'requested_at', 'user_id']);
      expect(new Date(l.requested_at!).getTime()).toBeLessThan(new Date(l.erased_at!).getTime());
    }
    for (const p of [EARLY, HELD, LATE, AFTER, KEPT]) for (const v of identifiers(p)) expect(ledger).not.toContain(v);

    const since = await runCli(['gdpr', 'ledger', 'export', '--since', backupAt.toISOString()], env(source));
    expect(since.code, since.stderr).toBe(0);
    expect(since.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { user_id: string }).user_id).sort()).toEqual([HELD, LATE, AFTER].map((p) => uuids.get(p)).sort());
  });

  it('reapply: a malformed line is refused naming its number (exit 1), before the database is touched', async () => {
    const before = await dumpEveryTable(restoredDb.db);
    // The restored database has them back (else the checks below could not fail).
    for (const p of [HELD, LATE]) for (const v of identifiers(p)) expect(tablesHolding(before, v), v).not.toEqual([]);
    for (const v of identifiers(EARLY)) expect(tablesHolding(before, v), v).toEqual([]);
    const bad = path.join(dir, 'bad.jsonl');
    const [first, second] = ledger.split('\n');
    writeFileSync(bad, `${first}\n${second}\n{"user_id":"${uuids.get(LATE)}","requested_at":"yesterday","erased_at":"2026-01-01T00:00:00Z"}\n`);
    const r = await runCli(['gdpr', 'ledger', 'reapply', '--file', bad], env(restored));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the ledger (${bad}) is malformed at line 3: "requested_at" must be an instant`);
    expect(r.stderr).toContain('Nothing was changed.');
    expect(await dumpEveryTable(restoredDb.db)).toEqual(before);

    const missing = await runCli(['gdpr', 'ledger', 'reapply', '--file', path.join(dir, 'absent.jsonl')], env(restored));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read the ledger');
    const usage = await runCli(['gdpr', 'ledger', 'reapply'], env(restored));
    expect(usage.code).toBe(64);
    expect(usage.stderr).toContain('--file is required');
  });

  it('reapply on the restored database: the erased are erased again (a legal hold in the backup notwithstanding), the already erased left alone, the unknown counted; twice changes nothing', async () => {
    const file = path.join(dir, 'erasures.jsonl');
    writeFileSync(file, ledger);
    const r = await runCli(['gdpr', 'ledger', 'reapply', '--file', file], env(restored));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`(${file}: 4 entries, 4 accounts) to PostgreSQL`);
    expect(r.stdout).toMatch(/erased now: +2\n/);
    expect(r.stdout).toContain(`${uuids.get(HELD)}  (its request was under a legal hold in the restored database`);
    expect(r.stdout).toMatch(/already erased: +1\n/);
    expect(r.stdout).toMatch(new RegExp(`unknown uuid: +1 .*\\n +${uuids.get(AFTER)}`));

    // Nothing of them left in any table; the one who never asked is untouched.
    const after = await dumpEveryTable(restoredDb.db);
    for (const p of [EARLY, HELD, LATE, AFTER]) for (const v of identifiers(p)) expect(tablesHolding(after, v), `${v} still in`).toEqual([]);
    for (const v of identifiers(KEPT)) expect(tablesHolding(after, v), v).not.toEqual([]);

    // The same tombstones as on the source (the pseudonym is keyed by the uuid), requests ended by the ledger, audited as the job audits.
    const db = restoredDb.db;
    const src = await openTestDatabase('postgres', source);
    try {
      for (const p of [HELD, LATE]) {
        const q = sql<{ username: string; erased_at: Date | null }>`SELECT username, erased_at FROM users WHERE uuid = ${uuids.get(p)}`;
        const [here, there] = [(await q.execute(db)).rows[0]!, (await q.execute(src.db)).rows[0]!];
        expect(here.username).toBe(there.username);
        expect(here.erased_at).not.toBeNull();
      }
    } finally {
      await src.close();
    }
    const requests = (await sql<{ user_uuid: string; state: string; ended_via: string; held_at: Date | null }>`
      SELECT user_uuid, state, ended_via, held_at FROM gdpr_erasures WHERE user_uuid IN (${uuids.get(HELD)}, ${uuids.get(LATE)}) ORDER BY user_uuid`.execute(db)).rows;
    expect(requests).toHaveLength(2);
    for (const q of requests) expect(q).toMatchObject({ state: 'erased', ended_via: 'ledger' });
    const audited = (await sql<{ user_id: string; details: Record<string, unknown> }>`SELECT user_id, details FROM audit_log WHERE event_type = 'GDPR_ERASED' AND details->>'via' = 'ledger'`.execute(db)).rows;
    expect(audited.map((a) => a.user_id).sort()).toEqual([uuids.get(HELD), uuids.get(LATE)].sort());
    for (const a of audited) {
      expect(a.details).toMatchObject({ reapplied: expect.stringContaining('after a database restore'), by: expect.stringMatching(/^cli:/), counts: expect.objectContaining({ users: 1 }) });
    }
    expect(audited.find((a) => a.user_id === uuids.get(HELD))!.details.held_in_backup_since).toEqual(expect.any(String));

    // The restored database's own ledger now lists them: a later restore of it is covered too.
    const own = await runCli(['gdpr', 'ledger', 'export'], env(restored));
    expect(own.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { user_id: string }).user_id).sort()).toEqual([EARLY, HELD, LATE].map((p) => uuids.get(p)).sort());

    // Twice (from standard input): nothing erased, nothing written.
    const again = await runCli(['gdpr', 'ledger', 'reapply', '--file', '-'], env(restored), ledger);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/erased now: +0\n/);
    expect(again.stdout).toMatch(/already erased: +3\n/);
    expect(again.stdout).toContain('standard input');
    const unchanged = await dumpEveryTable(restoredDb.db);
    for (const table of ['users', 'gdpr_erasures', 'gdpr_requests', 'audit_log', 'consent_history', 'sessions']) expect(unchanged.get(table), table).toBe(after.get(table));
  });
});
