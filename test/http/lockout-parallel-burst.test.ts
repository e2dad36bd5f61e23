/**
 * Threat: password guessing that outruns the lockout with parallel requests (issue 9, section 1).
 * An attempt is reserved before any comparison, so a burst buys at most MAX_LOGIN_ATTEMPTS
 * comparisons per lock period, on one node or several; the tests count the comparisons (spies
 * on the bcrypt hasher) and the audit rows, not only the statuses. Comparisons are held at a
 * gate where the order of events matters, so nothing here depends on timing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { LoginAttempts } from '../../src/policy/lockout.js';
import { signal, watchComparisons } from '../harness/comparisons.js';
import { createTestApp, useTwoNodes, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, botnetAddress, expectError, expectLocked, login, loginFrom, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD as WRONG } from '../harness/fixtures.js';


afterEach(() => vi.restoreAllMocks());

describe('lockout under a parallel burst', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('30 wrong passwords and then the right one, in parallel: 5 comparisons, 5 FAILED_LOGIN_ATTEMPT rows, no 200, the account locked', async () => {
    const user = await seedUser(t.s, 'burst.victim');
    const watch = watchComparisons(t.s.hasher, () => true);
    const wrong = Array.from({ length: 30 }, (_, i) => loginFrom(botnetAddress(i), t.app, 'burst.victim', WRONG));
    await watch.reached(5); // five attempts reserved and comparing, held at the gate
    const right = loginFrom(botnetAddress(30), t.app, 'burst.victim', STRONG_PASSWORD); // waits for a slot; none comes
    watch.open();
    const results = await Promise.all(wrong);
    expectLocked(await right); // the five failures locked the account before it could compare
    expect(watch.started).toHaveLength(5);
    expect(watch.started.every((p) => p === WRONG)).toBe(true);
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(4);
    expect(statuses.filter((s) => s === 429)).toHaveLength(26);
    for (const r of results.filter((x) => x.statusCode === 429)) expectLocked(r);
    expect(await auditTotal(t.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(5);
    expect(await auditTotal(t.s, user.uuid, 'LOCKED_LOGIN_ATTEMPT')).toBe(26); // 25 wrong and the right one
    expect(await auditTotal(t.s, user.uuid, 'ACCOUNT_LOCKED')).toBe(1);
    expect(await auditTotal(t.s, user.uuid, 'USER_LOGIN')).toBe(0);
    expect(await t.s.attempts.lockedUntil(t.s.attempts.userKey(user.id))).toBe(t.clock.now() + 15 * 60_000);
    expectLocked(await login(t.app, 'burst.victim', STRONG_PASSWORD));
  });

  it('an unknown username gets the same cap: 5 (dummy) comparisons out of a burst of 30', async () => {
    const watch = watchComparisons(t.s.hasher);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => loginFrom(botnetAddress(i), t.app, 'no.such.user', WRONG)));
    expect(watch.started).toHaveLength(5);
    expect(results.filter((r) => r.statusCode === 401)).toHaveLength(4);
    for (const r of results.filter((x) => x.statusCode !== 401)) expectLocked(r);
  });

  it('a success clears the failures before it, never those reserved while it compared', async () => {
    await seedUser(t.s, 'slow.success');
    const watch = watchComparisons(t.s.hasher, (p) => p === STRONG_PASSWORD);
    const right = login(t.app, 'slow.success', STRONG_PASSWORD);
    await watch.reached(1); // the right password holds attempt 1
    for (let i = 0; i < 3; i++) expectError(await login(t.app, 'slow.success', WRONG), 401, 'INVALID_CREDENTIALS'); // attempts 2..4
    watch.open();
    expect((await right).statusCode).toBe(200);
    // The three failures that ran beside the success still count: two more lock the account.
    expectError(await login(t.app, 'slow.success', WRONG), 401, 'INVALID_CREDENTIALS');
    expectLocked(await login(t.app, 'slow.success', WRONG));
  });

  it('when the limit is reached while the right password compares, the right password is refused too', async () => {
    const user = await seedUser(t.s, 'locked.meanwhile');
    const watch = watchComparisons(t.s.hasher, (p) => p === STRONG_PASSWORD);
    const right = login(t.app, 'locked.meanwhile', STRONG_PASSWORD);
    await watch.reached(1);
    for (let i = 0; i < 3; i++) expectError(await login(t.app, 'locked.meanwhile', WRONG), 401, 'INVALID_CREDENTIALS');
    expectLocked(await login(t.app, 'locked.meanwhile', WRONG)); // attempt 5 fails and locks
    watch.open();
    expectLocked(await right);
    expect(await auditTotal(t.s, user.uuid, 'USER_LOGIN')).toBe(0);
    expect(await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', user.id).execute()).toHaveLength(0);
  });

  it('a stolen access token buys no more guesses: 20 parallel wrong current passwords from many addresses compare 5, then the account is locked', async () => {
    await seedUser(t.s, 'stolen.token');
    const token = (await signIn(t.app, 'stolen.token')).access_token;
    const watch = watchComparisons(t.s.hasher);
    // At most SIGNIN_MAX_IN_FLIGHT_PER_IP (10) checks of one account are in flight at once; the
    // test sends them in two waves of 10 so that bound stays out of the way of the lockout's.
    const change = (i: number) => t.app.inject({
      method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), remoteAddress: botnetAddress(i), payload: { current_password: WRONG, new_password: OTHER_PASSWORD },
    });
    const first = await Promise.all(Array.from({ length: 10 }, (_, i) => change(i)));
    const second = await Promise.all(Array.from({ length: 10 }, (_, i) => change(10 + i)));
    const results = [...first, ...second];
    expect(watch.started).toHaveLength(5);
    expect(results.filter((r) => r.statusCode === 401)).toHaveLength(4);
    for (const r of results.filter((x) => x.statusCode !== 401)) expectLocked(r);
    expectLocked(await login(t.app, 'stolen.token', STRONG_PASSWORD));
  });

  it('every allowed attempt still comparing after the wait: the next is 429 RATE_LIMITED, not ACCOUNT_LOCKED, and compares nothing', async () => {
    const attempts = new LoginAttempts({
      db: t.s.database.db, clock: t.clock, audit: t.s.audit, config: t.s.config.signin, slotWaitMs: 50, hasher: t.s.keys.hasher('field', 'busy-test'),
    });
    const held = signal();
    const allComparing = signal();
    let checks = 0;
    const slow = () => attempts.attempt('busy:subject', async () => {
      if (++checks === 5) allComparing.fire();
      await held.promise;
      return true;
    });
    const five = Array.from({ length: 5 }, slow);
    await allComparing.promise; // the five hold every allowed attempt
    const sixth = await attempts.attempt('busy:subject', async () => ++checks);
    expect(sixth).toEqual({ kind: 'busy' });
    expect(checks).toBe(5);
    const error = await attempts.refusal(sixth as { kind: 'busy' }, { username: 'busy', userId: null }, { reason: 'invalid_credentials' });
    expect(error).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED', headers: { 'retry-after': '1' } });
    held.fire();
    for (const r of await Promise.all(five)) expect(r.kind).toBe('ok');
    expect(await attempts.lockedUntil('busy:subject')).toBeNull();
  });

  it('eight parallel sign-ins with the right password all succeed: the ones past the limit wait for a slot, and every comparison is counted once', async () => {
    await seedUser(t.s, 'service.burst');
    const watch = watchComparisons(t.s.hasher);
    const results = await Promise.all(Array.from({ length: 8 }, () => login(t.app, 'service.burst')));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    expect(watch.started).toHaveLength(8);
    const row = await t.s.database.db.selectFrom('login_attempts').select(['failed_count', 'locked_until']).where('subject_key', '=', t.s.attempts.userKey((await t.s.users.findByLogin('service.burst'))!.id)).executeTakeFirst();
    expect(row?.failed_count ?? 0).toBe(0);
    expect(row?.locked_until ?? null).toBeNull();
  });

});

describe('re-authentication and the address\'s sign-in rate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SIGNIN_RATE_LIMIT_PER_MINUTE: '3' }, clock: new ManualClock(Date.UTC(2026, 0, 15, 9, 0, 10)) });
  });
  afterAll(async () => t.close());

  it('current-password checks count toward the address\'s sign-in rate: the 3rd after a sign-in is 429 RATE_LIMITED, without a comparison', async () => {
    await seedUser(t.s, 'rate.reauth');
    const token = (await signIn(t.app, 'rate.reauth')).access_token; // 1 of 3 this minute
    const change = () => t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), payload: { current_password: WRONG, new_password: OTHER_PASSWORD } });
    const watch = watchComparisons(t.s.hasher);
    expectError(await change(), 401, 'INVALID_CREDENTIALS');
    expectError(await change(), 401, 'INVALID_CREDENTIALS');
    const limited = await change();
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe('50');
    expect(watch.started).toHaveLength(2);
  });
});

describe('lockout under a parallel burst on two nodes', () => {
  const nodes = useTwoNodes();

  it('30 wrong passwords spread over two nodes compare 5 in all; both nodes then refuse the right one', async () => {
    const { a, b } = nodes;
    const user = await seedUser(a.s, 'two.node.burst');
    const onA = watchComparisons(a.s.hasher);
    const onB = watchComparisons(b.s.hasher);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => loginFrom(botnetAddress(i), i % 2 === 0 ? a.app : b.app, 'two.node.burst', WRONG)));
    expect(onA.started.length + onB.started.length).toBe(5);
    expect(results.filter((r) => r.statusCode === 401)).toHaveLength(4);
    for (const r of results.filter((x) => x.statusCode !== 401)) expectLocked(r);
    expect(await auditTotal(a.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(5);
    expectLocked(await login(a.app, 'two.node.burst', STRONG_PASSWORD));
    expectLocked(await login(b.app, 'two.node.burst', STRONG_PASSWORD));
  });
});
