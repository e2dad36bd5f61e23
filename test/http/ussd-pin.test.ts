/**
 * PINs and USSD sign-in (issue 10, section 1). Threats: a caller that is not the bank's USSD
 * gateway (no key, a wrong one, a removed gateway's), PIN guessing (its own counter and lockout,
 * a parallel burst), telling an unknown phone number from a wrong PIN, weak PINs, a reset token
 * used twice, hostile phone numbers, and a USSD channel the bank has closed. Statuses and
 * error codes are exact; bcrypt comparisons are counted, not timed; the clock is frozen.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { watchComparisons } from '../harness/comparisons.js';
import { createTestApp, testSecrets, type TestApp } from '../harness/app.js';
import { admin, auditTotal, bearer, expectError, expectLocked, login, seedUser, signIn, STRONG_PASSWORD, WRONG_PASSWORD } from '../harness/fixtures.js';
import { answerWithoutRequestId, withoutRequestId } from '../harness/request-id.js';

type Res = Awaited<ReturnType<App['inject']>>;

const KEY_A = 'ussd-a-key-0123456789abcdef0123456789abcdef';
const KEY_B = 'ussd-b-key-fedcba9876543210fedcba9876543210';
const GATEWAYS = `ussd-a:${KEY_A},ussd-b:${KEY_B}`;
const MINUTE = 60_000;

/** PINs that break no rule for the phone numbers below (+2547001000NN). */
const PIN = '2580';
const OTHER_PIN = '7391';
const WRONG_PIN = '4826';

afterEach(() => vi.restoreAllMocks());

/** `key`: the gateway key sent in X-Gateway-Key; null sends none. */
const gatewayHeaders = (key: string | null): Record<string, string> => (key === null ? {} : { 'x-gateway-key': key });

function ussdLogin(app: App, phone: string, pin: string, key: string | null = KEY_A, extra: Record<string, unknown> = {}): Promise<Res> {
  return app.inject({ method: 'POST', url: '/api/v1/auth/login/ussd', headers: gatewayHeaders(key), payload: { phone_number: phone, pin, ...extra } });
}

function ussdChange(app: App, phone: string, current: string, next: string, key: string | null = KEY_A): Promise<Res> {
  return app.inject({ method: 'POST', url: '/api/v1/auth/password/ussd', headers: gatewayHeaders(key), payload: { phone_number: phone, current_pin: current, new_pin: next } });
}

function setPin(app: App, token: string, body: Record<string, unknown>): Promise<Res> {
  return app.inject({ method: 'POST', url: '/api/v1/auth/pin', headers: bearer(token), payload: body });
}

function resetPin(app: App, resetToken: string, pin: string): Promise<Res> {
  return app.inject({ method: 'POST', url: '/api/v1/auth/reset/pin', payload: { reset_token: resetToken, new_pin: pin } });
}

function ok(res: Res): Res {
  expect(res.statusCode, res.body).toBe(200);
  return res;
}

/** A customer with a phone number who set `pin` through the signed-in route with the password. */
async function subscriber(t: TestApp, username: string, phone: string, pin: string = PIN) {
  const user = await seedUser(t.s, username, { phone });
  const { access_token } = await signIn(t.app, username);
  expect(ok(await setPin(t.app, access_token, { current_password: STRONG_PASSWORD, new_pin: pin })).json()).toEqual({ status: 'success', message: 'PIN set.' });
  return { user, token: access_token };
}

function rulesOf(res: Res): string[] {
  const body = expectError(res, 422, 'PIN_POLICY_VIOLATION');
  const violations = (body.details as { violations: Array<{ rule: string; message: string }> }).violations;
  for (const v of violations) expect(typeof v.message).toBe('string');
  return violations.map((v) => v.rule);
}

async function counter(t: TestApp, key: string): Promise<number> {
  const row = await t.s.database.db.selectFrom('login_attempts').select('failed_count').where('subject_key', '=', key).executeTakeFirst();
  return row?.failed_count ?? 0;
}

let t: TestApp;
let adminToken: string;
const secrets = testSecrets();
beforeAll(async () => {
  t = await createTestApp({ env: { USSD_GATEWAY_KEYS: GATEWAYS }, secrets, clock: new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0)) });
  await seedUser(t.s, 'ussd.admin', { roles: ['admin'] });
  adminToken = (await signIn(t.app, 'ussd.admin')).access_token;
});
afterAll(async () => t.close());

