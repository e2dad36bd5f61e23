/**
 * One-time codes by email and SMS (issue 4 section 3), end to end: codes travel over real SMTP
 * (smtp-server on loopback) and through a local SMS gateway that speaks the documented contract,
 * and are read back from there. The clock is frozen: expiry and throttles are tested by moving
 * it. The app logs into a buffer through the production logger, so the tests can prove that no
 * code reaches the log (or the audit trail) when a transport is configured, and that it does
 * reach the log, loudly, in the development outbox.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/platform/config.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn } from '../harness/fixtures.js';
import { startSmsGateway, type TestSmsGateway } from '../harness/sms-gateway.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';
import { withoutRequestId } from '../harness/request-id.js';

type Res = Awaited<ReturnType<typeof login>>;
type LoggedApp = TestApp & { lines: string[] };

/** createTestApp with the production logger (redaction included) writing into `lines`. */
async function startApp(env: Record<string, string>, opts: { devOutbox?: boolean } = {}): Promise<LoggedApp> {
  const lines: string[] = [];
  const log = createLogger('debug', new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb(); } }));
  const devOutbox = opts.devOutbox;
  const configure = devOutbox === undefined ? undefined : (c: Config): Config => ({ ...c, mfa: { ...c.mfa, devOutbox } });
  return Object.assign(await createTestApp({ env, log, configure }), { lines });
}

