/**
 * Account recovery (issue 27): the counters recovery's guesses count on, on both databases.
 * Security answers and the PIN count on the very counter sign-in counts them on, with sign-in's
 * limits (the PIN's: the USSD channel's), so recovery adds no guess to what sign-in allows.
 * Authenticator codes, a possession proof anyone who starts a recovery may try, count on a
 * counter of recovery's own with the second factor's limits, which outlives the workflow: a
 * stranger can neither lock the owner's second factor at sign-in nor buy guesses by starting
 * again. Each threat asserts the exact status and error code where a counter locks. Codes come
 * from the development outbox; the clock is frozen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { enrolTotp } from '../harness/authenticator.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';
import { MINUTE, ok, recovery } from '../harness/recovery.js';

const GATEWAY_KEY = 'ussd-b-key-0123456789abcdef0123456789abcdef';

let t: TestApp;
const r = recovery(() => t);

/** A started password recovery with its emailed code given: the possession proof that unlocks the rest. */
async function halfway(identifier: string, email: string): Promise<string> {
  const id = await r.start(identifier);
  ok(await r.verify(id, { proof: 'email_code' }));
  expect(ok(await r.verify(id, { proof: 'email_code', code: await r.codeTo(email) })).state).toBe('verifying');
  return id;
}

const twoFactorToken = async (username: string): Promise<string> => (expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { two_factor_token: string }).two_factor_token;
const totpAtSignIn = async (username: string, code: string) => r.post('/api/v1/2fa/totp/verify-login', { two_factor_token: await twoFactorToken(username), code });
const ussd = (phone_number: string, pin: string) => r.post('/api/v1/auth/login/ussd', { phone_number, pin }, { 'x-gateway-key': GATEWAY_KEY });

beforeAll(async () => {
  t = await createTestApp({ env: { USSD_GATEWAY_KEYS: `ussd-b:${GATEWAY_KEY}`, MFA_MAX_FAILURES: '5', MFA_LOCKOUT_MINUTES: '15' }, clock: new ManualClock(Date.UTC(2026, 2, 9, 9, 0, 0)) });
});
afterAll(async () => t?.close());