describe('the USSD gateway authenticates itself', () => {
  it('no key, a wrong key or a key cut short: 401 GATEWAY_UNAUTHORIZED on both USSD routes, before the body is read, with no lookup and no comparison', async () => {
    await subscriber(t, 'gw.subscriber', '+254700100001');
    const watch = watchComparisons(t.s.hasher);
    const lookup = vi.spyOn(t.s.users, 'findByPhone');
    for (const key of [null, '', 'wrong', KEY_A.slice(0, -1), `${KEY_A}x`, KEY_A.toUpperCase()]) {
      for (const res of [await ussdLogin(t.app, '+254700100001', PIN, key), await ussdChange(t.app, '+254700100001', PIN, OTHER_PIN, key)]) {
        const body = expectError(res, 401, 'GATEWAY_UNAUTHORIZED');
        expect(withoutRequestId(body.details)).toEqual({});
        expect(JSON.stringify(body)).not.toMatch(/gw\.subscriber|254700100001/);
      }
      // A body that does not even parse as the schema says is still refused as the gateway's fault.
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/ussd', headers: gatewayHeaders(key), payload: { nonsense: true } }), 401, 'GATEWAY_UNAUTHORIZED');
    }
    expect(watch.started).toHaveLength(0);
    expect(lookup).not.toHaveBeenCalled();
    ok(await ussdLogin(t.app, '+254700100001', PIN, KEY_A));
    ok(await ussdLogin(t.app, '+254700100001', PIN, KEY_B));
  });

  it('a removed gateway\'s key is refused (401 GATEWAY_UNAUTHORIZED); with USSD_GATEWAY_KEYS unset every call is 503 USSD_NOT_CONFIGURED saying the operator has configured no gateway; no comparison', async () => {
    await subscriber(t, 'gw.removed', '+254700100002');
    // Two more nodes on the same database: gateway b removed from one, no gateway on the other.
    const onlyA = await createTestApp({ env: { USSD_GATEWAY_KEYS: `ussd-a:${KEY_A}` }, database: t.s.database, secrets, clock: t.clock });
    const none = await createTestApp({ database: t.s.database, secrets, clock: t.clock });
    try {
      const watch = watchComparisons(onlyA.s.hasher);
      const watchNone = watchComparisons(none.s.hasher);
      expectError(await ussdLogin(onlyA.app, '+254700100002', PIN, KEY_B), 401, 'GATEWAY_UNAUTHORIZED');
      expectError(await ussdChange(onlyA.app, '+254700100002', PIN, OTHER_PIN, KEY_B), 401, 'GATEWAY_UNAUTHORIZED');
      for (const key of [KEY_A, KEY_B, null]) {
        const body = expectError(await ussdLogin(none.app, '+254700100002', PIN, key), 503, 'USSD_NOT_CONFIGURED');
        expect(body.message).toContain('the operator has not configured any USSD gateway');
      }
      expectError(await ussdChange(none.app, '+254700100002', PIN, OTHER_PIN, KEY_A), 503, 'USSD_NOT_CONFIGURED');
      expect(watch.started.length + watchNone.started.length).toBe(0);
      ok(await ussdLogin(onlyA.app, '+254700100002', PIN, KEY_A)); // the remaining gateway still works
    } finally {
      await none.closeApp();
      await onlyA.closeApp();
    }
  });
});

