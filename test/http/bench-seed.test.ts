/**
 * The scale seed (`strongroom bench seed`, issue 26 section 2) at a modest size: 20,000 synthetic
 * users with their sessions and a year of audit entries, written by the command's own code. At
 * that size the planner has a real choice, so the plans of the queries the service runs are
 * checked with EXPLAIN: the sign-in lookup by email and the USSD lookup by phone go through their
 * blind indexes (never a sequential scan of users), and the administrator's audit queries read
 * only the monthly partitions of the range they ask for. The synthetic users are real to the
 * service: they sign in by username or email, and those with a second factor are asked for it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery, type KyselyPlugin } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuditPartitions, monthStart } from '../../src/audit/partitions.js';
import { AuditLog } from '../../src/audit/service.js';
import { passwordUsers, SEED_PASSWORD, seedIdentity, seedUuid } from '../../src/cli/bench-seed-identity.js';
import { readMarker, type SeedPlan } from '../../src/cli/bench-seed-marker.js';
import { seedDatabase } from '../../src/cli/bench-seed-run.js';
import { ManualClock } from '../../src/platform/clock.js';
import { KeyMaterial } from '../../src/platform/crypto/key-material.js';
import type { Db } from '../../src/platform/db/database.js';
import { UserStore } from '../../src/users/store.js';
import { cliEnv, runCli } from '../harness/cli.js';
import { createTestApp, dbKind, emptyPostgresDatabase, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { expectError, login } from '../harness/fixtures.js';

const PLAN: SeedPlan = { users: 20_000, sessions: 4_000, activeSessions: 400, audit: 60_000, months: 13 };
const secrets = testSecrets();
const clock = new ManualClock(Date.now());
let t: TestApp;
let url: string | undefined;
let stoppedAt: { users: number; audit: number; finished: boolean };
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-seed-test-'));

beforeAll(async () => {
  url = dbKind() === 'postgres' ? await freshPostgresDatabase() : undefined;
  t = await createTestApp({ database: await openTestDatabase(dbKind(), url), secrets, clock });
  // Stopped after its first batch, then run again: it continues, on PostgreSQL two batches at a time.
  const run = (onProgress?: () => void): Promise<unknown> =>
    seedDatabase(t.s.database.db, { keys: new KeyMaterial(secrets), encrypt: true, bcryptCost: 4, plan: PLAN, now: new Date(clock.now()), lanes: dbKind() === 'postgres' ? 2 : 1, onProgress });
  await expect(run(() => {
    throw new Error('stopped');
  })).rejects.toThrow('stopped');
  const stopped = (await readMarker(t.s.database.db))!;
  stoppedAt = { ...stopped.done, finished: stopped.finishedAt !== null };
  await run();
}, 300_000);

afterAll(async () => {
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `db` with every query it runs compiled into `queries`, so the service's own SQL can be explained. */
function capturing(db: Db): { db: Db; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      queries.push(db.getExecutor().compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(plugin), queries };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const flatten = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)];

