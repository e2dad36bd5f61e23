/**
 * Per-channel limits from the access policy (issue 10, section 2): failed attempts and lockout
 * length, session inactivity, concurrent sessions; SPEC's defaults where a policy says nothing.
 * Threats: guessing on the channel with the laxest limit (one counter serves every channel, so
 * guesses add up), telling unknown names from known ones by when they lock, a lax role policy
 * that would unlock more guesses, and a phone that keeps an idle session open. The clock is
 * frozen; nothing sleeps.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { watchComparisons } from '../harness/comparisons.js';
import { auditTotal, bearer, expectError, expectLocked, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { answerWithoutRequestId, withoutRequestId } from '../harness/request-id.js';

const MINUTE = 60_000;
const DEVICE = 'limits-phone-0001';

let t: TestApp;
const policies: string[] = [];

beforeAll(async () => {
  t = await createTestApp({ clock: new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0)) });
  await seedUser(t.s, 'limits.admin', { roles: ['admin'] });
});
afterAll(async () => t.close());
afterEach(async () => {
  vi.restoreAllMocks(); // the comparison counters wrap the hasher
  const token = await admin();
  for (const id of policies.splice(0)) {
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${id}`, headers: bearer(token) })).statusCode).toBe(200);
  }
});

/** A fresh administrator's token (the tests move the clock past any session's idle time). */
async function admin(): Promise<string> {
  return (await signIn(t.app, 'limits.admin')).access_token;
}

async function policy(channel: string, rules: Record<string, unknown>, role: string | null = null): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(await admin()), payload: { name: `limits ${channel} ${policies.length} ${role ?? ''}`, channel, role, rules } });
  expect(res.statusCode, res.body).toBe(201);
  policies.push(res.json<{ policy: { id: string } }>().policy.id);
}

function web(username: string, password = STRONG_PASSWORD) {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
}

function mobile(username: string, password = STRONG_PASSWORD, device = DEVICE) {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', payload: { username, password, device_fingerprint: device } });
}

async function counter(userId: number) {
  return t.s.database.db.selectFrom('login_attempts').select(['failed_count', 'pending']).where('subject_key', '=', `u:${userId}`).executeTakeFirstOrThrow();
}

function validate(app: App, token: string, device?: string) {
  const url = device ? '/api/v1/auth/validate/mobile' : '/api/v1/auth/validate';
  return app.inject({ method: 'POST', url, headers: { ...bearer(token), ...(device ? { 'x-device-fingerprint': device } : {}) } });
}