describe('USSD sign-in', () => {
  it('the right PIN through a gateway: 200, the standard sign-in response, a session on channel ussd naming the gateway, audited', async () => {
    const { user } = await subscriber(t, 'amina.ussd', '+254700100003');
    const res = ok(await ussdLogin(t.app, '+254700100003', PIN, KEY_B, { session_id: 'ATUid_6b2f1c0e4a' }));
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'actions', 'expires_in', 'permissions', 'refresh_token', 'session_id', 'token_type', 'user', 'user_profile']);
    expect(body).toMatchObject({ token_type: 'bearer', user: { id: user.id, uuid: user.uuid, active: true }, user_profile: { username: 'amina.ussd', phone: '+254700100003', channel: 'ussd', mfa_completed: false } });
    expect(res.headers['x-encrypted']).toBeUndefined(); // USSD is not encrypted
    // The access token names its channel too (claim `channel`).
    expect(JSON.parse(Buffer.from((body.access_token as string).split('.')[1]!, 'base64url').toString())).toMatchObject({ channel: 'ussd', session_id: body.session_id });
    const session = await t.s.database.db.selectFrom('sessions').select(['channel', 'user_agent', 'is_active']).where('session_id', '=', body.session_id).executeTakeFirstOrThrow();
    expect(session).toEqual({ channel: 'ussd', user_agent: 'ussd-gateway/ussd-b ussd-session/ATUid_6b2f1c0e4a', is_active: true });
    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'USER_LOGIN', limit: 5, offset: 0 });
    expect(audit.entries.find((e) => e.details.session_id === body.session_id)).toMatchObject({ channel: 'ussd', user_agent: 'ussd-gateway/ussd-b ussd-session/ATUid_6b2f1c0e4a', details: { method: 'pin' } });
    expect(await auditTotal(t.s, user.uuid, 'PIN_SET')).toBe(1);
  });

  it('an unknown phone number, a phone without a PIN and a wrong PIN answer alike: 401 INVALID_CREDENTIALS, one body, one comparison each', async () => {
    await subscriber(t, 'alike.pin', '+254700100004');
    await seedUser(t.s, 'alike.nopin', { phone: '+254700100005' });
    const watch = watchComparisons(t.s.hasher);
    const answers = [
      await ussdLogin(t.app, '+254700100004', WRONG_PIN),
      await ussdLogin(t.app, '+254700100005', WRONG_PIN),
      await ussdLogin(t.app, '+254799999999', WRONG_PIN),
    ];
    for (const res of answers) expectError(res, 401, 'INVALID_CREDENTIALS');
    const alike = (r: Res): string => `${r.statusCode} ${JSON.stringify(answerWithoutRequestId(r))}`; // all but the request's own id
    expect(new Set(answers.map(alike)).size).toBe(1);
    expect(answerWithoutRequestId(answers[0]!)).toEqual({ status_code: 401, error_code: 'INVALID_CREDENTIALS', message: 'The phone number or PIN is incorrect.', details: {} });
    expect(watch.started).toEqual([WRONG_PIN, WRONG_PIN, WRONG_PIN]);
    // The same for a PIN change over USSD.
    const changes = [
      await ussdChange(t.app, '+254700100004', WRONG_PIN, OTHER_PIN),
      await ussdChange(t.app, '+254700100005', WRONG_PIN, OTHER_PIN),
      await ussdChange(t.app, '+254799999999', WRONG_PIN, OTHER_PIN),
    ];
    expect(new Set(changes.map(alike))).toEqual(new Set([alike(answers[0]!)]));
    expect(watch.started).toHaveLength(6);
  });

  it('MAX_LOGIN_ATTEMPTS wrong PINs lock the PIN (429 ACCOUNT_LOCKED with Retry-After), not the password; an administrator\'s unlock or the lock\'s end lifts it', async () => {
    const { user } = await subscriber(t, 'pin.locked', '+254700100006');
    for (let i = 0; i < 4; i++) expectError(await ussdLogin(t.app, '+254700100006', WRONG_PIN), 401, 'INVALID_CREDENTIALS');
    expectLocked(await ussdLogin(t.app, '+254700100006', WRONG_PIN), 15 * 60); // the 5th locks
    expectLocked(await ussdLogin(t.app, '+254700100006', PIN)); // the right PIN too, now
    expectLocked(await ussdChange(t.app, '+254700100006', PIN, OTHER_PIN)); // one counter for both USSD routes
    expect(await auditTotal(t.s, user.uuid, 'ACCOUNT_LOCKED')).toBe(1);
    // The password sign-in is another counter: untouched.
    expect(await counter(t, t.s.attempts.userKey(user.id))).toBe(0);
    ok(await login(t.app, 'pin.locked'));
    t.clock.advance(15 * MINUTE);
    ok(await ussdLogin(t.app, '+254700100006', PIN));
    for (let i = 0; i < 5; i++) await ussdLogin(t.app, '+254700100006', WRONG_PIN);
    expectLocked(await ussdLogin(t.app, '+254700100006', PIN));
    await admin(t.s).unlock(user.uuid, { uuid: null, username: 'test' });
    ok(await ussdLogin(t.app, '+254700100006', PIN));
  });

  it('wrong passwords lock the password sign-in, not the PIN', async () => {
    const { user } = await subscriber(t, 'password.locked', '+254700100007');
    for (let i = 0; i < 4; i++) expectError(await login(t.app, 'password.locked', WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expectLocked(await login(t.app, 'password.locked', WRONG_PASSWORD));
    expectLocked(await login(t.app, 'password.locked'));
    expect(await counter(t, t.s.pins.userKey(user.id))).toBe(0);
    ok(await ussdLogin(t.app, '+254700100007', PIN));
  });

  it('a parallel burst of 20 wrong PINs and the right one: at most MAX_LOGIN_ATTEMPTS comparisons, no 200, the PIN locked', async () => {
    const { user } = await subscriber(t, 'pin.burst', '+254700100008');
    const watch = watchComparisons(t.s.hasher, () => true);
    const wrong = Array.from({ length: 20 }, () => ussdLogin(t.app, '+254700100008', WRONG_PIN));
    await watch.reached(5); // five attempts reserved and comparing, held at the gate
    const right = ussdLogin(t.app, '+254700100008', PIN);
    watch.open();
    const results = [...(await Promise.all(wrong)), await right];
    expect(watch.started).toHaveLength(5);
    expect(watch.started.every((p) => p === WRONG_PIN)).toBe(true);
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(0);
    expect(results.filter((r) => r.statusCode === 401)).toHaveLength(4);
    for (const r of results.filter((x) => x.statusCode !== 401)) {
      // Locked, or turned away at once because the gateway's checks in flight were all taken.
      expect(r.statusCode, r.body).toBe(429);
      expect(['ACCOUNT_LOCKED', 'RATE_LIMITED']).toContain(r.json().error_code);
    }
    // The fifth failure locks (ACCOUNT_LOCKED, audited once); every later ACCOUNT_LOCKED answer
    // is one audited refusal; RATE_LIMITED ones did nothing.
    const lockedAnswers = results.filter((r) => r.statusCode === 429 && r.json().error_code === 'ACCOUNT_LOCKED').length;
    expect(await auditTotal(t.s, user.uuid, 'ACCOUNT_LOCKED')).toBe(1);
    expect(await auditTotal(t.s, user.uuid, 'LOCKED_LOGIN_ATTEMPT')).toBe(lockedAnswers - 1);
    expect(await auditTotal(t.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(5);
    expect(await auditTotal(t.s, user.uuid, 'USER_LOGIN')).toBe(1); // the password sign-in that set the PIN
    expectLocked(await ussdLogin(t.app, '+254700100008', PIN));
    ok(await login(t.app, 'pin.burst'));
  });

  it('threat: made-up phone numbers through one gateway cannot queue unbounded bcrypt: the gateway\'s address has SIGNIN_MAX_IN_FLIGHT_PER_IP (10) checks in flight, the rest 429 RATE_LIMITED before any comparison', async () => {
    const watch = watchComparisons(t.s.hasher, (p) => p === WRONG_PIN);
    const flood = Array.from({ length: 14 }, (_, i) => ussdLogin(t.app, `+25470099${String(i).padStart(4, '0')}`, WRONG_PIN));
    const refused: Res[] = [];
    for (const p of flood) void p.then((r) => refused.push(r));
    await watch.reached(10);
    // The 10 comparisons are held until `open()`: only refusals can answer meanwhile.
    await vi.waitFor(() => expect(refused).toHaveLength(4));
    for (const r of refused) expectError(r, 429, 'RATE_LIMITED');
    expect(watch.started).toHaveLength(10);
    watch.open();
    const results = await Promise.all(flood);
    expect(results.filter((r) => r.statusCode === 401)).toHaveLength(10);
    expect(watch.started).toHaveLength(10);
  });

  it('a disabled subscriber cannot change the PIN over USSD: 403 ACCOUNT_DISABLED, audited as at sign-in, the PIN unchanged', async () => {
    const { user } = await subscriber(t, 'pin.disabled', '+254700100022');
    await t.s.database.db.updateTable('users').set({ is_active: false }).where('id', '=', user.id).execute();
    expectError(await ussdChange(t.app, '+254700100022', PIN, OTHER_PIN), 403, 'ACCOUNT_DISABLED');
    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'FAILED_LOGIN_ATTEMPT', limit: 10, offset: 0 });
    expect(audit.entries.map((e) => e.details)).toEqual([expect.objectContaining({ reason: 'account_disabled' })]);
    expect(await auditTotal(t.s, user.uuid, 'PIN_CHANGED')).toBe(0);
    await t.s.database.db.updateTable('users').set({ is_active: true }).where('id', '=', user.id).execute();
    ok(await ussdLogin(t.app, '+254700100022', PIN)); // the old PIN still signs in
  });

  it('a parallel burst of 20 wrong current PINs on each change route compares at most MAX_LOGIN_ATTEMPTS of them and changes nothing', async () => {
    const { user } = await subscriber(t, 'pin.change.burst', '+254700100021');
    const watch = watchComparisons(t.s.hasher);
    const overUssd = await Promise.all(Array.from({ length: 20 }, () => ussdChange(t.app, '+254700100021', WRONG_PIN, OTHER_PIN)));
    expect(watch.started.filter((p) => p === WRONG_PIN)).toHaveLength(5);
    for (const r of overUssd) expect([401, 429], r.body).toContain(r.statusCode);
    expect(await auditTotal(t.s, user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(5);
    expectLocked(await ussdChange(t.app, '+254700100021', PIN, OTHER_PIN));

    // The signed-in route, for a subscriber of its own (the first one's PIN is locked now).
    const other = await subscriber(t, 'pin.change.burst.app', '+254700100023');
    const signedIn = await Promise.all(Array.from({ length: 20 }, () => setPin(t.app, other.token, { current_pin: WRONG_PIN, new_pin: OTHER_PIN })));
    expect(watch.started.filter((p) => p === WRONG_PIN)).toHaveLength(10);
    for (const r of signedIn) expect([401, 429], r.body).toContain(r.statusCode);
    expect(await auditTotal(t.s, other.user.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(5);
    expectLocked(await setPin(t.app, other.token, { current_pin: PIN, new_pin: OTHER_PIN }));
    expect(await auditTotal(t.s, other.user.uuid, 'PIN_CHANGED')).toBe(0);
    expect(await auditTotal(t.s, user.uuid, 'PIN_CHANGED')).toBe(0);
  });

  it('hostile phone numbers and PINs are 422 VALIDATION_ERROR, never 500, and compare nothing', async () => {
    const watch = watchComparisons(t.s.hasher);
    const phones: unknown[] = ["' OR 1=1 --", "+2547'; DROP TABLE users; --", `+${'1'.repeat(5000)}`, '0712345678', '+254 712 345 678', '+0712345678', '', '+', '+254\u0000712345678', 254712345678, null, ['+254700100001']];
    for (const phone of phones) {
      for (const res of [
        await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/ussd', headers: { 'x-gateway-key': KEY_A }, payload: { phone_number: phone, pin: PIN } }),
        await t.app.inject({ method: 'POST', url: '/api/v1/auth/password/ussd', headers: { 'x-gateway-key': KEY_A }, payload: { phone_number: phone, current_pin: PIN, new_pin: OTHER_PIN } }),
      ]) {
        expect(res.statusCode, `${JSON.stringify(phone).slice(0, 40)}: ${res.body}`).toBe(422);
        expectError(res, 422, 'VALIDATION_ERROR');
      }
    }
    for (const pin of ['25a0', ' 2580', '2580\u0000', 'x'.repeat(10_000), '', 2580]) {
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/ussd', headers: { 'x-gateway-key': KEY_A }, payload: { phone_number: '+254700100001', pin } }), 422, 'VALIDATION_ERROR');
    }
    expectError(await ussdLogin(t.app, '+254700100001', PIN, KEY_A, { session_id: 'a b' }), 422, 'VALIDATION_ERROR');
    expectError(await ussdLogin(t.app, '+254700100001', PIN, KEY_A, { channel: 'web' }), 422, 'VALIDATION_ERROR');
    expect(watch.started).toHaveLength(0);
  });

  it('an access policy closing the ussd channel refuses the right PIN with 403 POLICY_RESTRICTED {rule: channel}, on sign-in and PIN change', async () => {
    const { user } = await subscriber(t, 'closed.channel', '+254700100009');
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(adminToken), payload: { name: 'ussd closed', channel: 'ussd', rules: { allow_channel: false } } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ policy: { id: string } }>().policy.id;
    try {
      const refused = expectError(await ussdLogin(t.app, '+254700100009', PIN), 403, 'POLICY_RESTRICTED');
      expect(withoutRequestId(refused.details)).toEqual({ rule: 'channel' });
      expect(withoutRequestId(expectError(await ussdChange(t.app, '+254700100009', PIN, OTHER_PIN), 403, 'POLICY_RESTRICTED').details)).toEqual({ rule: 'channel' });
      expectError(await ussdLogin(t.app, '+254700100009', WRONG_PIN), 401, 'INVALID_CREDENTIALS'); // the PIN first: the policy tells nothing to a guesser
      expect(await auditTotal(t.s, user.uuid, 'POLICY_VIOLATION')).toBe(2);
      expect(await auditTotal(t.s, user.uuid, 'USER_LOGIN')).toBe(1); // the password sign-in that set the PIN
      ok(await login(t.app, 'closed.channel')); // the web channel stays open
    } finally {
      ok(await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${id}`, headers: bearer(adminToken) }));
    }
    ok(await ussdLogin(t.app, '+254700100009', PIN));
    ok(await ussdLogin(t.app, '+254700100009', PIN)); // the PIN was not changed while the channel was closed
  });

  it('a phone number names one subscriber: a second account with it is 409 USER_EXISTS naming the phone', async () => {
    await seedUser(t.s, 'phone.owner', { phone: '+254700100010' });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(adminToken), payload: { username: 'phone.twin', phone: '+254700100010', roles: ['customer'] } });
    expect(withoutRequestId(expectError(res, 409, 'USER_EXISTS').details)).toEqual({ fields: ['phone'] });
  });
});

describe('PIN rules', () => {
  let token: string;
  let userId: number;
  beforeAll(async () => {
    const s = await subscriber(t, 'rules.subscriber', '+254712345678', '2580');
    token = s.token;
    userId = s.user.id;
  });

  it.each([
    ['digits_only', '25a0'], ['digits_only', '25 80'], ['min_length', '258'], ['max_length', '2580193'],
    ['repeated_digits', '1111'], ['repeated_digits', '000000'],
    ['sequential_digits', '1234'], ['sequential_digits', '9876'], ['sequential_digits', '0123'], ['sequential_digits', '7890'],
    ['contains_phone_digits', '7123'], ['contains_phone_digits', '905678'],
  ])('refuses a new PIN breaking %s with 422 PIN_POLICY_VIOLATION naming it: %j', async (rule, pin) => {
    const before = await t.s.pins.hashOf(userId);
    expect(rulesOf(await setPin(t.app, token, { current_pin: '2580', new_pin: pin }))).toContain(rule);
    expect(rulesOf(await ussdChange(t.app, '+254712345678', '2580', pin))).toContain(rule);
    expect(await t.s.pins.hashOf(userId)).toBe(before); // unchanged
  });

  it('refuses any of the last 4 PINs (rule history), and accepts the 5th-last', async () => {
    const pins = ['3691', '4702', '5813', '6924'];
    let current = '2580';
    for (const next of pins) {
      ok(await setPin(t.app, token, { current_pin: current, new_pin: next }));
      current = next;
    }
    for (const old of pins.slice(0, 3)) expect(rulesOf(await setPin(t.app, token, { current_pin: current, new_pin: old }))).toEqual(['history']);
    expect(rulesOf(await ussdChange(t.app, '+254712345678', current, pins[1]!))).toEqual(['history']);
    ok(await setPin(t.app, token, { current_pin: current, new_pin: '2580' })); // 5 PINs ago
  });
});

describe('setting and changing a PIN signed in', () => {
  it('the first PIN needs the current password: current_pin without one is 409 PIN_NOT_SET; a wrong password is 401 on the password counter', async () => {
    const user = await seedUser(t.s, 'first.pin', { phone: '+254700100011' });
    const { access_token, session_id } = await signIn(t.app, 'first.pin');
    expectError(await setPin(t.app, access_token, { current_pin: PIN, new_pin: OTHER_PIN }), 409, 'PIN_NOT_SET');
    const wrong = expectError(await setPin(t.app, access_token, { current_password: WRONG_PASSWORD, new_pin: PIN }), 401, 'INVALID_CREDENTIALS');
    expect(wrong.message).toBe('The current password is incorrect.');
    expect(await counter(t, t.s.attempts.userKey(user.id))).toBe(1);
    expect(await counter(t, t.s.pins.userKey(user.id))).toBe(0);
    expectError(await ussdLogin(t.app, '+254700100011', PIN), 401, 'INVALID_CREDENTIALS'); // no PIN yet
    expect(ok(await setPin(t.app, access_token, { current_password: STRONG_PASSWORD, new_pin: PIN })).json()).toEqual({ status: 'success', message: 'PIN set.' });
    const ussd = ok(await ussdLogin(t.app, '+254700100011', PIN)).json();
    expect(ok(await setPin(t.app, access_token, { current_password: STRONG_PASSWORD, new_pin: OTHER_PIN })).json()).toEqual({ status: 'success', message: 'PIN changed.' });
    expect(await auditTotal(t.s, user.uuid, 'PIN_SET')).toBe(1);
    expect(await auditTotal(t.s, user.uuid, 'PIN_CHANGED')).toBe(1);
    // The new PIN ended the USSD session the old one opened; the caller's own session stays.
    const sessions = await t.s.database.db.selectFrom('sessions').select(['session_id', 'is_active']).where('user_id', '=', user.id).execute();
    expect(sessions.find((x) => x.session_id === ussd.session_id)?.is_active).toBe(false);
    expect(sessions.find((x) => x.session_id === session_id)?.is_active).toBe(true);
    expectError(await ussdLogin(t.app, '+254700100011', PIN), 401, 'INVALID_CREDENTIALS');
    ok(await ussdLogin(t.app, '+254700100011', OTHER_PIN));
  });

  it('a wrong current PIN is 401 on the PIN counter, the password\'s untouched; the 5th locks the PIN (429 ACCOUNT_LOCKED)', async () => {
    const { user, token } = await subscriber(t, 'change.wrong', '+254700100012');
    const wrong = expectError(await setPin(t.app, token, { current_pin: WRONG_PIN, new_pin: OTHER_PIN }), 401, 'INVALID_CREDENTIALS');
    expect(wrong.message).toBe('The current PIN is incorrect.');
    expect(await counter(t, t.s.pins.userKey(user.id))).toBe(1);
    expect(await counter(t, t.s.attempts.userKey(user.id))).toBe(0);
    for (let i = 0; i < 3; i++) expectError(await setPin(t.app, token, { current_pin: WRONG_PIN, new_pin: OTHER_PIN }), 401, 'INVALID_CREDENTIALS');
    expectLocked(await setPin(t.app, token, { current_pin: WRONG_PIN, new_pin: OTHER_PIN }));
    expectLocked(await ussdLogin(t.app, '+254700100012', PIN));
    ok(await login(t.app, 'change.wrong'));
  });

  it('neither or both current secrets, or an unknown field: 422 VALIDATION_ERROR; no token: 401 TOKEN_MISSING', async () => {
    const { token } = await subscriber(t, 'change.shape', '+254700100013');
    expectError(await setPin(t.app, token, { new_pin: OTHER_PIN }), 422, 'VALIDATION_ERROR');
    expectError(await setPin(t.app, token, { current_pin: PIN, current_password: STRONG_PASSWORD, new_pin: OTHER_PIN }), 422, 'VALIDATION_ERROR');
    expectError(await setPin(t.app, token, { current_pin: PIN, new_pin: OTHER_PIN, pin: '1' }), 422, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/pin', payload: { current_pin: PIN, new_pin: OTHER_PIN } }), 401, 'TOKEN_MISSING');
  });
});

describe('changing the PIN over USSD', () => {
  it('the right current PIN changes it (200, PIN_CHANGED, the USSD sessions end); a wrong one is 401 on the PIN counter', async () => {
    const { user } = await subscriber(t, 'ussd.change', '+254700100014');
    const session = ok(await ussdLogin(t.app, '+254700100014', PIN)).json();
    expectError(await ussdChange(t.app, '+254700100014', WRONG_PIN, OTHER_PIN), 401, 'INVALID_CREDENTIALS');
    expect(await counter(t, t.s.pins.userKey(user.id))).toBe(1);
    expect(ok(await ussdChange(t.app, '+254700100014', PIN, OTHER_PIN)).json()).toEqual({ status: 'success', message: 'PIN changed.' });
    expect(await counter(t, t.s.pins.userKey(user.id))).toBe(0); // a success gives back the failures counted before it
    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'PIN_CHANGED', limit: 1, offset: 0 });
    expect(audit.entries[0]).toMatchObject({ channel: 'ussd', details: { via: 'ussd', ussd_sessions_ended: 1 } });
    expect((await t.s.database.db.selectFrom('sessions').select('is_active').where('session_id', '=', session.session_id).executeTakeFirstOrThrow()).is_active).toBe(false);
    expectError(await ussdLogin(t.app, '+254700100014', PIN), 401, 'INVALID_CREDENTIALS');
    ok(await ussdLogin(t.app, '+254700100014', OTHER_PIN));
  });
});

describe('an administrator\'s PIN reset and POST /api/v1/auth/reset/pin', () => {
  const resetBy = (id: string, token = adminToken) => t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${id}/reset-pin`, headers: bearer(token) });

  it('removes the PIN at once and gives a reset token that sets a new one exactly once', async () => {
    const { user, token } = await subscriber(t, 'reset.pin', '+254700100015');
    for (let i = 0; i < 5; i++) await ussdLogin(t.app, '+254700100015', WRONG_PIN); // locked
    const res = ok(await resetBy(user.uuid));
    const { reset_token: resetToken, expires_in: expiresIn } = res.json<{ reset_token: string; expires_in: number }>();
    expect(expiresIn).toBe(600);
    expect(await auditTotal(t.s, user.uuid, 'PIN_RESET_BY_ADMIN')).toBe(1);
    expectError(await ussdLogin(t.app, '+254700100015', PIN), 401, 'INVALID_CREDENTIALS'); // the old PIN is gone (and the lock with it)
    expectError(await setPin(t.app, token, { current_pin: PIN, new_pin: OTHER_PIN }), 409, 'PIN_NOT_SET');
    expect(rulesOf(await resetPin(t.app, resetToken, '1234'))).toEqual(['sequential_digits']); // a refused PIN does not spend the token
    // Five parallel uses of the token: exactly one sets the PIN.
    const uses = await Promise.all(['3692', '4703', '5814', '6925', OTHER_PIN].map((p) => resetPin(t.app, resetToken, p)));
    expect(uses.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of uses.filter((x) => x.statusCode !== 200)) expectError(r, 401, 'TOKEN_REVOKED');
    expect(uses.find((r) => r.statusCode === 200)!.json()).toEqual({ status: 'success', message: 'PIN set.' });
    const chosen = ['3692', '4703', '5814', '6925', OTHER_PIN][uses.findIndex((r) => r.statusCode === 200)]!;
    ok(await ussdLogin(t.app, '+254700100015', chosen));
    expectError(await resetPin(t.app, resetToken, '8035'), 401, 'TOKEN_REVOKED');
    expect(await auditTotal(t.s, user.uuid, 'PIN_SET')).toBe(2);
  });

  it('a password reset token does not set a PIN, nor a PIN reset token a password: 401 TOKEN_INVALID', async () => {
    const { user } = await subscriber(t, 'reset.cross', '+254700100016');
    const pinToken = ok(await resetBy(user.uuid)).json<{ reset_token: string }>().reset_token;
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/reset/password', payload: { reset_token: pinToken, new_password: 'Hq9#zLt4!mWe7&' } }), 401, 'TOKEN_INVALID');
    const passwordToken = (await t.s.tokens.issue('reset', { user_id: user.uuid, purpose: 'password_change' })).token;
    expectError(await resetPin(t.app, passwordToken, OTHER_PIN), 401, 'TOKEN_INVALID');
    expectError(await resetPin(t.app, 'not.a.token', OTHER_PIN), 401, 'TOKEN_INVALID');
    t.clock.advance(11 * MINUTE);
    expectError(await resetPin(t.app, pinToken, OTHER_PIN), 401, 'TOKEN_EXPIRED');
  });

  it('needs users.update (403 PERMISSION_DENIED) and a user that exists (404 USER_NOT_FOUND)', async () => {
    const { user, token } = await subscriber(t, 'reset.denied', '+254700100017');
    expectError(await resetBy(user.uuid, token), 403, 'PERMISSION_DENIED');
    expectError(await resetBy('00000000-0000-4000-8000-000000000000'), 404, 'USER_NOT_FOUND');
    ok(await ussdLogin(t.app, '+254700100017', PIN)); // still set
  });
});

describe('OpenAPI', () => {
  it('documents each PIN and USSD route with its error codes, strict bodies with examples, bearer only where signed in', async () => {
    type Op = { tags: string[]; description: string; security?: unknown[]; requestBody?: { content: { 'application/json': { schema: { additionalProperties?: boolean; $ref?: string }; example?: unknown; examples?: unknown } } }; responses: Record<string, unknown> };
    const doc = ok(await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, { post: Op }>; components: { schemas: Record<string, { additionalProperties?: boolean }> } }>();
    const routes: Array<[string, boolean, string[]]> = [
      ['/api/v1/auth/login/ussd', false, ['GATEWAY_UNAUTHORIZED', 'USSD_NOT_CONFIGURED', 'INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'RATE_LIMITED', 'POLICY_RESTRICTED']],
      ['/api/v1/auth/password/ussd', false, ['GATEWAY_UNAUTHORIZED', 'INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'PIN_POLICY_VIOLATION', 'POLICY_RESTRICTED']],
      ['/api/v1/auth/pin', true, ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'PIN_NOT_SET', 'PIN_POLICY_VIOLATION']],
      ['/api/v1/auth/reset/pin', false, ['TOKEN_INVALID', 'TOKEN_REVOKED', 'PIN_POLICY_VIOLATION']],
    ];
    for (const [path, signedIn, codes] of routes) {
      const op = doc.paths[path]?.post;
      expect(op, path).toBeDefined();
      expect((op!.security ?? []).some((s) => 'bearer' in (s as object)), path).toBe(signedIn);
      for (const code of codes) expect(op!.description, `${path} ${code}`).toContain(code);
      const media = op!.requestBody!.content['application/json'];
      const schema = media.schema.$ref === undefined ? media.schema : doc.components.schemas[media.schema.$ref.replace('#/components/schemas/', '')]!; // a named component schema
      expect(schema.additionalProperties, path).toBe(false);
      expect(media.example ?? media.examples, path).toBeDefined();
      expect(Object.keys(op!.responses), path).toEqual(expect.arrayContaining(['200', '401', '422']));
    }
    expect(doc.paths['/api/v1/admin/users/{id}/reset-pin']?.post.security).toBeDefined();
  });
});
