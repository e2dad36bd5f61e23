/**
 * Threat: one caller fills the bcrypt queue (issue 9, section 3). Comparisons are a node's
 * scarcest resource: a caller over SIGNIN_MAX_IN_FLIGHT_PER_IP checks in flight is refused
 * before it reserves an attempt or queues any bcrypt, and setting a password compares at most
 * HISTORY_COMPARISON_CEILING stored ones. The tests count comparisons and hold them at a gate;
 * nothing depends on timing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { HISTORY_COMPARISON_CEILING } from '../../src/credentials/service.js';
import { signal, watchComparisons } from '../harness/comparisons.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, loginFrom, OTHER_PASSWORD, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD as WRONG } from '../harness/fixtures.js';

const ATTACKER = '203.0.113.7';
const BYSTANDER = '203.0.113.8';

afterEach(() => vi.restoreAllMocks());

describe('password checks in flight per address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SIGNIN_MAX_IN_FLIGHT_PER_IP: '4' } });
  });
  afterAll(async () => t.close());

  it('one address with made-up usernames gets 4 comparisons in flight; the rest are 429 RATE_LIMITED before any bcrypt, and another address still signs in', async () => {
    await seedUser(t.s, 'bystander');
    const watch = watchComparisons(t.s.hasher, (p) => p === WRONG); // the flood's comparisons are held
    const refused = signal();
    let refusals = 0;
    const flood = Array.from({ length: 10 }, (_, i) => loginFrom(ATTACKER, t.app, `made.up.${i}`, WRONG).then((r) => {
      if (r.statusCode === 429 && ++refusals === 6) refused.fire();
      return r;
    }));
    await watch.reached(4);
    await refused.promise; // six refused while four still compare
    expect(watch.started).toHaveLength(4);

    // Another address is not held up by the flood, and its comparison is the fifth.
    expect((await loginFrom(BYSTANDER, t.app, 'bystander', STRONG_PASSWORD)).statusCode).toBe(200);
    expect(watch.started).toHaveLength(5);

    watch.open();
    const results = await Promise.all(flood);
    const limited = results.filter((r) => r.statusCode === 429);
    expect(limited).toHaveLength(6);
    for (const r of limited) {
      expectError(r, 429, 'RATE_LIMITED');
      expect(r.headers['retry-after']).toBe('1');
    }
    for (const r of results.filter((x) => x.statusCode !== 429)) expectError(r, 401, 'INVALID_CREDENTIALS');
    expect(watch.started).toHaveLength(5); // no refused request compared anything
    // Refused before the lockout: no attempt was reserved for the six.
    expect(await t.s.database.db.selectFrom('login_attempts').select('subject_key').where('subject_key', 'like', 'n:%').execute()).toHaveLength(4);
    // Once the flood ends the address may sign in again.
    expectError(await loginFrom(ATTACKER, t.app, 'made.up.later', WRONG), 401, 'INVALID_CREDENTIALS');
  });

  it('sign-ins and current-password checks share the bound: a re-authentication from a full address is refused without a comparison', async () => {
    await seedUser(t.s, 'reauth.crowded');
    const token = (await signIn(t.app, 'reauth.crowded')).access_token;
    const watch = watchComparisons(t.s.hasher, (p) => p === WRONG);
    const flood = Array.from({ length: 4 }, (_, i) => loginFrom(ATTACKER, t.app, `crowd.${i}`, WRONG));
    await watch.reached(4);
    const change = await t.app.inject({
      method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), remoteAddress: ATTACKER,
      payload: { current_password: STRONG_PASSWORD, new_password: OTHER_PASSWORD },
    });
    expectError(change, 429, 'RATE_LIMITED');
    expect(watch.started).toHaveLength(4);
    watch.open();
    for (const r of await Promise.all(flood)) expectError(r, 401, 'INVALID_CREDENTIALS');
  });

  it('a password change keeps its slot through the new password\'s history comparisons: the address has one fewer while they run', async () => {
    const user = await seedUser(t.s, 'history.holder');
    const token = (await signIn(t.app, 'history.holder')).access_token;
    await t.s.database.db.insertInto('credential_history').values({
      user_id: user.id, type: 'password', password_hash: await t.s.hasher.hash('Some-older-pass!9'), created_at: new Date(t.clock.now() - 86_400_000),
    }).execute();
    const watch = watchComparisons(t.s.hasher, (p) => p === OTHER_PASSWORD || p === WRONG);
    const change = t.app.inject({
      method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), remoteAddress: ATTACKER,
      payload: { current_password: STRONG_PASSWORD, new_password: OTHER_PASSWORD },
    });
    await watch.reached(3); // the current password compared; the new one against the current and the older hash, held
    expect(watch.started).toEqual([STRONG_PASSWORD, OTHER_PASSWORD, OTHER_PASSWORD]);
    const others = Array.from({ length: 3 }, (_, i) => loginFrom(ATTACKER, t.app, `history.crowd.${i}`, WRONG));
    await watch.reached(6);
    expectError(await loginFrom(ATTACKER, t.app, 'history.crowd.4', WRONG), 429, 'RATE_LIMITED'); // 1 + 3 = the bound of 4
    expect(watch.started).toHaveLength(6);
    watch.open();
    expect((await change).statusCode).toBe(200);
    for (const r of await Promise.all(others)) expectError(r, 401, 'INVALID_CREDENTIALS');
  });
});

describe('password history comparisons', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it(`a user with 40 passwords in the last year compares at most ${HISTORY_COMPARISON_CEILING} of them when setting a new one`, async () => {
    const user = await seedUser(t.s, 'daily.changer');
    const token = (await signIn(t.app, 'daily.changer')).access_token;
    const now = t.clock.now();
    const old = await Promise.all(Array.from({ length: 40 }, (_, i) => t.s.hasher.hash(`Old-password-${i}!Zq`)));
    await t.s.database.db.insertInto('credential_history').values(old.map((h, i) => ({
      user_id: user.id, type: 'password', password_hash: h, created_at: new Date(now - (i + 1) * 86_400_000),
    }))).execute();

    const verify = vi.spyOn(t.s.hasher, 'verify');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), payload: { current_password: STRONG_PASSWORD, new_password: OTHER_PASSWORD } });
    expect(res.statusCode, res.body).toBe(200);
    // One comparison of the current password, then the history, newest first, up to the ceiling.
    expect(verify).toHaveBeenCalledTimes(1 + HISTORY_COMPARISON_CEILING);
    // All of it queued in the account's own lane of the fair gate, none in the shared one.
    expect(new Set(verify.mock.calls.map((c) => c[2]))).toEqual(new Set([`u:${user.id}`]));
  });

  it('a sign-in queues its comparison in the lane of the account it is for (a made-up name: its own lane)', async () => {
    const user = await seedUser(t.s, 'lane.owner');
    const verify = vi.spyOn(t.s.hasher, 'verify');
    const dummy = vi.spyOn(t.s.hasher, 'dummyVerify');
    expect((await loginFrom(BYSTANDER, t.app, 'lane.owner', STRONG_PASSWORD)).statusCode).toBe(200);
    expect(verify.mock.calls.map((c) => c[2])).toEqual([`u:${user.id}`]);
    expectError(await loginFrom(BYSTANDER, t.app, 'nobody.at.all', WRONG), 401, 'INVALID_CREDENTIALS');
    expect(dummy.mock.calls.map((c) => c[1])).toEqual([t.s.attempts.subjectKey(undefined, 'nobody.at.all')]);
  });

  it('the history rule still refuses a password within the ceiling', async () => {
    const user = await seedUser(t.s, 'reuser');
    const token = (await signIn(t.app, 'reuser')).access_token;
    const reused = 'Vq8#kTz3!wNe5^';
    await t.s.database.db.insertInto('credential_history').values({
      user_id: user.id, type: 'password', password_hash: await t.s.hasher.hash(reused), created_at: new Date(t.clock.now() - 30 * 86_400_000),
    }).execute();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), payload: { current_password: STRONG_PASSWORD, new_password: reused } });
    expectError(res, 422, 'PASSWORD_POLICY_VIOLATION');
    expect(JSON.stringify(res.json().details)).toContain('history');
  });
});
