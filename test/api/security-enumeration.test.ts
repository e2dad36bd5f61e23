/**
 * Security regressions: user enumeration, lockout and bcrypt input quirks (ruling 6, SPEC
 * "Password rules"; issue 2 section 9). No timing is measured: the "timing class" of an answer
 * is asserted by counting the bcrypt comparisons each path does.
 */
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { expectError, login, loginFrom, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { answerWithoutRequestId } from '../harness/request-id.js';

let t: TestApp;

/** Exactly 72 bytes, accepted by the password policy. */
const LONG_PASSWORD = 'Vt7#qLm2!xRp9$Hq9#zLt4!mWe7&Kd3%vBn8^Gy5*Jc6(Fw2)Ph4-Tz7+Xs9=Nr3_Qb8@Lk2';

/**
 * What a client sees, less what differs between any two requests: ids (the body's
 * `details.request_id` too, and so the body's hash), timing, the date, and how many requests the
 * address has left (one more was spent; RateLimit-Remaining counts requests, never whether the
 * account exists: the per-account bucket is keyed by the name as typed).
 */
function observable(res: { statusCode: number; body: string; json(): unknown; headers: Record<string, unknown> }) {
  const { 'x-request-id': _id, 'x-correlation-id': _c, 'x-response-time': _t, date: _d, 'ratelimit-remaining': remaining, 'x-content-sha256': sha256, ...headers } = res.headers;
  expect(Number(remaining)).toBeGreaterThanOrEqual(0);
  expect(sha256).toBe(createHash('sha256').update(res.body).digest('hex'));
  return { status: res.statusCode, body: answerWithoutRequestId(res), headers };
}

beforeAll(async () => {
  t = await createTestApp();
  await seedUser(t.s, 'known.user', { email: 'known@bank.example' });
  await seedUser(t.s, 'headers.known'); // its own account: known.user's failures are counted towards its lockout
  await seedUser(t.s, 'lock.known');
  await seedUser(t.s, 'long.password', { password: LONG_PASSWORD });
  await seedUser(t.s, 'nul.user');
  await signIn(t.app, 'known.user'); // warms every lazy path (dummy hash included) before spying
  await login(t.app, 'warm-up-unknown', 'Wrong#Password1');
});
afterAll(async () => t.close());
afterEach(() => {
  vi.restoreAllMocks();
});

describe('user enumeration', () => {
  it('answers a wrong password for a known user and an unknown username identically: 401 INVALID_CREDENTIALS, same body and headers', async () => {
    const known = await login(t.app, 'known.user', 'Wrong#Password1');
    const unknown = await login(t.app, 'nobody.here', 'Wrong#Password1');
    const byEmail = await login(t.app, 'known@bank.example', 'Wrong#Password1');
    const unknownEmail = await login(t.app, 'nobody@bank.example', 'Wrong#Password1');
    for (const r of [known, unknown, byEmail, unknownEmail]) expectError(r, 401, 'INVALID_CREDENTIALS');
    expect(observable(unknown)).toEqual(observable(known));
    expect(observable(unknownEmail)).toEqual(observable(byEmail));
    expect(answerWithoutRequestId(unknown)).toEqual(answerWithoutRequestId(known));
  });

  it('the rate-limit headers do not tell them apart either: a known and an unknown name, each the first try from its own address, get the same RateLimit-Remaining', async () => {
    const known = await loginFrom('198.51.100.71', t.app, 'headers.known', 'Wrong#Password1');
    const unknown = await loginFrom('198.51.100.72', t.app, 'nobody.else.here', 'Wrong#Password1');
    for (const r of [known, unknown]) expectError(r, 401, 'INVALID_CREDENTIALS');
    expect(known.headers['ratelimit-remaining']).toBeDefined();
    // The body's hash differs with the body's request_id; the bodies are compared less it above.
    const { 'x-request-id': _a, 'x-correlation-id': _b, 'x-response-time': _c, date: _d, 'x-content-sha256': _s, ...knownHeaders } = known.headers;
    const { 'x-request-id': _e, 'x-correlation-id': _f, 'x-response-time': _g, date: _h, 'x-content-sha256': _t, ...unknownHeaders } = unknown.headers;
    expect(unknownHeaders).toEqual(knownHeaders);
    expect(answerWithoutRequestId(unknown)).toEqual(answerWithoutRequestId(known));
  });

  it('gives a known user with a wrong password exactly one bcrypt comparison (same timing class)', async () => {
    const verify = vi.spyOn(t.s.hasher, 'verify');
    const dummy = vi.spyOn(t.s.hasher, 'dummyVerify');
    expectError(await login(t.app, 'known.user', 'Wrong#Password1'), 401, 'INVALID_CREDENTIALS');
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]![1]).toMatch(/^\$2[aby]\$/); // against the real hash
    expect(dummy).not.toHaveBeenCalled(); // a valid hash needs no dummy on top
    expect(await verify.mock.results[0]!.value).toBe(false);
  });

  it('gives an unknown username exactly one (dummy) bcrypt comparison (same timing class)', async () => {
    const verify = vi.spyOn(t.s.hasher, 'verify');
    const dummy = vi.spyOn(t.s.hasher, 'dummyVerify');
    expectError(await login(t.app, 'nobody.here', 'Wrong#Password1'), 401, 'INVALID_CREDENTIALS');
    expect(dummy).toHaveBeenCalledTimes(1);
    expect(verify).not.toHaveBeenCalled();
  });

  it('gives an over-long password exactly one (dummy) bcrypt comparison for known and unknown users alike', async () => {
    for (const username of ['known.user', 'nobody.here']) {
      const verify = vi.spyOn(t.s.hasher, 'verify');
      const dummy = vi.spyOn(t.s.hasher, 'dummyVerify');
      expectError(await login(t.app, username, `${STRONG_PASSWORD}${'x'.repeat(100)}`), 401, 'INVALID_CREDENTIALS');
      expect(dummy, username).toHaveBeenCalledTimes(1);
      expect(verify.mock.calls.length, username).toBeLessThanOrEqual(1);
      vi.restoreAllMocks();
    }
  });

  it('locks unknown usernames exactly like known ones: 429 ACCOUNT_LOCKED with Retry-After and identical bodies', async () => {
    const max = t.s.config.signin.maxLoginAttempts;
    expect(max).toBe(5);
    const known: Array<Awaited<ReturnType<typeof login>>> = [];
    const unknown: Array<Awaited<ReturnType<typeof login>>> = [];
    for (let i = 0; i < max + 1; i++) {
      known.push(await login(t.app, 'lock.known', 'Wrong#Password1'));
      unknown.push(await login(t.app, 'lock.unknown', 'Wrong#Password1'));
    }
    for (let i = 0; i < max + 1; i++) {
      if (i < max - 1) {
        expectError(known[i]!, 401, 'INVALID_CREDENTIALS');
        expectError(unknown[i]!, 401, 'INVALID_CREDENTIALS');
      } else {
        expectError(known[i]!, 429, 'ACCOUNT_LOCKED');
        expectError(unknown[i]!, 429, 'ACCOUNT_LOCKED');
        expect(Number(known[i]!.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(observable(unknown[i]!), `attempt ${i + 1}`).toEqual(observable(known[i]!));
    }
    // The right password does not get through the lock, and answers the same.
    const right = await login(t.app, 'lock.known', STRONG_PASSWORD);
    const other = await login(t.app, 'lock.unknown', STRONG_PASSWORD);
    expectError(right, 429, 'ACCOUNT_LOCKED');
    expect(observable(other)).toEqual(observable(right));
  });

  it('does not spend a bcrypt comparison on a locked account, known or unknown (same timing class)', async () => {
    const verify = vi.spyOn(t.s.hasher, 'verify');
    const dummy = vi.spyOn(t.s.hasher, 'dummyVerify');
    expectError(await login(t.app, 'lock.known', 'Wrong#Password1'), 429, 'ACCOUNT_LOCKED');
    expectError(await login(t.app, 'lock.unknown', 'Wrong#Password1'), 429, 'ACCOUNT_LOCKED');
    expect(verify).not.toHaveBeenCalled();
    expect(dummy).not.toHaveBeenCalled();
  });

  it('counts case and whitespace variants of an unknown username as one subject (no lockout bypass)', async () => {
    for (let i = 0; i < 5; i++) await login(t.app, ['ghost.user', 'GHOST.USER', ' ghost.user', 'Ghost.User ', 'ghost.user'][i]!, 'Wrong#Password1');
    expectError(await login(t.app, 'gHoSt.UsEr', 'Wrong#Password1'), 429, 'ACCOUNT_LOCKED');
  });
});

describe('bcrypt input quirks', () => {
  it('control: the 72-byte password signs in', async () => {
    expect(Buffer.byteLength(LONG_PASSWORD)).toBe(72);
    await signIn(t.app, 'long.password', LONG_PASSWORD);
  });

  it('refuses a password longer than 72 bytes whose first 72 bytes are the real one (bcrypt truncation) with 401 INVALID_CREDENTIALS', async () => {
    for (const suffix of ['x', 'anything-at-all', '\u00e9', '😀']) {
      expectError(await login(t.app, 'long.password', `${LONG_PASSWORD}${suffix}`), 401, 'INVALID_CREDENTIALS');
    }
    await signIn(t.app, 'long.password', LONG_PASSWORD); // not locked out by the above: 4 < 5
  });

  it('refuses a password with a NUL byte (C-string truncation) with 401 INVALID_CREDENTIALS', async () => {
    for (const p of [`${STRONG_PASSWORD}\u0000`, `${STRONG_PASSWORD}\u0000extra`, `\u0000${STRONG_PASSWORD}`, `${STRONG_PASSWORD.slice(0, 6)}\u0000${STRONG_PASSWORD.slice(6)}`]) {
      expectError(await login(t.app, 'nul.user', p), 401, 'INVALID_CREDENTIALS');
    }
    await signIn(t.app, 'nul.user');
  });

  it('refuses a NUL-truncated prefix of the password with 401 INVALID_CREDENTIALS', async () => {
    expectError(await login(t.app, 'nul.user', `${STRONG_PASSWORD.slice(0, 4)}\u0000`), 401, 'INVALID_CREDENTIALS');
  });

  it('refuses to set a password over 72 bytes or with a NUL byte: 422 PASSWORD_POLICY_VIOLATION naming the rule', async () => {
    const s = await signIn(t.app, 'nul.user');
    for (const [pw, rule] of [[`${LONG_PASSWORD}Q`, 'max_bytes'], [`Zp4$kWq8!nRt2&\u0000`, 'control_characters']] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: { authorization: `Bearer ${s.access_token}` }, payload: { current_password: STRONG_PASSWORD, new_password: pw } });
      const body = expectError(res, 422, 'PASSWORD_POLICY_VIOLATION');
      expect(JSON.stringify(body.details)).toContain(rule);
    }
  });
});
