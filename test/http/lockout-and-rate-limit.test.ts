/**
 * Lockout (SPEC "States": MAX_LOGIN_ATTEMPTS failures lock for ACCOUNT_LOCKOUT_MINUTES; ruling 6)
 * and the per-IP sign-in rate limit. Time only moves through the ManualClock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, useTwoNodes, type TestApp } from '../harness/app.js';
import { watchComparisons } from '../harness/comparisons.js';
import { auditTotal, bearer, botnetAddress, expectError, expectLocked, login, loginFrom, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD as WRONG } from '../harness/fixtures.js';

const MINUTE = 60_000;

afterEach(() => vi.restoreAllMocks());
type Res = Awaited<ReturnType<typeof login>>;

async function failTimes(t: TestApp, username: string, n: number): Promise<Res[]> {
  const out: Res[] = [];
  for (let i = 0; i < n; i++) out.push(await login(t.app, username, WRONG));
  return out;
}

describe('account lockout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('locks after 5 failures for 15 minutes with Retry-After, refusing even the right password, then lets the user in', async () => {
    await seedUser(t.s, 'lena.mwangi');
    const first = await failTimes(t, 'lena.mwangi', 4);
    for (const r of first) expectError(r, 401, 'INVALID_CREDENTIALS');
    expectLocked(await login(t.app, 'lena.mwangi', WRONG), 15 * 60);

    expectLocked(await login(t.app, 'lena.mwangi', STRONG_PASSWORD), 15 * 60);
    t.clock.advance(5 * MINUTE);
    expectLocked(await login(t.app, 'lena.mwangi', STRONG_PASSWORD), 10 * 60);
    t.clock.advance(10 * MINUTE - 1000);
    expectLocked(await login(t.app, 'lena.mwangi', STRONG_PASSWORD), 1);

    t.clock.advance(1001);
    // The expired lock starts a fresh count: one failure is a plain 401, not a new lock.
    expectError(await login(t.app, 'lena.mwangi', WRONG), 401, 'INVALID_CREDENTIALS');
    await signIn(t.app, 'lena.mwangi');
  });

  it('threat: a lock holds for its whole period even when the window its failures were counted in ends first', async () => {
    await seedUser(t.s, 'spread.out');
    expectError(await login(t.app, 'spread.out', WRONG), 401, 'INVALID_CREDENTIALS'); // the window opens
    t.clock.advance(14 * MINUTE);
    for (const r of await failTimes(t, 'spread.out', 3)) expectError(r, 401, 'INVALID_CREDENTIALS');
    expectLocked(await login(t.app, 'spread.out', WRONG), 15 * 60); // locked for 15 minutes from now
    t.clock.advance(2 * MINUTE); // the window has ended; the lock has not
    expectLocked(await login(t.app, 'spread.out', STRONG_PASSWORD), 13 * 60);
    expectLocked(await login(t.app, 'spread.out', WRONG), 13 * 60);
    t.clock.advance(13 * MINUTE);
    await signIn(t.app, 'spread.out');
  });

  it('a successful sign-in resets the failure counter', async () => {
    await seedUser(t.s, 'omar.haji');
    for (const r of await failTimes(t, 'omar.haji', 4)) expectError(r, 401, 'INVALID_CREDENTIALS');
    await signIn(t.app, 'omar.haji');
    for (const r of await failTimes(t, 'omar.haji', 4)) expectError(r, 401, 'INVALID_CREDENTIALS');
    await signIn(t.app, 'omar.haji');
  });

  it('counts failures by account, whether the username or the email is typed', async () => {
    await seedUser(t.s, 'ruth.achieng', { email: 'ruth@bank.example' });
    await failTimes(t, 'ruth.achieng', 2);
    await failTimes(t, 'RUTH@bank.example', 2);
    expectLocked(await login(t.app, 'Ruth.Achieng', WRONG));
    expectLocked(await login(t.app, 'ruth@bank.example', STRONG_PASSWORD));
  });

  it('locks unknown usernames exactly like known ones (ruling 6)', async () => {
    for (const r of await failTimes(t, 'nobody.here', 4)) expectError(r, 401, 'INVALID_CREDENTIALS');
    expectLocked(await login(t.app, 'nobody.here', WRONG), 15 * 60);
  });

  it('20 parallel wrong passwords never get more than the limit through; then the right one is locked out', async () => {
    await seedUser(t.s, 'burst.target');
    const watch = watchComparisons(t.s.hasher);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => loginFrom(botnetAddress(i), t.app, 'burst.target', WRONG)));
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.every((s) => s === 401 || s === 429), statuses.join(',')).toBe(true);
    // Failures 1..4 are answered 401; the 5th and every later one find the account locked.
    expect(statuses.filter((s) => s === 401)).toHaveLength(t.s.config.signin.maxLoginAttempts - 1);
    for (const r of results.filter((x) => x.statusCode === 429)) expectLocked(r);
    expect(watch.started).toHaveLength(t.s.config.signin.maxLoginAttempts); // the work, not only the statuses
    expectLocked(await login(t.app, 'burst.target', STRONG_PASSWORD));
  });

  it('an administrator unlock clears the lock, audited as ACCOUNT_UNLOCKED', async () => {
    const user = await seedUser(t.s, 'locked.out');
    await seedUser(t.s, 'unlock.admin', { roles: ['admin'] });
    const adminToken = (await signIn(t.app, 'unlock.admin')).access_token;
    await failTimes(t, 'locked.out', 5);
    expectLocked(await login(t.app, 'locked.out', STRONG_PASSWORD));

    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${user.uuid}/unlock`, headers: bearer(adminToken) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'success', user: { id: user.uuid, username: 'locked.out', status: 'active', locked_until: null } });
    await signIn(t.app, 'locked.out');

    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'ACCOUNT_UNLOCKED', limit: 10, offset: 0 });
    expect(audit.total).toBe(1);
    expect(audit.entries[0]).toMatchObject({ status: 'SUCCESS', username: 'locked.out', ip_address: '127.0.0.1' });
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/admin/users/00000000-0000-4000-8000-000000000000/unlock', headers: bearer(adminToken) }), 404, 'USER_NOT_FOUND');
  });

  it('audits each failure as FAILED_LOGIN_ATTEMPT, the lock as ACCOUNT_LOCKED, and an attempt refused by the lock as LOCKED_LOGIN_ATTEMPT', async () => {
    const user = await seedUser(t.s, 'audit.lock', { email: 'audit.lock@bank.example' });
    await failTimes(t, 'audit.lock', 5);
    await login(t.app, 'audit.lock', STRONG_PASSWORD);

    const failed = await t.s.audit.query({ userId: user.uuid, eventType: 'FAILED_LOGIN_ATTEMPT', limit: 50, offset: 0 });
    expect(failed.total).toBe(5);
    expect(failed.entries.every((e) => e.details.reason === 'invalid_credentials')).toBe(true);
    const refused = await t.s.audit.query({ userId: user.uuid, eventType: 'LOCKED_LOGIN_ATTEMPT', limit: 50, offset: 0 });
    expect(refused.total).toBe(1);
    expect(refused.entries[0]).toMatchObject({ status: 'FAILURE', username: 'audit.lock', details: { reason: 'account_locked', strategy: 'local' } });
    expect(failed.entries[0]).toMatchObject({ status: 'FAILURE', username: 'audit.lock', ip_address: '127.0.0.1', channel: 'web' });
    const counts = failed.entries.map((e) => e.details.failed_count).filter((c) => c !== undefined).sort();
    expect(counts).toEqual([1, 2, 3, 4, 5]);

    const locked = await t.s.audit.query({ userId: user.uuid, eventType: 'ACCOUNT_LOCKED', limit: 10, offset: 0 });
    expect(locked.total).toBe(1);
    expect(locked.entries[0]).toMatchObject({ event_type: 'ACCOUNT_LOCKED', username: 'audit.lock' });
    expect(new Date(locked.entries[0]!.details.locked_until as string).getTime()).toBe(t.clock.now() + 15 * MINUTE);
  });
});

describe('clean-up of attempt counters', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const keys = async () => (await t.s.database.db.selectFrom('login_attempts').select('subject_key').execute()).map((r) => r.subject_key);

  it('threat: random usernames do not grow the table for ever; the clean-up job drops counters whose window ended, never a live lock', async () => {
    for (let i = 0; i < 20; i++) expectError(await login(t.app, `random.${i}.${Date.now()}`, WRONG), 401, 'INVALID_CREDENTIALS');
    await seedUser(t.s, 'still.locked');
    await failTimes(t, 'still.locked', 5);
    expect(await keys()).toHaveLength(21);

    expect(await t.scheduler.runNow('login attempt clean-up')).toBe(true);
    expect(await keys()).toHaveLength(21); // every window is still open
    // locked.later: its window opens now, its lock starts 14 minutes later.
    await seedUser(t.s, 'locked.later');
    expectError(await login(t.app, 'locked.later', WRONG), 401, 'INVALID_CREDENTIALS');
    t.clock.advance(14 * MINUTE);
    await failTimes(t, 'locked.later', 4);
    t.clock.advance(MINUTE + 1000); // every earlier window has ended, locked.later's included
    expectError(await login(t.app, 'fresh.guess', WRONG), 401, 'INVALID_CREDENTIALS');
    t.clock.advance(MINUTE);
    expect(await t.scheduler.runNow('login attempt clean-up')).toBe(true);
    const left = await keys();
    expect(left).toHaveLength(2); // the open window of fresh.guess, and the live lock of locked.later (its window ended)
    expect(left).toContain(t.s.attempts.userKey((await t.s.users.findByLogin('locked.later'))!.id));
    expectLocked(await login(t.app, 'locked.later', STRONG_PASSWORD));
  });
});

describe('lockout shared by every node through the database', () => {
  const nodes = useTwoNodes();

  it('failures on two nodes add up, and both refuse the locked account', async () => {
    const { a, b } = nodes;
    await seedUser(a.s, 'two.nodes');
    for (const r of await failTimes(a, 'two.nodes', 3)) expectError(r, 401, 'INVALID_CREDENTIALS');
    expectError(await login(b.app, 'two.nodes', WRONG), 401, 'INVALID_CREDENTIALS');
    expectLocked(await login(b.app, 'two.nodes', WRONG), 15 * 60);
    expectLocked(await login(a.app, 'two.nodes', STRONG_PASSWORD), 15 * 60);
    expectLocked(await login(b.app, 'two.nodes', STRONG_PASSWORD), 15 * 60);

    const row = await a.s.database.db.selectFrom('login_attempts').selectAll().where('subject_key', '=', a.s.attempts.userKey((await a.s.users.findByLogin('two.nodes'))!.id)).executeTakeFirstOrThrow();
    expect(row.failed_count).toBe(5);
    expect(new Date(row.locked_until!).getTime()).toBe(a.clock.now() + 15 * MINUTE);

    a.clock.advance(15 * MINUTE + 1000);
    await signIn(b.app, 'two.nodes');
    await signIn(a.app, 'two.nodes');
  });

  it('a success on one node resets the count the other node sees', async () => {
    const { a, b } = nodes;
    await seedUser(a.s, 'reset.across');
    await failTimes(a, 'reset.across', 4);
    await signIn(b.app, 'reset.across');
    for (const r of await failTimes(a, 'reset.across', 4)) expectError(r, 401, 'INVALID_CREDENTIALS');
  });
});

describe('per-IP sign-in rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Start 10 s into a minute so the window's remaining time is known exactly.
    t = await createTestApp({ env: { SIGNIN_RATE_LIMIT_PER_MINUTE: '3' }, clock: new ManualClock(Date.UTC(2026, 0, 15, 9, 0, 10)) });
    await seedUser(t.s, 'rate.user');
  });
  afterAll(async () => t.close());

  it('answers the 4th sign-in of a minute from one address with 429 RATE_LIMITED and Retry-After; the next minute works', async () => {
    await signIn(t.app, 'rate.user');
    expectError(await login(t.app, 'rate.user', WRONG), 401, 'INVALID_CREDENTIALS');
    await signIn(t.app, 'rate.user');

    const limited = await login(t.app, 'rate.user');
    const body = expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe('50');
    expect(body.details).toMatchObject({ retry_after_seconds: 50 });
    // Other addresses have their own budget.
    const other = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'rate.user', password: STRONG_PASSWORD }, remoteAddress: '10.1.2.3' });
    expect(other.statusCode, other.body).toBe(200);

    t.clock.advance(30_000);
    expect((await login(t.app, 'rate.user')).headers['retry-after']).toBe('20');
    t.clock.advance(20_000);
    await signIn(t.app, 'rate.user');
  });

  it('threat: rotating IPv6 addresses inside one /64 does not buy more sign-ins (429 RATE_LIMITED on the 4th); the next /64 has its own budget', async () => {
    t.clock.advance(MINUTE);
    const from = (remoteAddress: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'rate.user', password: WRONG }, remoteAddress });
    const prefix = '2001:db8:77:1';
    for (let i = 1; i <= 3; i++) expectError(await from(`${prefix}:${i.toString(16)}:0:0:${i}`), 401, 'INVALID_CREDENTIALS');
    const before = await auditTotal(t.s, (await t.s.users.findByLogin('rate.user'))!.uuid, 'FAILED_LOGIN_ATTEMPT');
    for (const suffix of ['ffff:ffff:ffff:ffff', '9::9', 'a:b:c:d']) expectError(await from(`${prefix}:${suffix}`), 429, 'RATE_LIMITED');
    expect(await auditTotal(t.s, (await t.s.users.findByLogin('rate.user'))!.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(before); // nothing compared
    expectError(await from('2001:db8:77:2::1'), 401, 'INVALID_CREDENTIALS');
    t.clock.advance(MINUTE);
    await signIn(t.app, 'rate.user'); // the failures stayed under the lockout
  });

  it('rate-limited requests do not count as failed passwords', async () => {
    t.clock.advance(MINUTE);
    await seedUser(t.s, 'rate.victim');
    for (let i = 0; i < 3; i++) expectError(await login(t.app, 'rate.victim', WRONG), 401, 'INVALID_CREDENTIALS');
    for (let i = 0; i < 5; i++) expectError(await login(t.app, 'rate.victim', WRONG), 429, 'RATE_LIMITED');
    t.clock.advance(MINUTE);
    await signIn(t.app, 'rate.victim');
  });
});