const post = (t: TestApp, url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Res> =>
  t.app.inject({ method: 'POST', url, payload, headers });

/** The 2FA token of a sign-in that answered 401 2FA_REQUIRED, with the methods it offers. */
async function challenge(t: TestApp, username: string): Promise<{ token: string; methods: string[] }> {
  const d = expectError(await login(t.app, username), 401, '2FA_REQUIRED').details as { two_factor_token: string; methods: string[] };
  return { token: d.two_factor_token, methods: d.methods };
}

const seen = new Set<string>(); // every code the tests received: none may appear in the log or the audit trail
const remember = (code: string): string => (seen.add(code), code);
const wrongFor = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
/** A code as a whole token: not a run of digits inside a UUID or a hash. */
const asToken = (code: string): RegExp => new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`);

describe('with SMTP and the SMS gateway configured', () => {
  let smtp: TestSmtp;
  let gw: TestSmsGateway;
  let t: LoggedApp;

  const mailCode = (to: string): string => remember(/^Code: (\d{6})$/m.exec(smtp.to(to).at(-1)!.text)![1]!);
  const smsCode = (to: string): string => remember(/^(\d{6}) is your /.exec(gw.latest(to)!.message)![1]!);
  const row = (id: string) => t.s.database.db.selectFrom('mfa_otp_codes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  /** The codes of a user for one purpose (the clock is frozen: several may share a created_at). */
  const rowsOf = (userId: number, purpose: 'signin' | 'stepup' | 'enroll') => t.s.database.db.selectFrom('mfa_otp_codes').selectAll().where('user_id', '=', userId).where('purpose', '=', purpose).execute();

  /** Enrols `method` for a signed-in user through setup and verify; returns nothing, asserts everything. */
  async function enrol(token: string, method: 'email' | 'sms', address: string): Promise<void> {
    const setup = await post(t, '/api/v1/2fa/otp/setup', { method }, bearer(token));
    expect(setup.statusCode, setup.body).toBe(200);
    const code = method === 'email' ? mailCode(address) : smsCode(address);
    const done = await post(t, '/api/v1/2fa/otp/verify', { method, code }, bearer(token));
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ enrolled: true, method });
  }

  beforeAll(async () => {
    smtp = await startSmtp();
    gw = await startSmsGateway();
    t = await startApp({
      SMTP_URL: smtp.url, SMTP_FROM: 'Strongroom Bank <security@bank.example>',
      SMS_GATEWAY_URL: gw.url, SMS_GATEWAY_TOKEN: gw.token, SMS_GATEWAY_TIMEOUT_MS: '1000',
      MFA_REQUIRED_ROLES: 'operator',
    });
    await seedUser(t.s, 'root.admin', { roles: ['admin'], email: 'root@bank.example' });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
    await gw.close();
  });

  it('email: enrol, then password, 2FA_REQUIRED, a code over real SMTP, and validate give working tokens', async () => {
    await seedUser(t.s, 'amina.otieno', { email: 'amina@bank.example' });
    await enrol((await signIn(t.app, 'amina.otieno')).access_token, 'email', 'amina@bank.example');

    const { token, methods } = await challenge(t, 'amina.otieno');
    expect(methods).toContain('email');
    const sent = await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'email' });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json()).toEqual({ method: 'email', destination: 'a***@bank.example', expires_in: 300, resend_after: 60 });
    const mail = smtp.to('amina@bank.example').at(-1)!;
    expect(mail.from).toBe('Strongroom Bank <security@bank.example>');
    expect(mail.subject).toBe('Your sign-in code');
    expect(mail.text).toContain('valid for 5 minutes');
    expect(mail.text).toContain('bank will never ask you for it');

    const res = await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code: mailCode('amina@bank.example') });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { access_token: string; user_profile: { mfa_completed: boolean } };
    expect(body.user_profile.mfa_completed).toBe(true);
    expect((await post(t, '/api/v1/auth/validate', {}, bearer(body.access_token))).statusCode).toBe(200);
  });

  it('sms: enrol, then password, 2FA_REQUIRED, a code through the gateway, and validate give working tokens; delivery is tracked', async () => {
    const user = await seedUser(t.s, 'baraka.mwangi', { phone: '+254712345612' });
    await enrol((await signIn(t.app, 'baraka.mwangi')).access_token, 'sms', '+254712345612');

    const { token, methods } = await challenge(t, 'baraka.mwangi');
    expect(methods).toEqual(['sms']);
    const sent = await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'sms' });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json()).toMatchObject({ method: 'sms', destination: '+2547****12' });
    const sms = gw.latest('+254712345612')!;
    const [stored] = await rowsOf(user.id, 'signin');
    expect(sms).toMatchObject({ from: 'Strongroom', reference: stored!.id, idempotencyKey: stored!.id });
    expect(stored).toMatchObject({ purpose: 'signin', method: 'sms', delivery_status: 'sent', delivery_ref: sms.id, destination_masked: '+2547****12', attempts: 0 });
    expect(stored!.delivered_at).not.toBeNull();

    const res = await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code: smsCode('+254712345612') });
    expect(res.statusCode, res.body).toBe(200);
    expect((await post(t, '/api/v1/auth/validate', {}, bearer((res.json() as { access_token: string }).access_token))).statusCode).toBe(200);
    expect((await row(stored!.id)).consumed_at).not.toBeNull();
  });

  it('a gateway that fails (500) or hangs gives 503 OTP_DELIVERY_FAILED, a failed and void code, and an audited failure; a retry is not throttled', async () => {
    const user = await seedUser(t.s, 'chebet.kip', { phone: '+254798765401' });
    const token = (await signIn(t.app, 'chebet.kip')).access_token;

    gw.mode = 'fail';
    expectError(await post(t, '/api/v1/2fa/otp/setup', { method: 'sms' }, bearer(token)), 503, 'OTP_DELIVERY_FAILED');
    const [failed] = await rowsOf(user.id, 'enroll');
    expect(failed).toMatchObject({ delivery_status: 'failed', delivery_error: 'HTTP 500', delivered_at: null });
    expect(gw.failed).toEqual([{ status: 500, reference: failed!.id }]); // the gateway got it, in contract, and failed it as told
    expect(failed!.superseded_at).not.toBeNull(); // the code can never be used

    gw.mode = 'hang';
    expectError(await post(t, '/api/v1/2fa/otp/setup', { method: 'sms' }, bearer(token)), 503, 'OTP_DELIVERY_FAILED');
    expect((await rowsOf(user.id, 'enroll')).find((r) => r.id !== failed!.id)).toMatchObject({ delivery_status: 'failed', delivery_error: 'timeout' });

    gw.mode = 'ok'; // at once: a code that never arrived does not hold the next one back
    expect((await post(t, '/api/v1/2fa/otp/setup', { method: 'sms' }, bearer(token))).statusCode).toBe(200);
    const verified = await post(t, '/api/v1/2fa/otp/verify', { method: 'sms', code: smsCode('+254798765401') }, bearer(token));
    expect(verified.statusCode, verified.body).toBe(200);

    const r = await t.s.audit.query({ userId: user.uuid, eventType: 'OTP_DELIVERY_FAILED', limit: 10, offset: 0 });
    expect(r.entries.map((e) => e.details.reason).sort()).toEqual(['HTTP 500', 'timeout']);
    expect(r.entries[0]).toMatchObject({ status: 'FAILURE', mfa_method: 'sms', details: { destination: '+2547****01', delivery_status: 'failed', via: 'sms_gateway' } });
  });

  it('a code sent before an MFA reset removed the factor cannot finish the sign-in, nor can a new one be sent', async () => {
    const user = await seedUser(t.s, 'faraji.o', { phone: '+254700111333' });
    await enrol((await signIn(t.app, 'faraji.o')).access_token, 'sms', '+254700111333');
    const { token } = await challenge(t, 'faraji.o');
    expect((await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'sms' })).statusCode).toBe(200);
    const code = smsCode('+254700111333');
    await t.s.database.db.transaction().execute((trx) => t.s.factors.removeAll(trx, user.id, new Date(t.clock.now())));
    expectError(await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code }), 401, 'OTP_INVALID');
    t.clock.advance(61_000);
    expectError(await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'sms' }), 400, 'MFA_METHOD_UNAVAILABLE');
  });

  it('replayed sign-in: the same 2FA token and code a second time is refused (TOKEN_REVOKED)', async () => {
    await seedUser(t.s, 'dalia.njeri', { email: 'dalia@bank.example' });
    await enrol((await signIn(t.app, 'dalia.njeri')).access_token, 'email', 'dalia@bank.example');
    const { token } = await challenge(t, 'dalia.njeri');
    expect((await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'email' })).statusCode).toBe(200);
    const code = mailCode('dalia@bank.example');
    expect((await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code })).statusCode).toBe(200);
    expectError(await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code }), 401, 'TOKEN_REVOKED');
  });

  it('step-up: a signed-in session verifies an enrolled factor; a reused step-up code is refused (OTP_INVALID)', async () => {
    await seedUser(t.s, 'esther.wanjiku', { email: 'esther@bank.example' });
    const session = await signIn(t.app, 'esther.wanjiku');
    await enrol(session.access_token, 'email', 'esther@bank.example');

    const sent = await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token));
    expect(sent.statusCode, sent.body).toBe(200);
    const mail = smtp.to('esther@bank.example').at(-1)!;
    expect(mail.subject).toBe('Your verification code');
    const code = mailCode('esther@bank.example');
    const res = await post(t, '/api/v1/auth/2fa/verify', { code }, bearer(session.access_token));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ verified: true, method: 'email', session_id: session.session_id, verified_at: new Date(t.clock.now()).toISOString() });
    const s = await t.s.database.db.selectFrom('sessions').select(['mfa_completed', 'mfa_verified_at']).where('session_id', '=', session.session_id).executeTakeFirstOrThrow();
    expect(s.mfa_completed).toBe(true);
    expectError(await post(t, '/api/v1/auth/2fa/verify', { code }, bearer(session.access_token)), 401, 'OTP_INVALID');
  });

  it('a method the challenge does not offer, or that is not enrolled, or whose address is missing is MFA_METHOD_UNAVAILABLE; a code never requested is OTP_INVALID', async () => {
    await seedUser(t.s, 'farah.hassan', { email: 'farah@bank.example' });
    const session = await signIn(t.app, 'farah.hassan');
    expectError(await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token)), 400, 'MFA_METHOD_UNAVAILABLE'); // not enrolled
    expectError(await post(t, '/api/v1/2fa/otp/setup', { method: 'sms' }, bearer(session.access_token)), 400, 'MFA_METHOD_UNAVAILABLE'); // no phone
    expectError(await post(t, '/api/v1/auth/2fa/verify', { code: '123456' }, bearer(session.access_token)), 401, 'OTP_INVALID');
    await enrol(session.access_token, 'email', 'farah@bank.example');
    expectError(await post(t, '/api/v1/2fa/otp/setup', { method: 'email' }, bearer(session.access_token)), 409, 'OTP_FACTOR_ALREADY_ENROLLED');

    const { token, methods } = await challenge(t, 'farah.hassan');
    expect(methods).toEqual(['email']);
    expectError(await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'sms' }), 400, 'MFA_METHOD_UNAVAILABLE');
    expectError(await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code: '123456' }), 401, 'OTP_INVALID');
    expectError(await post(t, '/api/v1/auth/2fa/request', { method: 'email' }), 401, 'TOKEN_MISSING'); // neither bearer nor 2FA token
  });

  it('an expired code is refused (OTP_EXPIRED) exactly OTP_VALIDITY_MINUTES after it was sent', async () => {
    await seedUser(t.s, 'gideon.otieno', { email: 'gideon@bank.example' });
    const session = await signIn(t.app, 'gideon.otieno');
    await enrol(session.access_token, 'email', 'gideon@bank.example');

    expect((await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token))).statusCode).toBe(200);
    const late = mailCode('gideon@bank.example');
    t.clock.advance(300_000);
    expectError(await post(t, '/api/v1/auth/2fa/verify', { code: late }, bearer(session.access_token)), 401, 'OTP_EXPIRED');

    expect((await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token))).statusCode).toBe(200);
    const inTime = mailCode('gideon@bank.example');
    t.clock.advance(299_000);
    expect((await post(t, '/api/v1/auth/2fa/verify', { code: inTime }, bearer(session.access_token))).statusCode).toBe(200);
  });

  it('20 parallel wrong codes buy exactly 3 tries (OTP_INVALID), the rest and then the right code are 429 OTP_ATTEMPTS_EXCEEDED; a new code works', async () => {
    const user = await seedUser(t.s, 'hawa.said', { email: 'hawa@bank.example' });
    await enrol((await signIn(t.app, 'hawa.said')).access_token, 'email', 'hawa@bank.example');
    const { token } = await challenge(t, 'hawa.said');
    expect((await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'email' })).statusCode).toBe(200);
    const code = mailCode('hawa@bank.example');

    const burst = await Promise.all(Array.from({ length: 20 }, () => post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code: wrongFor(code) })));
    const invalid = burst.filter((r) => r.statusCode === 401);
    const exceeded = burst.filter((r) => r.statusCode === 429);
    expect(invalid).toHaveLength(3);
    expect(exceeded).toHaveLength(17);
    for (const r of invalid) expectError(r, 401, 'OTP_INVALID');
    for (const r of exceeded) expectError(r, 429, 'OTP_ATTEMPTS_EXCEEDED');
    expect((await rowsOf(user.id, 'signin')).map((r) => r.attempts)).toEqual([3]);

    expectError(await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code }), 429, 'OTP_ATTEMPTS_EXCEEDED'); // the code is dead

    t.clock.advance(60_000);
    expect((await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'email' })).statusCode).toBe(200);
    const res = await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code: mailCode('hawa@bank.example') });
    expect(res.statusCode, res.body).toBe(200);

    const failures = await t.s.audit.query({ userId: user.uuid, eventType: 'MFA_FAILED', limit: 50, offset: 0 });
    expect(failures.total).toBe(21);
    expect(failures.entries.every((e) => e.mfa_method === 'email')).toBe(true);
  });

  it('guessing across resent codes is capped per user: MFA_MAX_FAILURES wrong codes lock the second factor (MFA_LOCKED)', async () => {
    await seedUser(t.s, 'issa.kariuki', { email: 'issa@bank.example' });
    const session = await signIn(t.app, 'issa.kariuki');
    await enrol(session.access_token, 'email', 'issa@bank.example');
    const verify = (code: string) => post(t, '/api/v1/auth/2fa/verify', { code }, bearer(session.access_token));

    expect((await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token))).statusCode).toBe(200);
    const first = mailCode('issa@bank.example');
    for (let i = 0; i < 3; i++) expectError(await verify(wrongFor(first)), 401, 'OTP_INVALID');
    t.clock.advance(60_000);
    expect((await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token))).statusCode).toBe(200);
    const second = mailCode('issa@bank.example');
    for (let i = 0; i < 2; i++) expectError(await verify(wrongFor(second)), 401, 'OTP_INVALID'); // the 5th wrong code locks

    const locked = await verify(second);
    expect(withoutRequestId(expectError(locked, 429, 'MFA_LOCKED').details)).toEqual({ retry_after_seconds: 900 });
    expect(locked.headers['retry-after']).toBe('900');
    t.clock.advance(60_000);
    expectError(await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token)), 429, 'MFA_LOCKED'); // no code is sent in vain
    t.clock.advance(840_000);
    expect((await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token))).statusCode).toBe(200);
    expect((await verify(mailCode('issa@bank.example'))).statusCode).toBe(200);
  });

  it('a resend within OTP_RESEND_SECONDS is 429 OTP_RESEND_THROTTLED with Retry-After; the new code replaces the old; OTP_MAX_SENDS per hour is 429 OTP_SEND_LIMIT', async () => {
    await seedUser(t.s, 'imani.chege', { email: 'imani@bank.example' });
    const session = await signIn(t.app, 'imani.chege');
    await enrol(session.access_token, 'email', 'imani@bank.example');
    const request = () => post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(session.access_token));

    expect((await request()).statusCode).toBe(200);
    const first = mailCode('imani@bank.example');
    let res = await request();
    expect(withoutRequestId(expectError(res, 429, 'OTP_RESEND_THROTTLED').details)).toEqual({ retry_after_seconds: 60 });
    expect(res.headers['retry-after']).toBe('60');
    t.clock.advance(59_000);
    res = await request();
    expect(withoutRequestId(expectError(res, 429, 'OTP_RESEND_THROTTLED').details)).toEqual({ retry_after_seconds: 1 });
    expect(res.headers['retry-after']).toBe('1');
    t.clock.advance(1_000);
    expect((await request()).statusCode).toBe(200);
    const second = mailCode('imani@bank.example');
    expect(smtp.to('imani@bank.example')).toHaveLength(3); // enrolment, first, second: throttled requests sent nothing

    expectError(await post(t, '/api/v1/auth/2fa/verify', { code: first }, bearer(session.access_token)), 401, 'OTP_INVALID'); // replaced
    expect((await post(t, '/api/v1/auth/2fa/verify', { code: second }, bearer(session.access_token))).statusCode).toBe(200);

    for (let i = 0; i < 3; i++) { // sends 3 to 5 of this hour
      t.clock.advance(60_000);
      expect((await request()).statusCode).toBe(200);
    }
    t.clock.advance(60_000);
    res = await request();
    // Five sends at 0, 60, 120, 180 and 240 s; now is 300 s: the first leaves the hour at 3600 s.
    expect(withoutRequestId(expectError(res, 429, 'OTP_SEND_LIMIT').details)).toEqual({ retry_after_seconds: 3300 });
    expect(res.headers['retry-after']).toBe('3300');
    expect(smtp.to('imani@bank.example')).toHaveLength(6); // enrolment and five codes: the refused request sent nothing
  });

  it('a burst of parallel code requests sends one code (the throttle is checked under a per-challenge lock)', async () => {
    await seedUser(t.s, 'jabari.ochieng', { email: 'jabari@bank.example' });
    await enrol((await signIn(t.app, 'jabari.ochieng')).access_token, 'email', 'jabari@bank.example');
    const { token } = await challenge(t, 'jabari.ochieng');
    const burst = await Promise.all(Array.from({ length: 8 }, () => post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'email' })));
    expect(burst.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of burst.filter((x) => x.statusCode !== 200)) expectError(r, 429, 'OTP_RESEND_THROTTLED');
    expect(smtp.to('jabari@bank.example')).toHaveLength(2); // the enrolment code and one sign-in code
    expect((await post(t, '/api/v1/auth/2fa/validate', { two_factor_token: token, code: mailCode('jabari@bank.example') })).statusCode).toBe(200);
  });

  it('MFA_REQUIRED_ROLES: MFA_SETUP_INCOMPLETE, then otp/setup and otp/verify with the setup token finish the sign-in (sign_in)', async () => {
    await seedUser(t.s, 'juma.operator', { email: 'juma@bank.example', roles: ['operator'] });
    const d = expectError(await login(t.app, 'juma.operator'), 403, 'MFA_SETUP_INCOMPLETE').details as { two_factor_token: string; setup_methods: string[] };
    expect(d.setup_methods).toContain('email');
    const token = d.two_factor_token;
    expectError(await post(t, '/api/v1/auth/2fa/request', { two_factor_token: token, method: 'email' }), 401, 'TOKEN_INVALID'); // a setup token cannot sign in

    const setup = await post(t, '/api/v1/2fa/otp/setup', { method: 'email', two_factor_token: token });
    expect(setup.statusCode, setup.body).toBe(200);
    expect(smtp.to('juma@bank.example').at(-1)!.subject).toBe('Confirm your email address for sign-in codes');
    const code = mailCode('juma@bank.example');
    const res = await post(t, '/api/v1/2fa/otp/verify', { method: 'email', code, two_factor_token: token });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { enrolled: boolean; method: string; sign_in: { access_token: string; user_profile: { mfa_completed: boolean } } };
    expect(body).toMatchObject({ enrolled: true, method: 'email', sign_in: { user_profile: { mfa_completed: true } } });
    expect((await post(t, '/api/v1/auth/validate', {}, bearer(body.sign_in.access_token))).statusCode).toBe(200);
    expectError(await post(t, '/api/v1/2fa/otp/verify', { method: 'email', code, two_factor_token: token }), 401, 'TOKEN_REVOKED');
    expect((await challenge(t, 'juma.operator')).methods).toEqual(['email']);
  });

  it('the OpenAPI document lists the five routes under MFA and 2FA, each error code they answer, and how request, validate and verify differ', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { paths: Record<string, { post: { tags: string[]; description: string } }> };
    const routes = ['/api/v1/auth/2fa/request', '/api/v1/auth/2fa/validate', '/api/v1/auth/2fa/verify', '/api/v1/2fa/otp/setup', '/api/v1/2fa/otp/verify'];
    for (const path of routes) expect(doc.paths[path]?.post.tags, path).toEqual(['MFA and 2FA']);
    const text = (path: string) => doc.paths[path]!.post.description;
    for (const code of ['MFA_METHOD_UNAVAILABLE', 'OTP_RESEND_THROTTLED', 'OTP_SEND_LIMIT', 'OTP_DELIVERY_FAILED']) expect(text('/api/v1/auth/2fa/request')).toContain(code);
    for (const code of ['OTP_INVALID', 'OTP_EXPIRED', 'OTP_ATTEMPTS_EXCEEDED', 'MFA_LOCKED']) expect(text('/api/v1/auth/2fa/validate')).toContain(code);
    expect(text('/api/v1/auth/2fa/request')).toContain('**Step-up in a signed-in session**');
    expect(text('/api/v1/auth/2fa/validate')).toContain('use `POST /api/v1/auth/2fa/verify`');
    expect(text('/api/v1/auth/2fa/verify')).toContain('use `POST /api/v1/auth/2fa/validate`');
    expect(text('/api/v1/2fa/otp/setup')).toContain('OTP_FACTOR_ALREADY_ENROLLED');
  });

  it('the audit trail shows masked destinations and delivery status; no code is in the audit trail, the code table or the log, and the outbox is unused', async () => {
    const rootToken = (await signIn(t.app, 'root.admin')).access_token; // the clock has moved past earlier tokens
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/admin/audit?event_type=OTP_SENT&page_size=200', headers: bearer(rootToken) });
    expect(res.statusCode, res.body).toBe(200);
    const sent = (res.json() as { entries: Array<{ username: string; mfa_method: string; details: Record<string, unknown> }> }).entries;
    expect(sent.find((e) => e.username === 'amina.otieno')).toMatchObject({ mfa_method: 'email', details: { destination: 'a***@bank.example', delivery_status: 'sent', via: 'smtp' } });
    expect(sent.find((e) => e.username === 'baraka.mwangi')).toMatchObject({ mfa_method: 'sms', details: { destination: '+2547****12', delivery_status: 'sent', via: 'sms_gateway' } });
    expect(res.body).not.toContain('amina@bank.example');
    expect(res.body).not.toContain('+254712345612');

    expect(seen.size).toBeGreaterThan(10);
    const audit = JSON.stringify(await t.s.database.db.selectFrom('audit_log').selectAll().execute());
    const codes = JSON.stringify(await t.s.database.db.selectFrom('mfa_otp_codes').selectAll().execute());
    const log = t.lines.join('');
    expect(log).toContain('SMS delivery through the gateway failed: HTTP 500'); // the capture works
    for (const code of seen) {
      expect(audit).not.toMatch(asToken(code));
      expect(codes).not.toMatch(asToken(code));
      expect(log).not.toMatch(asToken(code));
    }
    expect(log).not.toContain(gw.token);
    expect(log).not.toContain('DEVELOPMENT OUTBOX');
    expect(t.s.otp.outbox.messages).toHaveLength(0);
  });

  it('every request the SMS gateway received followed its contract (token, headers, shape); only the deliberate one failed', () => {
    expect(gw.messages.length).toBeGreaterThan(0);
    expect(gw.refused).toEqual([]);
    expect(gw.failed).toHaveLength(1);
  });
});

describe('with no transport configured', () => {
  it('development: codes go to the outbox and, loudly, to the log, and they work', async () => {
    const t = await startApp({});
    try {
      await seedUser(t.s, 'kofi.mensah', { email: 'kofi@bank.example', phone: '+233241234567' });
      const token = (await signIn(t.app, 'kofi.mensah')).access_token;
      for (const [method, to, masked] of [['email', 'kofi@bank.example', 'k***@bank.example'], ['sms', '+233241234567', '+2332****67']] as const) {
        if (method === 'sms') {
          // A second factor needs the first one: a stolen session (and the password) must not add one.
          const refused = expectError(await post(t, '/api/v1/2fa/otp/setup', { method }, bearer(token)), 403, 'STEP_UP_REQUIRED');
          // It names the routes to call next with the factor the user has.
          expect(refused.message).toContain('POST /api/v1/auth/2fa/request with {"method": "email"}, then POST /api/v1/auth/2fa/verify');
          expect(refused.details).toMatchObject({ within_minutes: 10, enrolled: ['email'], step_up: [{ method: 'email', routes: ['POST /api/v1/auth/2fa/request', 'POST /api/v1/auth/2fa/verify'] }] });
          expect((await post(t, '/api/v1/auth/2fa/request', { method: 'email' }, bearer(token))).statusCode).toBe(200);
          expect((await post(t, '/api/v1/auth/2fa/verify', { code: t.s.otp.outbox.latest('kofi@bank.example')!.code }, bearer(token))).statusCode).toBe(200);
        }
        const setup = await post(t, '/api/v1/2fa/otp/setup', { method }, bearer(token));
        expect(setup.statusCode, setup.body).toBe(200);
        expect(setup.json()).toMatchObject({ method, destination: masked });
        const msg = t.s.otp.outbox.latest(to)!;
        expect(msg).toMatchObject({ method, destination: masked });
        const warned = t.lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.msg.startsWith('DEVELOPMENT OUTBOX'));
        expect(warned.at(-1)!.level).toBe(40);
        expect(warned.at(-1)!.msg).toContain(`one-time code ${msg.code} for ${masked}`);
        expect((await post(t, '/api/v1/2fa/otp/verify', { method, code: msg.code }, bearer(token))).statusCode).toBe(200);
      }
      const sent = await t.s.audit.query({ eventType: 'OTP_SENT', limit: 10, offset: 0 });
      expect(sent.entries.map((e) => e.details.via)).toEqual(['dev_outbox', 'dev_outbox', 'dev_outbox']); // email, the step-up, sms
    } finally {
      await t.close();
    }
  });

  it('production (no development outbox): the method is unavailable (MFA_METHOD_UNAVAILABLE) and nothing is logged', async () => {
    const t = await startApp({}, { devOutbox: false });
    try {
      await seedUser(t.s, 'lulu.adongo', { email: 'lulu@bank.example', phone: '+256712345678' });
      const token = (await signIn(t.app, 'lulu.adongo')).access_token;
      expectError(await post(t, '/api/v1/2fa/otp/setup', { method: 'email' }, bearer(token)), 400, 'MFA_METHOD_UNAVAILABLE');
      expectError(await post(t, '/api/v1/2fa/otp/setup', { method: 'sms' }, bearer(token)), 400, 'MFA_METHOD_UNAVAILABLE');
      expect(t.s.otp.outbox.messages).toHaveLength(0);
      expect(t.lines.join('')).not.toContain('DEVELOPMENT OUTBOX');
      expect(await t.s.database.db.selectFrom('mfa_otp_codes').selectAll().execute()).toHaveLength(0);
    } finally {
      await t.close();
    }
  });
});