describe('the counters recovery guesses count on', () => {
  it('threat: a stranger who starts recoveries and guesses authenticator codes never locks the owner\'s second factor at sign-in, and starting again buys no guesses (recovery\'s own counter, MFA_MAX_FAILURES: 429 RECOVERY_PROOF_LOCKED)', async () => {
    await seedUser(t.s, 'shared.totp', { email: 'shared.totp@bank.example' });
    const { authenticator } = await enrolTotp(t.app, t.clock, (await signIn(t.app, 'shared.totp')).access_token);
    const wrong = (): string => authenticator.wrongCode(t.clock.now());

    // A stranger: no code from the mailbox, only guesses at the authenticator (a possession proof, tried first).
    const first = await r.start('shared.totp');
    for (let i = 0; i < 3; i++) expectError(await r.verify(first, { proof: 'totp', code: wrong() }), 401, 'RECOVERY_PROOF_INVALID');
    const second = await r.start('shared.totp'); // replaces the first: a fresh workflow, not fresh guesses
    expectError(await r.verify(second, { proof: 'totp', code: wrong() }), 401, 'RECOVERY_PROOF_INVALID');
    const locking = expectError(await r.verify(second, { proof: 'totp', code: wrong() }), 401, 'RECOVERY_PROOF_INVALID'); // the fifth: the counter locks
    expect(withoutRequestId(locking.details)).toEqual({ attempts_left: 1, state: 'initiated' });
    const refused = expectError(await r.verify(second, { proof: 'totp', code: authenticator.code(t.clock.now()) }), 429, 'RECOVERY_PROOF_LOCKED');
    expect(withoutRequestId(refused.details)).toEqual({ proof: 'totp', attempts_left: 1, retry_after_seconds: 15 * 60 });
    expect((await r.proofRow(second, 'totp')).attempts).toBe(2); // the right code was never compared

    // The owner signs in with the authenticator as ever: recovery's guesses are not sign-in's.
    expect((await totpAtSignIn('shared.totp', authenticator.code(t.clock.now()))).statusCode).toBe(200);
    // And sign-in's failures are not recovery's: once recovery's lock ends, a recovery gets its guesses back.
    for (let i = 0; i < 4; i++) expectError(await totpAtSignIn('shared.totp', wrong()), 401, 'TOTP_INVALID');
    t.clock.advance(15 * MINUTE);
    const third = await r.start('shared.totp');
    for (let i = 0; i < 2; i++) expectError(await r.verify(third, { proof: 'totp', code: wrong() }), 401, 'RECOVERY_PROOF_INVALID');
  });

  it('threat: security-answer guesses spread over sign-in and recovery: the answers\' own counter (SECURITY_QUESTION_ATTEMPTS) locks both', async () => {
    await seedUser(t.s, 'shared.answers', { email: 'shared.answers@bank.example' });
    const answers = await r.withAnswers('shared.answers', ['Simba', 'Kisumu', 'Blue']);
    const user = (await t.s.users.findByLogin('shared.answers'))!;
    // Two wrong at sign-in (the account's counter of security answers, as sign-in's check counts them).
    for (let i = 0; i < 2; i++) expect((await t.s.mfaAttempts.reserve(user.id, 'security_questions', { max: 3, lockMinutes: 30 })).ok).toBe(true);

    const id = await halfway('shared.answers', 'shared.answers@bank.example');
    const asked = ok(await r.verify(id, { proof: 'security_questions' })).questions as Array<{ id: string }>;
    expectError(await r.verify(id, { proof: 'security_questions', answers: asked.map((q) => ({ question_id: q.id, answer: 'guess' })) }), 401, 'RECOVERY_PROOF_INVALID');
    const right = asked.map((q) => ({ question_id: q.id, answer: answers.get(q.id)! }));
    const refused = expectError(await r.verify(id, { proof: 'security_questions', answers: right }), 429, 'RECOVERY_PROOF_LOCKED');
    expect(withoutRequestId(refused.details)).toEqual({ proof: 'security_questions', attempts_left: 2, retry_after_seconds: 30 * 60 });
    expect(await t.s.mfaAttempts.retryAfter(user.id, 'security_questions')).toBe(30 * 60); // sign-in's check is refused too
  });

  it('threat: PIN guesses spread over USSD sign-in and recovery count on the PIN\'s counter with the USSD channel\'s limit (2 here), not the server\'s (5)', async () => {
    const phone = '+254700300001';
    await seedUser(t.s, 'shared.pin', { email: 'shared.pin@bank.example', phone });
    await seedUser(t.s, 'pin.admin', { roles: ['admin'] });
    const admin = (await signIn(t.app, 'pin.admin')).access_token;
    ok(await r.post('/api/v1/auth/pin', { current_password: STRONG_PASSWORD, new_pin: '2580' }, bearer((await signIn(t.app, 'shared.pin')).access_token)));
    ok(await r.post('/api/v1/admin/access-policies', { name: 'ussd: two wrong PINs', channel: 'ussd', rules: { max_failed_attempts: 2 } }, bearer(admin)), 201);

    expectError(await ussd(phone, '9999'), 401, 'INVALID_CREDENTIALS');
    const id = await halfway('shared.pin@bank.example', 'shared.pin@bank.example'); // password + pin: pin + email_code
    // The second wrong PIN reaches the USSD limit: the counter locks on it (as at USSD sign-in, the locking failure answers 429),
    // the workflow's attempt spent; the right PIN is then refused before any comparison. Under the server's limit (5) it would be a 401.
    const locking = expectError(await r.verify(id, { proof: 'pin', pin: '1357' }), 429, 'RECOVERY_PROOF_LOCKED');
    expect(withoutRequestId(locking.details)).toEqual({ proof: 'pin', attempts_left: 2, retry_after_seconds: 15 * 60 });
    const refused = expectError(await r.verify(id, { proof: 'pin', pin: '2580' }), 429, 'RECOVERY_PROOF_LOCKED');
    expect(withoutRequestId(refused.details)).toEqual({ proof: 'pin', attempts_left: 2, retry_after_seconds: 15 * 60 });
    expect((await r.proofRow(id, 'pin')).attempts).toBe(1);
    expectError(await ussd(phone, '2580'), 429, 'ACCOUNT_LOCKED');
    // The password's own counter is untouched: the password still signs in.
    expect((await login(t.app, 'shared.pin')).statusCode).toBe(200);
  });
});
