/**
 * Security regressions a hand mutation showed missing (issue 9 section 10): each rule below was
 * broken by hand in the source and no test failed. Every test here is named after the threat,
 * asserts the exact status and error_code, and was seen to fail with its rule broken.
 */
import { createHmac } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_TYPES, type TokenType } from '../../src/tokens/keyring.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { bearer, expectError, login, seedUser, signIn } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

type Res = Awaited<ReturnType<typeof login>>;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Signs `claims` as HS256 with the server's current key for `type`, under the genuine kid. */
function signWithTypeKey(type: TokenType, claims: Record<string, unknown>): string {
  const { kid, key } = t.s.keyring.signingKey(type);
  const input = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t.app.inject({ method: 'POST', url, payload, headers });
const validate = (token: string): Promise<Res> => post('/api/v1/auth/validate', {}, bearer(token));
/** Another route behind the bearer guard than validate (a forged token accepted here would end a session). */
const logout = (token: string): Promise<Res> => post('/api/v1/auth/logout', {}, bearer(token));

describe('token confusion across the per-type signing keys', () => {
  it('the four derived signing keys (access, refresh, reset, 2FA) all differ, and each verifies only its own type', () => {
    const keys = TOKEN_TYPES.map((type) => t.s.keyring.signingKey(type));
    expect(TOKEN_TYPES).toEqual(['access', 'refresh', 'reset', '2fa']);
    expect(new Set(keys.map((k) => k.key.toString('hex'))).size).toBe(4);
    const { kid } = keys[0]!;
    for (const [i, type] of TOKEN_TYPES.entries()) {
      expect(keys[i]!.kid).toBe(kid);
      expect(t.s.keyring.verificationKey(kid, type)!.equals(keys[i]!.key)).toBe(true);
    }
  });

  for (const keyType of ['refresh', 'reset', '2fa'] as const) {
    it(`token confusion: a ${keyType}-key token claiming token_type access is refused with 401 TOKEN_INVALID`, async () => {
      await seedUser(t.s, `confused.${keyType}`);
      const s = await signIn(t.app, `confused.${keyType}`);
      const claims = decodeJwt(s.access_token) as Record<string, unknown>;
      expect(claims.token_type).toBe('access');
      expect(decodeProtectedHeader(s.access_token).kid).toBe(t.s.keyring.signingKey('access').kid);
      // Control: the same claims, freshly signed with the access key, are a working token (so
      // only the key makes the difference below).
      expect((await validate(signWithTypeKey('access', { ...claims, jti: `${String(claims.jti)}-ctl` }))).statusCode).toBe(200);

      const forged = signWithTypeKey(keyType, { ...claims, jti: `${String(claims.jti)}-${keyType}` });
      expectError(await validate(forged), 401, 'TOKEN_INVALID');
      expectError(await logout(forged), 401, 'TOKEN_INVALID');
      expect((await validate(s.access_token)).statusCode).toBe(200); // the forged logout ended nothing
    });
  }
});

describe('revocation', () => {
  it('revoked token replay: an access token on the denylist while its session is still active is refused with 401 TOKEN_REVOKED', async () => {
    await seedUser(t.s, 'denied.token');
    const s = await signIn(t.app, 'denied.token');
    expect((await validate(s.access_token)).statusCode).toBe(200);
    const { jti, exp } = decodeJwt(s.access_token) as { jti: string; exp: number };

    expect(await t.s.denylist.spend(jti, exp * 1000, 'test_revoked')).toBe(true);
    await t.s.denylist.announce(jti, exp * 1000);

    expectError(await validate(s.access_token), 401, 'TOKEN_REVOKED');
    expectError(await logout(s.access_token), 401, 'TOKEN_REVOKED');
    // The session itself is still active: its refresh token still works, and the new access
    // token (another jti, same session) validates.
    const refreshed = await post('/api/v1/auth/refresh', { refresh_token: s.refresh_token });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const next = refreshed.json<{ access_token: string; session_id?: string }>();
    expect((decodeJwt(next.access_token) as { session_id: string }).session_id).toBe(s.session_id);
    expect((await validate(next.access_token)).statusCode).toBe(200);
    expectError(await validate(s.access_token), 401, 'TOKEN_REVOKED');
  });
});

describe('one-time code and TOTP guessing, one try at a time', () => {
  const wrongFor = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  const outboxCode = (to: string): string => t.s.otp.outbox.latest(to)!.code;

  async function enrolOtp(token: string, method: 'email' | 'sms', to: string): Promise<void> {
    const setup = await post('/api/v1/2fa/otp/setup', { method }, bearer(token));
    expect(setup.statusCode, setup.body).toBe(200);
    const done = await post('/api/v1/2fa/otp/verify', { method, code: outboxCode(to) }, bearer(token));
    expect(done.statusCode, done.body).toBe(200);
  }

  it('OTP guessing: three wrong sign-in codes (email) and then the right one: the fourth try is refused with 429 OTP_ATTEMPTS_EXCEEDED', async () => {
    expect(t.s.config.mfa.otpMaxAttempts).toBe(3);
    expect(t.s.config.mfa.maxFailures).toBeGreaterThan(4); // the per-user lock is not what refuses here
    await seedUser(t.s, 'otp.guesser', { email: 'otp.guesser@bank.example' });
    await enrolOtp((await signIn(t.app, 'otp.guesser')).access_token, 'email', 'otp.guesser@bank.example');

    const gate = expectError(await login(t.app, 'otp.guesser'), 401, '2FA_REQUIRED').details as { two_factor_token: string };
    const sent = await post('/api/v1/auth/2fa/request', { two_factor_token: gate.two_factor_token, method: 'email' });
    expect(sent.statusCode, sent.body).toBe(200);
    const code = outboxCode('otp.guesser@bank.example');
    const attempt = (c: string) => post('/api/v1/auth/2fa/validate', { two_factor_token: gate.two_factor_token, code: c });

    for (const left of [2, 1, 0]) {
      expect(withoutRequestId(expectError(await attempt(wrongFor(code)), 401, 'OTP_INVALID').details)).toEqual({ attempts_remaining: left });
    }
    expectError(await attempt(code), 429, 'OTP_ATTEMPTS_EXCEEDED');
  });

  it('OTP guessing: three wrong step-up codes (SMS) and then the right one: the fourth try is refused with 429 OTP_ATTEMPTS_EXCEEDED', async () => {
    await seedUser(t.s, 'sms.guesser', { phone: '+254700000444' });
    const session = await signIn(t.app, 'sms.guesser');
    await enrolOtp(session.access_token, 'sms', '+254700000444');
    t.clock.advance(60_000); // past the resend throttle of the enrolment code

    const sent = await post('/api/v1/auth/2fa/request', { method: 'sms' }, bearer(session.access_token));
    expect(sent.statusCode, sent.body).toBe(200);
    const code = outboxCode('+254700000444');
    const attempt = (c: string) => post('/api/v1/auth/2fa/verify', { code: c }, bearer(session.access_token));

    for (let i = 0; i < 3; i++) expectError(await attempt(wrongFor(code)), 401, 'OTP_INVALID');
    expectError(await attempt(code), 429, 'OTP_ATTEMPTS_EXCEEDED');
  });

  it('TOTP guessing: MFA_MAX_FAILURES (5) wrong codes one by one and then the right one: the sixth try is refused with 429 MFA_LOCKED', async () => {
    const max = t.s.config.mfa.maxFailures;
    expect(max).toBe(5);
    await seedUser(t.s, 'totp.guesser');
    const { authenticator } = await enrolTotp(t.app, t.clock, (await signIn(t.app, 'totp.guesser')).access_token);
    const gate = expectError(await login(t.app, 'totp.guesser'), 401, '2FA_REQUIRED').details as { two_factor_token: string };
    const attempt = (c: string) => post('/api/v1/2fa/totp/verify-login', { two_factor_token: gate.two_factor_token, code: c });

    for (let i = 0; i < max; i++) expectError(await attempt(authenticator.wrongCode(t.clock.now())), 401, 'TOTP_INVALID');
    const locked = await attempt(authenticator.code(t.clock.now()));
    expect(withoutRequestId(expectError(locked, 429, 'MFA_LOCKED').details)).toEqual({ retry_after_seconds: 900 });
    expect(locked.headers['retry-after']).toBe('900');
  });
});