async function explain(q: CompiledQuery): Promise<PlanNode[]> {
  const r = await t.s.database.db.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${q.sql}`, [...q.parameters]));
  const raw = r.rows[0]!['QUERY PLAN'];
  const doc = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: PlanNode }>;
  return flatten(doc[0]!.Plan);
}

/** The partitions of the audit log a plan reads (the legal-hold table beside it is not one). */
const partitionsRead = (plan: PlanNode[]): string[] =>
  [...new Set(plan.map((n) => n['Relation Name']).filter((r): r is string => r !== undefined && /^audit_log_(y\d|before_|default$)/.test(r)))];

const describePlan = (nodes: PlanNode[]): string => nodes.map((n) => `${n['Node Type']}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`).join('; ');

describe('the seed', () => {
  it('stopped after a batch, continued where it was: every row once', async () => {
    expect(stoppedAt).toMatchObject({ audit: 0, finished: false });
    expect(stoppedAt.users).toBeGreaterThan(0);
    const dup = await t.s.database.db.executeQuery<{ n: string }>(CompiledQuery.raw('SELECT count(*) - count(DISTINCT username) AS n FROM users'));
    expect(Number(dup.rows[0]!.n)).toBe(0);
  });

  it('wrote what was asked, recorded it as finished, and a second run adds nothing', async () => {
    const db = t.s.database.db;
    const count = async (table: 'users' | 'sessions' | 'refresh_tokens' | 'audit_log' | 'device_tokens' | 'mfa_factors'): Promise<number> =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
    const before = { users: await count('users'), sessions: await count('sessions'), audit: await count('audit_log') };
    expect(before).toEqual({ users: PLAN.users, sessions: PLAN.sessions, audit: PLAN.audit });
    expect(await count('refresh_tokens')).toBe(PLAN.activeSessions);
    expect(Number((await db.selectFrom('sessions').select((eb) => eb.fn.countAll<string>().as('n')).where('is_active', '=', true).executeTakeFirstOrThrow()).n)).toBe(PLAN.activeSessions);
    expect(await count('device_tokens')).toBe(PLAN.users / 5 + PLAN.users / 25);
    expect(await count('mfa_factors')).toBe(PLAN.users / 10 + PLAN.users / 20);
    const marker = await readMarker(db);
    expect(marker).toMatchObject({ plan: PLAN, done: { users: PLAN.users, audit: PLAN.audit } });
    expect(marker!.finishedAt).not.toBeNull();

    await seedDatabase(db, { keys: new KeyMaterial(secrets), encrypt: true, bcryptCost: 4, plan: PLAN, now: new Date() });
    expect({ users: await count('users'), sessions: await count('sessions'), audit: await count('audit_log') }).toEqual(before);
  });

  it('gives user n the uuid the bench computes, and its audit entries are spread over the months asked', async () => {
    const row = await t.s.database.db.selectFrom('users').select(['uuid', 'username']).where('username', '=', 'seed.u12345').executeTakeFirstOrThrow();
    expect(row.uuid).toBe(seedUuid(12345));
    const partitions = await listAuditPartitions(t.s.database.db);
    const from = monthStart(new Date(clock.now()), -PLAN.months);
    expect(partitions.filter((p) => p.from !== null && p.from >= from).length).toBeGreaterThanOrEqual(PLAN.months + 1);
    const inDefault = await t.s.database.db.executeQuery<{ n: string }>(CompiledQuery.raw('SELECT count(*) AS n FROM audit_log_default'));
    expect(Number(inDefault.rows[0]!.n)).toBe(0);
  });
});

describe('lookups at 20,000 users use their indexes', () => {
  const store = (db: Db): UserStore => new UserStore(db, { sensitive: t.s.sensitive, blindIndex: new KeyMaterial(secrets).blindIndex('blind-index') });

  it('sign-in by email finds the user through users_email_bidx, without a sequential scan of users', async () => {
    const who = seedIdentity(passwordUsers(PLAN.users, 5)[3]!.n);
    const cap = capturing(t.s.database.db);
    expect(await store(cap.db).findByLogin(who.email)).toMatchObject({ username: who.username, email: who.email, phone: who.phone });
    const plan = await explain(cap.queries[0]!);
    expect(plan.some((n) => n['Index Name'] === 'users_email_bidx'), describePlan(plan)).toBe(true);
    expect(plan.some((n) => n['Node Type'] === 'Seq Scan'), describePlan(plan)).toBe(false);
  });

  it('the USSD lookup by phone finds the user through users_phone_bidx, without a sequential scan of users', async () => {
    const who = seedIdentity(passwordUsers(PLAN.users, 5)[4]!.n);
    const cap = capturing(t.s.database.db);
    expect(await store(cap.db).findByPhone(who.phone!)).toMatchObject({ username: who.username, phone: who.phone });
    const plan = await explain(cap.queries[0]!);
    expect(plan.some((n) => n['Index Name'] === 'users_phone_bidx'), describePlan(plan)).toBe(true);
    expect(plan.some((n) => n['Node Type'] === 'Seq Scan'), describePlan(plan)).toBe(false);
  });
});

describe("an administrator's audit queries read only the months they ask for", () => {
  /** The partitions a query over [from, to) may read: those whose bounds overlap it. */
  async function overlapping(from: Date, to: Date): Promise<string[]> {
    return (await listAuditPartitions(t.s.database.db)).filter((p) => (p.from === null || p.from < to) && p.to > from).map((p) => p.name);
  }

  async function scannedBy(f: { userId?: string; eventType?: string; from: Date; to: Date }): Promise<{ plans: PlanNode[][]; total: number }> {
    const cap = capturing(t.s.database.db);
    const r = await new AuditLog({ db: cap.db, clock }).query({ ...f, from: f.from.toISOString(), to: f.to.toISOString(), limit: 50, offset: 0 });
    expect(cap.queries.length).toBeGreaterThan(0);
    return { plans: await Promise.all(cap.queries.map(explain)), total: r.total };
  }

  it('by user over the last two months: the partitions of those months, through an index', async () => {
    const to = new Date(clock.now());
    const from = new Date(to.getTime() - 60 * 86_400_000);
    const { plans } = await scannedBy({ userId: seedUuid(777), from, to });
    const allowed = await overlapping(from, to);
    const all = await listAuditPartitions(t.s.database.db);
    expect(allowed.length).toBeLessThanOrEqual(3);
    for (const plan of plans) {
      const read = partitionsRead(plan);
      expect(read.length, describePlan(plan)).toBeGreaterThan(0);
      expect(read.every((r) => allowed.includes(r)), `${describePlan(plan)} (allowed: ${allowed.join(', ')})`).toBe(true);
      expect(read.length, describePlan(plan)).toBeLessThan(all.length);
      expect(plan.some((n) => n['Node Type'] === 'Seq Scan'), describePlan(plan)).toBe(false);
    }
  });

  it('by event type over one day, six months ago: that month only', async () => {
    const from = new Date(Date.UTC(new Date(clock.now()).getUTCFullYear(), new Date(clock.now()).getUTCMonth() - 6, 10));
    const to = new Date(from.getTime() + 86_400_000);
    const { plans, total } = await scannedBy({ eventType: 'USER_LOGIN', from, to });
    expect(total).toBeGreaterThan(0);
    const allowed = await overlapping(from, to);
    expect(allowed).toHaveLength(1);
    for (const plan of plans) {
      expect(partitionsRead(plan), describePlan(plan)).toEqual(allowed);
    }
  });
});

describe('synthetic users are real to the service', () => {
  it('sign in with the seed password by username and by email', async () => {
    const [a, b] = passwordUsers(PLAN.users, 2);
    for (const id of [a!.username, b!.email]) {
      const res = await login(t.app, id, SEED_PASSWORD);
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it('one with a TOTP factor is asked for it', async () => {
    const res = await login(t.app, seedIdentity(17).username, SEED_PASSWORD);
    expect((expectError(res, 401, '2FA_REQUIRED').details as { methods: string[] }).methods).toContain('totp');
  });
});

describe('strongroom bench seed never writes to a database people use', () => {
  const env = (extra: Record<string, string>): Record<string, string> => cliEnv(secrets, dataDir, extra);
  const small = ['--users', '30', '--sessions', '20', '--active-sessions', '5', '--audit', '200', '--months', '2'];

  it('refuses the embedded database, a database other than the one named, and a database holding a person', async () => {
    const noUrl = await runCli(['bench', 'seed', '--database', 'bench'], env({}));
    expect(noUrl.code, noUrl.stderr).toBe(1);
    expect(noUrl.stderr).toMatch(/needs DATABASE_URL/);
    if (dbKind() !== 'postgres') return;
    const name = new URL(url!).pathname.slice(1);
    const other = await runCli(['bench', 'seed', '--database', 'strongroom', ...small], env({ DATABASE_URL: url! }));
    expect(other.code, other.stderr).toBe(1);
    expect(other.stderr).toContain(`opens the database "${name}", not "strongroom"`);
    const peopled = await freshPostgresDatabase();
    const client = new pg.Client({ connectionString: peopled });
    await client.connect();
    await client.query(`INSERT INTO users (username, created_at, updated_at) VALUES ('amina.otieno', now(), now())`);
    await client.end();
    const person = await runCli(['bench', 'seed', '--database', new URL(peopled).pathname.slice(1), ...small], env({ DATABASE_URL: peopled }));
    expect(person.code, person.stderr).toBe(1);
    expect(person.stderr).toMatch(/holds 1 user the seed did not make/);
  }, 120_000);

  it('seeds an empty PostgreSQL database it is named, then, run again on the finished seed, has nothing to do', async () => {
    if (dbKind() !== 'postgres') return;
    const empty = await emptyPostgresDatabase('seed');
    const name = new URL(empty).pathname.slice(1);
    const first = await runCli(['bench', 'seed', '--database', name, ...small], env({ DATABASE_URL: empty }));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/Seeded in \d+ s/);
    const again = await runCli(['bench', 'seed', '--database', name, ...small], env({ DATABASE_URL: empty }));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/nothing to do/);
  }, 120_000);
});
