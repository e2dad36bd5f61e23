/**
 * Rate limits on the authentication routes (issue 10, section 3): per client network and per
 * account, per route group, counted in the database (so every node shares them), with
 * RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset on every answer and 429 RATE_LIMITED
 * with Retry-After past a limit. Threats: guessing one account's password from many addresses,
 * a parallel burst on one account, flooding the recovery and token routes, a USSD gateway
 * relaying a flood, guessing second-factor codes across challenges. Work done is counted (audit
 * rows, lockout counters, sessions), not only statuses. The clock is frozen 10 s into a minute.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { watchComparisons } from '../harness/comparisons.js';
import { auditTotal, expectError, login, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

type Res = Awaited<ReturnType<App['inject']>>;
const MINUTE = 60_000;
const GATEWAY_KEY = 'ussd-a-key-0123456789abcdef0123456789abcdef';
const OTHER_GATEWAY_KEY = 'ussd-b-key-fedcba9876543210fedcba9876543210';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      RATE_LIMIT_SIGNIN_ACCOUNT: '3/1m',
      RATE_LIMIT_RECOVERY_IP: '2/1m',
      RATE_LIMIT_TOKEN_IP: '2/1m',
      RATE_LIMIT_USSD_IP: '3/1m',
      RATE_LIMIT_USSD_ACCOUNT: '2/1m',
      RATE_LIMIT_SECOND_FACTOR_ACCOUNT: '2/1m',
      USSD_GATEWAY_KEYS: `ussd-a:${GATEWAY_KEY},ussd-b:${OTHER_GATEWAY_KEY}`,
    },
    clock: new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 10)),
  });
});
afterAll(async () => t.close());

/** Each test starts 10 s into a fresh minute: every window has 50 s left. */
function nextMinute(): void {
  t.clock.set((Math.floor(t.clock.now() / MINUTE) + 1) * MINUTE + 10_000);
}

function from(remoteAddress: string, username: string, password = STRONG_PASSWORD): Promise<Res> {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password }, remoteAddress });
}

function headersOf(res: Res): { limit: string; remaining: string; reset: string } {
  return { limit: String(res.headers['ratelimit-limit']), remaining: String(res.headers['ratelimit-remaining']), reset: String(res.headers['ratelimit-reset']) };
}

function expectRateLimited(res: Res, retryAfter: number, limit: number): void {
  const body = expectError(res, 429, 'RATE_LIMITED');
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(withoutRequestId(body.details)).toEqual({ retry_after_seconds: retryAfter });
  expect(headersOf(res)).toEqual({ limit: String(limit), remaining: '0', reset: String(retryAfter) });
}