describe('failed attempts and lockout per channel', () => {
  it('threat: guessing on several channels adds up: 2 wrong on the web and 1 on mobile lock the account at mobile\'s limit of 3, for mobile\'s 30 minutes, on every channel', async () => {
    await policy('mobile', { max_failed_attempts: 3, lockout_minutes: 30 });
    const user = await seedUser(t.s, 'limits.spread');
    expectError(await web('limits.spread', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expectError(await web('limits.spread', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expectLocked(await mobile('limits.spread', WRONG_PASSWORD), 30 * 60);
    expectLocked(await web('limits.spread'), 30 * 60); // the lock is the account's
    expect(await auditTotal(t.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(3);
    t.clock.advance(30 * MINUTE);
    const after = await mobile('limits.spread');
    expect(after.statusCode, after.body).toBe(200);
  });

  it('the web keeps SPEC\'s 5 attempts and 15 minutes where no policy says otherwise', async () => {
    await policy('mobile', { max_failed_attempts: 3, lockout_minutes: 30 });
    await seedUser(t.s, 'limits.web');
    for (let i = 0; i < 4; i++) expectError(await web('limits.web', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expectLocked(await web('limits.web', WRONG_PASSWORD), 15 * 60);
    t.clock.advance(15 * MINUTE);
  });

  it('threat: telling accounts from made-up names by when they lock: an unknown name locks on mobile after exactly 3, with the same answer', async () => {
    await policy('mobile', { max_failed_attempts: 3, lockout_minutes: 30 });
    await seedUser(t.s, 'limits.known');
    const known = [], unknown = [];
    for (let i = 0; i < 3; i++) {
      known.push(await mobile('limits.known', WRONG_PASSWORD));
      unknown.push(await mobile('limits.nobody', WRONG_PASSWORD));
    }
    for (const [i, r] of known.entries()) {
      if (i < 2) expectError(r, 401, 'INVALID_CREDENTIALS');
      else expectLocked(r, 30 * 60);
      expect(unknown[i]!.statusCode).toBe(r.statusCode);
      expect(answerWithoutRequestId(unknown[i]!)).toEqual(answerWithoutRequestId(r));
    }
    t.clock.advance(30 * MINUTE);
  });

  it('a counter counts for the longest window it was counted in: the clean-up keeps mobile\'s 60-minute failures after 20 minutes, and a web failure then reaches mobile\'s limit: mobile answers locked until they age out, the web still has its 5', async () => {
    await policy('mobile', { max_failed_attempts: 3, lockout_minutes: 60 });
    const user = await seedUser(t.s, 'limits.window');
    expectError(await mobile('limits.window', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expectError(await mobile('limits.window', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    t.clock.advance(20 * MINUTE); // past the default 15-minute window
    await t.scheduler.runNow('login attempt clean-up');
    expectError(await web('limits.window', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS'); // the 3rd failure: the web allows 5, so no lock
    expectLocked(await mobile('limits.window'), 40 * 60); // the right password too: mobile's 3 are spent until the window ends
    expect(await auditTotal(t.s, user.uuid, 'LOCKED_LOGIN_ATTEMPT')).toBe(1);
    expectError(await web('limits.window', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS'); // the 4th
    expect((await web('limits.window')).statusCode).toBe(200); // a success clears the failures, for every channel
    expect((await mobile('limits.window')).statusCode).toBe(200);
  });

  it('parallel right-password sign-ins on a channel with a lower limit still wait for a slot instead of being answered as locked', async () => {
    await policy('mobile', { max_failed_attempts: 2 });
    await seedUser(t.s, 'limits.service');
    const user = (await t.s.users.findByLogin('limits.service'))!;
    const watch = watchComparisons(t.s.hasher);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => mobile('limits.service', STRONG_PASSWORD, `limits-svc-${i}`)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(watch.started).toHaveLength(6); // each compared once, none refused as locked
    // Nothing left reserved or counted: two wrong mobile sign-ins now lock on the 2nd, as the limit says.
    expect(await counter(user.id)).toEqual({ failed_count: 0, pending: 0 });
    expectError(await mobile('limits.service', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expectLocked(await mobile('limits.service', WRONG_PASSWORD), 15 * 60);
    t.clock.advance(15 * MINUTE);
  });

  it('threat: a parallel burst of 20 wrong passwords on a channel allowing 3 compares 3, audits 3 failures and one lock for the channel\'s 30 minutes, and leaves nothing pending', async () => {
    await policy('mobile', { max_failed_attempts: 3, lockout_minutes: 30 });
    const user = await seedUser(t.s, 'limits.burst');
    const watch = watchComparisons(t.s.hasher);
    const results = await Promise.all(Array.from({ length: 20 }, () => mobile('limits.burst', WRONG_PASSWORD)));
    expect(watch.started).toHaveLength(3);
    expect(results.filter((r) => r.statusCode === 401)).toHaveLength(2);
    for (const r of results.filter((x) => x.statusCode !== 401)) expect(['ACCOUNT_LOCKED', 'RATE_LIMITED']).toContain(r.json().error_code);
    expect(await auditTotal(t.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(3);
    expect(await auditTotal(t.s, user.uuid, 'ACCOUNT_LOCKED')).toBe(1);
    const row = await t.s.database.db.selectFrom('login_attempts').select(['pending', 'locked_until']).where('subject_key', '=', `u:${user.id}`).executeTakeFirstOrThrow();
    expect(row.pending).toBe(0);
    expect(new Date(row.locked_until!).getTime()).toBe(t.clock.now() + 30 * MINUTE);
    t.clock.advance(30 * MINUTE);
  });

  it('threat: a lax role policy cannot unlock more guesses: attempt limits on a policy with a role are 422 VALIDATION_ERROR naming the field', async () => {
    for (const rules of [{ max_failed_attempts: 50 }, { lockout_minutes: 1 }]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(await admin()), payload: { name: 'lax staff', channel: 'web', role: 'staff', rules } });
      expectError(res, 422, 'VALIDATION_ERROR');
      expect(JSON.stringify(res.json().details)).toContain(`rules.${Object.keys(rules)[0]}`);
    }
    for (const rules of [{ max_failed_attempts: 0 }, { lockout_minutes: 1441 }, { session_inactivity_minutes: 2.5 }, { max_concurrent_sessions: -1 }]) {
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(await admin()), payload: { name: 'bad limits', channel: 'web', rules } }), 422, 'VALIDATION_ERROR');
    }
  });
});

describe('sessions per channel', () => {
  it('a mobile session idle past the channel\'s 5 minutes is 401 SESSION_EXPIRED; a web session idle as long lives on (SESSION_INACTIVITY_MINUTES, 15)', async () => {
    await policy('mobile', { session_inactivity_minutes: 5 });
    await seedUser(t.s, 'limits.idle');
    const phone = (await mobile('limits.idle')).json<{ access_token: string }>().access_token;
    const desk = (await web('limits.idle')).json<{ access_token: string }>().access_token;
    t.clock.advance(4 * MINUTE);
    expect((await validate(t.app, phone, DEVICE)).statusCode).toBe(200); // activity resets the timer
    t.clock.advance(5 * MINUTE + 1000);
    expectError(await validate(t.app, phone, DEVICE), 401, 'SESSION_EXPIRED');
    expect((await validate(t.app, desk)).statusCode).toBe(200);
    const row = await t.s.database.db.selectFrom('sessions').select(['idle_timeout_sec', 'end_reason']).where('channel', '=', 'mobile').where('user_id', '=', (await t.s.users.findByLogin('limits.idle'))!.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ idle_timeout_sec: 300, end_reason: 'inactivity' });
  });

  it('a parallel burst of 6 mobile sign-ins with max_concurrent_sessions 1 leaves exactly one mobile session open, ends the other 5 as concurrency_limit, and keeps the web session', async () => {
    await policy('mobile', { max_concurrent_sessions: 1 });
    const user = await seedUser(t.s, 'limits.burstphone');
    expect((await web('limits.burstphone')).statusCode).toBe(200);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => mobile('limits.burstphone', STRONG_PASSWORD, `limits-burst-${i}`)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    const rows = await t.s.database.db.selectFrom('sessions').select(['channel', 'is_active', 'end_reason']).where('user_id', '=', user.id).execute();
    expect(rows.filter((r) => r.channel === 'mobile' && r.is_active)).toHaveLength(1);
    expect(rows.filter((r) => r.channel === 'mobile' && !r.is_active).map((r) => r.end_reason)).toEqual(Array(5).fill('concurrency_limit'));
    expect(rows.filter((r) => r.channel === 'web' && r.is_active)).toHaveLength(1);
  });

  it('one phone at a time: with max_concurrent_sessions 1 on mobile, a second mobile sign-in ends the first (401 SESSION_INVALID) and leaves the web session', async () => {
    await policy('mobile', { max_concurrent_sessions: 1 });
    await seedUser(t.s, 'limits.onephone');
    const desk = (await web('limits.onephone')).json<{ access_token: string }>().access_token;
    const first = (await mobile('limits.onephone', STRONG_PASSWORD, 'limits-phone-A')).json<{ access_token: string }>().access_token;
    const second = (await mobile('limits.onephone', STRONG_PASSWORD, 'limits-phone-B')).json<{ access_token: string }>().access_token;
    expectError(await validate(t.app, first, 'limits-phone-A'), 401, 'SESSION_INVALID');
    expect((await validate(t.app, second, 'limits-phone-B')).statusCode).toBe(200);
    expect((await validate(t.app, desk)).statusCode).toBe(200);
  });

  it('a role policy narrows the channel\'s: agents-only limits apply to agents, not to other mobile users', async () => {
    await seedUser(t.s, 'limits.agent', { roles: ['agent'] });
    await seedUser(t.s, 'limits.customer');
    await policy('mobile', { session_inactivity_minutes: 2 }, 'agent');
    const agent = (await mobile('limits.agent')).json<{ access_token: string }>().access_token;
    const customer = (await mobile('limits.customer')).json<{ access_token: string }>().access_token;
    t.clock.advance(3 * MINUTE);
    expectError(await validate(t.app, agent, DEVICE), 401, 'SESSION_EXPIRED');
    expect((await validate(t.app, customer, DEVICE)).statusCode).toBe(200);
  });
});

describe('second factors per channel (second_factor_methods)', () => {
  const activate = (user: { id: number; uuid: string; username: string }, method: 'totp' | 'email') =>
    t.s.database.db.transaction().execute((trx) => t.s.factors.activate(trx, user, method, new Date(t.clock.now())));

  it('a user with no factor is asked to enrol only what the channel accepts: mobile offers totp where the web offers email too, and the set-up token refuses email (400 MFA_METHOD_UNAVAILABLE)', async () => {
    await policy('mobile', { second_factor_methods: ['totp'] });
    await policy('web', { require_second_factor: true }, 'agent');
    await seedUser(t.s, 'factors.new', { email: 'factors.new@bank.example', roles: ['agent'] });
    const onWeb = expectError(await web('factors.new'), 403, 'MFA_SETUP_INCOMPLETE').details as { setup_methods: string[] };
    expect(onWeb.setup_methods).toContain('email');
    const onMobile = expectError(await mobile('factors.new'), 403, 'MFA_SETUP_INCOMPLETE').details as { setup_methods: string[]; two_factor_token: string };
    expect(onMobile.setup_methods).toEqual(['totp']);
    const device = { 'x-device-fingerprint': DEVICE };
    const email = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/otp/setup', headers: device, payload: { method: 'email', two_factor_token: onMobile.two_factor_token } });
    expectError(email, 400, 'MFA_METHOD_UNAVAILABLE');
    const totp = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/setup', headers: device, payload: { two_factor_token: onMobile.two_factor_token } });
    expect(totp.statusCode, totp.body).toBe(200);
  });

  it('threat: enrolling a new factor with the password alone: a user who holds only email codes is refused on a totp-only channel (403 POLICY_RESTRICTED, rule factor, audited), never offered a set-up; the web still asks for the email code', async () => {
    await policy('mobile', { second_factor_methods: ['totp'] });
    const user = await seedUser(t.s, 'factors.email', { email: 'factors.email@bank.example' });
    await activate(user, 'email');
    const refused = await mobile('factors.email');
    expectError(refused, 403, 'POLICY_RESTRICTED');
    expect(withoutRequestId(refused.json().details)).toEqual({ rule: 'factor' });
    const audits = (await t.s.audit.query({ userId: user.uuid, eventType: 'POLICY_VIOLATION', limit: 10, offset: 0 })).entries;
    expect(audits.map((a) => (a.details as { rule: string }).rule)).toEqual(['factor']);
    const onWeb = expectError(await web('factors.email'), 401, '2FA_REQUIRED').details as { methods: string[] };
    expect(onWeb.methods).toEqual(['email']);
  });

  it('a user holding both is offered only the accepted one, and cannot ask the mobile challenge for an email code', async () => {
    await policy('mobile', { second_factor_methods: ['totp'] });
    const user = await seedUser(t.s, 'factors.both', { email: 'factors.both@bank.example' });
    await activate(user, 'totp');
    await activate(user, 'email');
    const challenge = expectError(await mobile('factors.both'), 401, '2FA_REQUIRED').details as { methods: string[]; two_factor_token: string };
    expect(challenge.methods).toEqual(['totp']);
    const ask = await t.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/request', headers: { 'x-device-fingerprint': DEVICE }, payload: { method: 'email', two_factor_token: challenge.two_factor_token } });
    expectError(ask, 400, 'MFA_METHOD_UNAVAILABLE');
  });

  it('policies only narrow: a role policy\'s list intersects the channel\'s', async () => {
    await policy('mobile', { second_factor_methods: ['totp', 'sms'] });
    await policy('mobile', { second_factor_methods: ['totp', 'email'] }, 'agent');
    expect(t.s.accessPolicy.factorMethods('mobile', ['agent'])).toEqual(['totp']);
    expect(t.s.accessPolicy.factorMethods('mobile', ['customer'])).toEqual(['totp', 'sms']);
    expect(t.s.accessPolicy.factorMethods('web', ['agent'])).toBeNull();
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(await admin()), payload: { name: 'bad factors', channel: 'web', rules: { second_factor_methods: ['totp', 'totp'] } } }), 422, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(await admin()), payload: { name: 'bad factors', channel: 'web', rules: { second_factor_methods: ['carrier_pigeon'] } } }), 422, 'VALIDATION_ERROR');
  });
});

describe('operator mistakes', () => {
  it('a geofence on the web or USSD channel, which report no location and would refuse everyone, is 422 VALIDATION_ERROR naming rules.geofences', async () => {
    for (const channel of ['web', 'ussd']) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(await admin()), payload: { name: `fenced ${channel}`, channel, rules: { geofences: [{ type: 'circle', lat: -1.28, lon: 36.81, radius_m: 500 }] } } });
      expectError(res, 422, 'VALIDATION_ERROR');
      expect(JSON.stringify(res.json().details)).toContain('rules.geofences');
    }
    await policy('mobile', { geofences: [{ type: 'circle', lat: -1.28, lon: 36.81, radius_m: 500 }] });
  });
});