describe('sign-in: per account and per client network', () => {
  it('every answer carries RateLimit-* of the tightest bucket (the account\'s 3 a minute, not the address\'s 1000), errors included', async () => {
    nextMinute();
    await seedUser(t.s, 'headers.user');
    const ok = await from('10.20.0.1', 'headers.user');
    expect(ok.statusCode, ok.body).toBe(200);
    expect(headersOf(ok)).toEqual({ limit: '3', remaining: '2', reset: '50' });
    t.clock.advance(20_000);
    const wrong = await from('10.20.0.1', 'headers.user', WRONG_PASSWORD);
    expectError(wrong, 401, 'INVALID_CREDENTIALS');
    expect(headersOf(wrong)).toEqual({ limit: '3', remaining: '1', reset: '30' });
  });

  it('threat: guessing one account\'s password from many addresses: the 4th try of a minute is 429 RATE_LIMITED before any comparison, whatever the case and spaces of the name; other accounts and the next minute are unaffected', async () => {
    nextMinute();
    const user = await seedUser(t.s, 'spray.target');
    for (const [i, name] of ['spray.target', 'SPRAY.Target', ' spray.target '].entries()) {
      expectError(await from(`10.21.0.${i + 1}`, name, WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    }
    const watch = watchComparisons(t.s.hasher);
    for (let i = 10; i < 14; i++) expectRateLimited(await from(`10.21.0.${i}`, 'spray.target', WRONG_PASSWORD), 50, 3);
    expect(await auditTotal(t.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(3); // nothing compared past the limit
    expectRateLimited(await from('10.21.0.20', 'spray.target'), 50, 3); // the right password too: nothing is checked
    expect(watch.started).toHaveLength(0);
    vi.restoreAllMocks();

    await seedUser(t.s, 'spray.bystander');
    expect((await from('10.21.0.1', 'spray.bystander')).statusCode).toBe(200);
    nextMinute();
    expect((await from('10.21.0.30', 'spray.target')).statusCode).toBe(200);
  });

  it('threat: a parallel burst of 12 right-password sign-ins on one account opens exactly 3 sessions; the other 9 are 429 RATE_LIMITED', async () => {
    nextMinute();
    const user = await seedUser(t.s, 'burst.account');
    const watch = watchComparisons(t.s.hasher);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => from(`10.22.${i}.1`, 'burst.account')));
    expect(watch.started).toHaveLength(3); // refused before bcrypt
    vi.restoreAllMocks();
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429, 429, 429, 429]);
    for (const r of results.filter((x) => x.statusCode === 429)) expectError(r, 429, 'RATE_LIMITED');
    expect(await auditTotal(t.s, user.uuid, 'USER_LOGIN')).toBe(3);
    expect(await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', user.id).execute()).toHaveLength(3);
    const counted = await t.s.database.db.selectFrom('rate_limits').select(({ fn }) => fn.sum<number>('count').as('n')).where('key', 'like', 'signin:account:%').where('window_start', '=', new Date(Math.floor(t.clock.now() / MINUTE) * MINUTE)).executeTakeFirstOrThrow();
    expect(Number(counted.n)).toBe(12); // every request of the burst counted once, refused ones included
  });

  it('the mobile sign-in counts in the same group: its answer shows the per-account bucket; SIGNIN_RATE_LIMIT_PER_MINUTE still sets the per-address limit (its refusal: lockout-and-rate-limit.test.ts)', async () => {
    nextMinute();
    await seedUser(t.s, 'mobile.rate');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', payload: { username: 'mobile.rate', password: STRONG_PASSWORD, device_fingerprint: 'rate-device-0001' }, remoteAddress: '10.23.0.1' });
    expect(res.statusCode, res.body).toBe(200);
    expect(headersOf(res)).toEqual({ limit: '3', remaining: '2', reset: '50' });
    expect(t.s.config.rateLimits.signin.ip).toEqual({ limit: 1000, windowSec: 60 });
  });
});

describe('recovery and token routes', () => {
  it('threat: flooding reset/password with made-up tokens: the 3rd of a minute from one address is 429 RATE_LIMITED; sign-in from that address still works', async () => {
    nextMinute();
    const reset = () => t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/password', payload: { reset_token: 'not-a-token', new_password: 'Whatever#Passw0rd9' }, remoteAddress: '10.30.0.1' });
    const first = await reset();
    expectError(first, 401, 'TOKEN_INVALID');
    expect(headersOf(first)).toEqual({ limit: '2', remaining: '1', reset: '50' });
    expectError(await reset(), 401, 'TOKEN_INVALID');
    expectRateLimited(await reset(), 50, 2);
    await seedUser(t.s, 'recovery.bystander');
    expect((await from('10.30.0.1', 'recovery.bystander')).statusCode).toBe(200);
  });

  it('threat: flooding refresh: the 3rd of a minute from one address is 429 RATE_LIMITED', async () => {
    nextMinute();
    const refresh = () => t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: 'made-up' }, remoteAddress: '10.31.0.1' });
    expectError(await refresh(), 401, 'TOKEN_INVALID');
    expectError(await refresh(), 401, 'TOKEN_INVALID');
    expectRateLimited(await refresh(), 50, 2);
  });

  it('validate is not rate limited (resource servers call it on every request; a forged token costs one signature check): no RateLimit-* headers', async () => {
    nextMinute();
    await seedUser(t.s, 'validate.rate');
    const { access_token } = await signIn(t.app, 'validate.rate');
    for (let i = 0; i < 4; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: { authorization: `Bearer ${access_token}` }, remoteAddress: '10.32.0.1' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('USSD: per gateway and per subscriber', () => {
  const ussd = (phone: string, key = GATEWAY_KEY) =>
    t.app.inject({ method: 'POST', url: '/api/v1/auth/login/ussd', headers: { 'x-gateway-key': key }, payload: { phone_number: phone, pin: '4826' } });

  it('threat: a gateway relaying a PIN-guessing flood: the 3rd try on one subscriber is 429 RATE_LIMITED and not compared; the gateway\'s 4th call of the minute is refused for any subscriber; another gateway has its own budget', async () => {
    nextMinute();
    const user = await seedUser(t.s, 'ussd.rate', { phone: '+254700200001' });
    const watch = watchComparisons(t.s.hasher);
    expectError(await ussd('+254700200001'), 401, 'INVALID_CREDENTIALS');
    expectError(await ussd('+254700200001'), 401, 'INVALID_CREDENTIALS');
    expectRateLimited(await ussd('+254700200001'), 50, 2); // the subscriber's 2 a minute
    expect(await auditTotal(t.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(2);
    expect(watch.started).toHaveLength(2);
    vi.restoreAllMocks();
    expectRateLimited(await ussd('+254700200002'), 50, 3); // the gateway's 3 a minute: a fresh number does not help
    expectError(await ussd('+254700200003', OTHER_GATEWAY_KEY), 401, 'INVALID_CREDENTIALS');
  });

  it('threat: the same flood in one parallel burst: of 10 parallel tries on one subscriber, 2 are compared and 8 are 429 RATE_LIMITED', async () => {
    nextMinute();
    const user = await seedUser(t.s, 'ussd.burst', { phone: '+254700200011' });
    const watch = watchComparisons(t.s.hasher);
    const all = await Promise.all(Array.from({ length: 10 }, () => ussd('+254700200011')));
    vi.restoreAllMocks();
    expect(all.filter((r) => r.statusCode === 401 && r.json().error_code === 'INVALID_CREDENTIALS')).toHaveLength(2);
    expect(all.filter((r) => r.statusCode === 429 && r.json().error_code === 'RATE_LIMITED')).toHaveLength(8);
    expect(watch.started).toHaveLength(2);
    expect(await auditTotal(t.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(2);
  });

  it('a call without the gateway key is 401 GATEWAY_UNAUTHORIZED before anything is counted', async () => {
    nextMinute();
    for (let i = 0; i < 5; i++) expectError(await ussd('+254700200009', 'wrong-key-0123456789abcdef0123456789ab'), 401, 'GATEWAY_UNAUTHORIZED');
    expectError(await ussd('+254700200009'), 401, 'INVALID_CREDENTIALS');
  });
});

describe('second factor: per user across challenges', () => {
  it('threat: guessing TOTP codes by starting new challenges: the user\'s 3rd code of a minute is 429 RATE_LIMITED and not checked, in a fresh challenge too', async () => {
    const user = await seedUser(t.s, 'factor.rate');
    await enrolTotp(t.app, t.clock, (await signIn(t.app, 'factor.rate')).access_token);
    nextMinute(); // enrolment's code check counted in the last window
    const challenge = async () => (expectError(await login(t.app, 'factor.rate'), 401, '2FA_REQUIRED').details as { two_factor_token: string }).two_factor_token;
    const verify = (token: string) => t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify-login', payload: { two_factor_token: token, code: '000000' } });
    const first = await challenge();
    expectError(await verify(first), 401, 'TOTP_INVALID');
    expectError(await verify(first), 401, 'TOTP_INVALID');
    expectRateLimited(await verify(first), 50, 2);
    expectRateLimited(await verify(await challenge()), 50, 2);
    expect(await auditTotal(t.s, user.uuid, 'MFA_FAILED')).toBe(2);
  });
});

describe('operations', () => {
  it('the clean-up job drops the windows that are over and keeps the current ones', async () => {
    nextMinute();
    await seedUser(t.s, 'cleanup.rate');
    await from('10.40.0.1', 'cleanup.rate');
    t.clock.advance(MINUTE);
    await from('10.40.0.1', 'cleanup.rate');
    await t.scheduler.runNow('rate-limit window clean-up');
    const rows = await t.s.database.db.selectFrom('rate_limits').select(['key', 'window_start', 'window_end', 'count']).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(new Date(r.window_end).getTime()).toBeGreaterThan(t.clock.now());
    // The current minute's sign-in of cleanup.rate is kept, counted once in its account bucket.
    const current = rows.filter((r) => r.key.startsWith('signin:account:') && new Date(r.window_start).getTime() === Math.floor(t.clock.now() / MINUTE) * MINUTE);
    expect(current.map((r) => Number(r.count))).toEqual([1]);
  });

  it('the OpenAPI document states each limited route\'s group and defaults', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, { post?: { description?: string } }> }>();
    expect(doc.paths['/api/v1/auth/login']!.post!.description).toContain('Rate limit (group `signin`');
    expect(doc.paths['/api/v1/auth/login']!.post!.description).toContain('1000 per 1 min per client network, 3 per 1 min per account');
    expect(doc.paths['/api/v1/auth/login/ussd']!.post!.description).toContain('per gateway');
    expect(doc.paths['/api/v1/auth/validate']!.post!.description).not.toContain('Rate limit');
    expect(Object.keys((doc.paths['/api/v1/auth/reset/password']!.post as { responses: object }).responses)).toContain('429');
    // Push approval: the asking is a second-factor call; the waiting page's polls and the phone's answer count apart (test/http/push-approval-limits.test.ts).
    const group = (path: string) => /Rate limit \(group `([a-z_]+)`/.exec(doc.paths[path]!.post!.description ?? '')?.[1];
    expect(['/api/v1/auth/push-approval/request', '/api/v1/auth/push-approval/step-up/request'].map(group)).toEqual(['second_factor', 'second_factor']);
    expect(['/api/v1/auth/push-approval/complete', '/api/v1/auth/push-approval/step-up/complete'].map(group)).toEqual(['push_approval_wait', 'push_approval_wait']);
    expect(group('/api/v1/push-approval/requests/{id}/answer')).toBe('push_approval_answer');
  });
});
