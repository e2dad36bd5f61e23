/**
 * One-time codes by push (issue 14 section 3) and the done-when, against the local FCM
 * fake: a phone registers its token; the user enrols push, which binds that device; signing in
 * elsewhere, they get the `send2FA` push with their code, in their language, and finish with it;
 * a transfer notification arrives in their language; a token the provider reports unregistered
 * turns inactive by itself. The threats: a stolen session cannot make another phone receive the
 * codes (password to enrol, codes only to the bound device, a step-up to move them, the device
 * cap never retires it, an MFA reset unbinds it); a burst of requests sends one code; a dead
 * device voids the code; no code rests in the database or the log in clear.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/observability/logger.js';
import { startFakeFcm, type FakeFcm } from '../harness/fcm.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';

let fcm: FakeFcm;
let t: TestApp;
const lines: string[] = [];

const phone = (n: number): string => `code${n}:APA91bH2x7k3Lq9Zr0Xc3A_${'p'.repeat(90)}`;
const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload, headers });
const pushes = (n: number) => fcm.sent.filter((m) => m.token === phone(n));
/** The code in the newest push to device `n`. */
const codeOn = (n: number): string => /^(\d{6}) /.exec(pushes(n).at(-1)!.notification.body)![1]!;

async function register(access: string, n: number, platform: 'mobile' | 'web' = 'mobile', device_name?: string): Promise<string> {
  const res = await post('/api/v1/notifications/devices/register', { push_token: phone(n), platform, ...(device_name ? { device_name } : {}) }, bearer(access));
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: string }).id;
}

/** A signed-in user with push enrolled, bound to their device `n`. */
async function enrolled(name: string, n: number, language?: 'pt' | 'fr', email?: string): Promise<{ uuid: string; access: string; device: string }> {
  const { uuid } = await seedUser(t.s, name, email ? { email } : {});
  const access = (await signIn(t.app, name)).access_token;
  if (language) await t.app.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: bearer(access), payload: { language } });
  const device = await register(access, n, 'mobile', 'Amina\'s Pixel');
  const setup = await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: STRONG_PASSWORD }, bearer(access));
  expect(setup.statusCode, setup.body).toBe(200);
  expect(setup.json()).toMatchObject({ method: 'push', destination: 'mobile device "Ami…"' }); // not the whole name
  const verify = await post('/api/v1/2fa/otp/verify', { method: 'push', code: codeOn(n) }, bearer(access));
  expect(verify.json()).toEqual({ enrolled: true, method: 'push' });
  const listed = await t.app.inject({ method: 'GET', url: `/api/v1/notifications/devices/${device}`, headers: bearer(access) });
  expect(listed.json()).toMatchObject({ receives_codes: true });
  return { uuid, access, device };
}

/** A full sign-in: password, then the code pushed to device `n`. */
async function signInWithPush(name: string, n: number): Promise<string> {
  const { two_factor_token } = expectError(await login(t.app, name), 401, '2FA_REQUIRED').details as { two_factor_token: string };
  expect((await post('/api/v1/auth/2fa/request', { two_factor_token, method: 'push' })).statusCode).toBe(200);
  const done = await post('/api/v1/auth/2fa/validate', { two_factor_token, code: codeOn(n) });
  expect(done.statusCode, done.body).toBe(200);
  return (done.json() as { access_token: string }).access_token;
}

/** A step-up code by push for the session, entered back. */
async function stepUp(access: string, n: number): Promise<void> {
  expect((await post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(access))).statusCode).toBe(200);
  expect((await post('/api/v1/auth/2fa/verify', { code: codeOn(n) }, bearer(access))).statusCode).toBe(200);
}

beforeAll(async () => {
  fcm = await startFakeFcm();
  const log = createLogger('debug', new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb(); } }));
  t = await createTestApp({ env: fcm.env, log });
  await seedUser(t.s, 'codes.service', { roles: ['admin'] });
});
afterAll(async () => {
  await t.close();
  await fcm.close();
});

describe('done when', () => {
  it('a phone registers its token; signing in elsewhere, the user gets the send2FA push with their code and finishes; a transfer arrives in their language; an unregistered token turns inactive by itself', async () => {
    const u = await enrolled('codes.amina', 1, 'pt');
    // Signing in elsewhere: the password step asks for the second factor and offers push.
    const first = expectError(await login(t.app, 'codes.amina'), 401, '2FA_REQUIRED').details as { two_factor_token: string; methods: string[] };
    expect(first.methods).toContain('push');
    const sent = await post('/api/v1/auth/2fa/request', { two_factor_token: first.two_factor_token, method: 'push' });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json()).toEqual({ method: 'push', destination: 'mobile device "Ami…"', expires_in: 300, resend_after: 60 });
    const push = pushes(1).at(-1)!;
    expect(push.notification.title).toBe('O seu código de verificação'); // send2FA, in Portuguese
    expect(push.notification.body).toMatch(/^\d{6} é o seu código de verificação\. Válido 5 minutos\./);
    expect(push.data).toEqual({ kind: 'one_time_code', reference: expect.stringMatching(/^[0-9a-f-]{36}$/) as string });
    const done = await post('/api/v1/auth/2fa/validate', { two_factor_token: first.two_factor_token, code: codeOn(1) });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ access_token: expect.any(String) as string, user_profile: expect.objectContaining({ mfa_completed: true }) as object });

    // The core banking service reports a transfer: it arrives in Portuguese.
    const service = (await signIn(t.app, 'codes.service')).access_token;
    const transfer = { debit_name: 'Amina Otieno', credit_name: 'Kofi Mensah', amount: '1,500.00', currency: 'KES', debit_account: '****4471', credit_account: '****9012', transaction_reference_id: 'TRX-42' };
    expect((await post('/api/v1/notifications/send', { user_id: u.uuid, template: 'INTERNAL_TRANSFER', values: transfer }, bearer(service))).statusCode).toBe(202);
    await t.scheduler.runNow('push delivery');
    expect(pushes(1).at(-1)!.notification).toEqual({ title: 'Transferência concluída', body: 'Amina Otieno transferiu 1,500.00 KES da conta ****4471 para Kofi Mensah, conta ****9012. Referência TRX-42.' });

    // The app is uninstalled: the provider says UNREGISTERED, and the token turns inactive by itself.
    fcm.fail(phone(1), 'UNREGISTERED');
    const again = await post('/api/v1/notifications/send', { user_id: u.uuid, template: 'INTERNAL_TRANSFER', values: transfer }, bearer(service));
    await t.scheduler.runNow('push delivery');
    const msg = await t.s.db.selectFrom('push_messages').select(['status', 'failure_reason']).where('id', '=', (again.json() as { message_ids: string[] }).message_ids[0]!).executeTakeFirstOrThrow();
    expect(msg).toEqual({ status: 'failed', failure_reason: 'unregistered' });
    const device = await t.app.inject({ method: 'GET', url: `/api/v1/notifications/devices/${u.device}`, headers: bearer(u.access) });
    expect(device.json()).toMatchObject({ id: u.device, is_active: false });
    // With its code device gone, push is no longer offered at sign-in.
    const next = expectError(await login(t.app, 'codes.amina'), 401, '2FA_REQUIRED').details as { two_factor_token: string; methods: string[] };
    expect(next.methods).not.toContain('push');
    expectError(await post('/api/v1/auth/2fa/request', { two_factor_token: next.two_factor_token, method: 'push' }), 400, 'MFA_METHOD_UNAVAILABLE');
    fcm.clear();
  });
});

describe('a stolen session cannot make another phone receive the codes', () => {
  it('enrolling push with a bearer token needs the password (422 without it, 401 INVALID_CREDENTIALS with a wrong one); nothing is sent', async () => {
    await seedUser(t.s, 'codes.stolen');
    const access = (await signIn(t.app, 'codes.stolen')).access_token;
    await register(access, 20);
    expectError(await post('/api/v1/2fa/otp/setup', { method: 'push' }, bearer(access)), 422, 'VALIDATION_ERROR');
    expectError(await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: 'not-the-password' }, bearer(access)), 401, 'INVALID_CREDENTIALS');
    expect(pushes(20)).toHaveLength(0);
  });

  it('codes go to the bound device only: a mobile token registered later (or a web one) gets none', async () => {
    const u = await enrolled('codes.kofi', 2);
    await register(u.access, 3, 'mobile'); // the thief's phone, registered with the stolen session
    await register(u.access, 4, 'web');
    const before = fcm.sent.length;
    const res = await post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(u.access)); // step-up
    expect(res.json()).toMatchObject({ method: 'push', destination: 'mobile device "Ami…"' });
    expect(fcm.sent.slice(before).map((m) => m.token)).toEqual([phone(2)]);
    expect(fcm.sent.slice(before)[0]!.notification.title).toBe('Your verification code'); // English by default
  });

  it('moving the codes to another phone needs a step-up with the current device in the last 10 minutes (403 STEP_UP_REQUIRED), then binds the new one only', async () => {
    const u = await enrolled('codes.mover', 5);
    const newPhone = await register(u.access, 6, 'mobile', 'New phone');
    expectError(await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: STRONG_PASSWORD, device_id: newPhone }, bearer(u.access)), 403, 'STEP_UP_REQUIRED');
    expect(pushes(6)).toHaveLength(0);
    await stepUp(u.access, 5);
    t.clock.advance(11 * 60_000); // too long ago
    const again = await signInWithPush('codes.mover', 5); // (the idle session would have ended)
    t.clock.advance(61_000); // the resend throttle of the step-up below
    expectError(await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: STRONG_PASSWORD, device_id: newPhone }, bearer(again)), 403, 'STEP_UP_REQUIRED');
    await stepUp(again, 5);
    const moved = await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: STRONG_PASSWORD, device_id: newPhone }, bearer(again));
    expect(moved.statusCode, moved.body).toBe(200);
    expect(pushes(6)).toHaveLength(1); // the enrolment code went to the new phone only
    expect((await post('/api/v1/2fa/otp/verify', { method: 'push', code: codeOn(6) }, bearer(again))).json()).toEqual({ enrolled: true, method: 'push' });
    const bound = await t.s.db.selectFrom('device_tokens').select(['uuid', 'receives_codes']).where('uuid', 'in', [u.device, newPhone]).orderBy('id').execute();
    expect(bound).toEqual([{ uuid: u.device, receives_codes: false }, { uuid: newPhone, receives_codes: true }]);
    const enrolledAudit = await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', 'MFA_ENROLLED').where('user_id', '=', u.uuid).orderBy('timestamp', 'desc').executeTakeFirstOrThrow();
    expect(enrolledAudit.details).toMatchObject({ device_token_id: newPhone }); // the device's uuid
  });

  it('nor add another factor with the password: TOTP or email enrolment for a push user is 403 STEP_UP_REQUIRED until a step-up with push', async () => {
    await enrolled('codes.adder', 14, undefined, 'adder@bank.example');
    t.clock.advance(11 * 60_000);
    const session = await signInWithPush('codes.adder', 14); // a sign-in is not a step-up: the thief may hold such a session
    expectError(await post('/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD }, bearer(session)), 403, 'STEP_UP_REQUIRED');
    expectError(await post('/api/v1/2fa/otp/setup', { method: 'email' }, bearer(session)), 403, 'STEP_UP_REQUIRED');
    t.clock.advance(61_000);
    await stepUp(session, 14);
    expect((await post('/api/v1/2fa/totp/setup', { current_password: STRONG_PASSWORD }, bearer(session))).statusCode).toBe(200);
  });

  it('with several mobile devices the enrolment names one (422 VALIDATION_ERROR device_id otherwise); another user\'s id is refused', async () => {
    await seedUser(t.s, 'codes.two');
    const access = (await signIn(t.app, 'codes.two')).access_token;
    await register(access, 7);
    await register(access, 8);
    const body = expectError(await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: STRONG_PASSWORD }, bearer(access)), 422, 'VALIDATION_ERROR');
    expect(JSON.stringify(body.details)).toContain('device_id');
    const someoneElses = (await t.s.db.selectFrom('device_tokens').select('uuid').where('receives_codes', '=', true).executeTakeFirstOrThrow()).uuid;
    expectError(await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: STRONG_PASSWORD, device_id: someoneElses }, bearer(access)), 400, 'MFA_METHOD_UNAVAILABLE');
  });

  it('threat: an integer device_id (the internal id earlier versions exposed) at push enrolment answers 422 VALIDATION_ERROR naming device_id, and sends and binds nothing', async () => {
    await seedUser(t.s, 'codes.integer');
    const access = (await signIn(t.app, 'codes.integer')).access_token;
    const mine = await register(access, 16);
    const { id } = await t.s.db.selectFrom('device_tokens').select('id').where('uuid', '=', mine).executeTakeFirstOrThrow();
    for (const deviceId of [id, String(id)]) {
      const body = expectError(await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: STRONG_PASSWORD, device_id: deviceId }, bearer(access)), 422, 'VALIDATION_ERROR') as { message: string; details: { expected: string; fields: Array<{ location: string; field: string }> } };
      expect(body.details.expected).toBe('uuid');
      expect(body.details.fields[0]).toMatchObject({ location: 'body', field: 'device_id' });
      expect(body.message).toContain('GET /api/v1/notifications/devices');
    }
    expect(pushes(16)).toHaveLength(0);
    expect((await t.s.db.selectFrom('device_tokens').select('receives_codes').where('uuid', '=', mine).executeTakeFirstOrThrow()).receives_codes).toBe(false);
    // Its uuid is what enrols it.
    expect((await post('/api/v1/2fa/otp/setup', { method: 'push', current_password: STRONG_PASSWORD, device_id: mine }, bearer(access))).statusCode).toBe(200);
    expect(pushes(16)).toHaveLength(1);
  });

  it('a code device that changes hands loses the binding: the new owner gets no codes of the old one, and the old one is offered push no more', async () => {
    const u = await enrolled('codes.seller', 15);
    await seedUser(t.s, 'codes.buyer');
    const buyer = (await signIn(t.app, 'codes.buyer')).access_token;
    const moved = await post('/api/v1/notifications/devices/register', { push_token: phone(15), platform: 'mobile' }, bearer(buyer));
    expect(moved.statusCode).toBe(200); // the phone was sold: its token moves to the buyer
    expect(moved.json()).toMatchObject({ id: u.device, receives_codes: false });
    const challenge = expectError(await login(t.app, 'codes.seller'), 401, '2FA_REQUIRED').details as { methods: string[] };
    expect(challenge.methods).not.toContain('push');
  });

  it('the device cap never retires the code device, and an MFA reset unbinds it', async () => {
    const u = await enrolled('codes.cap', 9);
    for (let n = 30; n < 42; n++) await register(u.access, n); // twelve more: past the cap of ten
    const row = await t.s.db.selectFrom('device_tokens').select(['is_active', 'receives_codes']).where('uuid', '=', u.device).executeTakeFirstOrThrow();
    expect(row).toEqual({ is_active: true, receives_codes: true });
    const active = await t.s.db.selectFrom('device_tokens').innerJoin('users', 'users.id', 'device_tokens.user_id').select('device_tokens.id').where('users.uuid', '=', u.uuid).where('device_tokens.is_active', '=', true).execute();
    expect(active).toHaveLength(10);
    const user = (await t.s.users.findByUuid(u.uuid))!;
    await t.s.db.transaction().execute((trx) => t.s.factors.removeAll(trx, user.id, new Date(t.clock.now())));
    expect((await t.s.db.selectFrom('device_tokens').select('receives_codes').where('uuid', '=', u.device).executeTakeFirstOrThrow()).receives_codes).toBe(false);
  });

  it('the send route cannot imitate a code: send2FA and push_data.kind one_time_code are reserved (422)', async () => {
    const service = (await signIn(t.app, 'codes.service')).access_token;
    const { uuid } = await seedUser(t.s, 'codes.phished');
    expectError(await post('/api/v1/notifications/send', { user_id: uuid, template: 'send2FA', values: { code: '123456', validity_minutes: '5' } }, bearer(service)), 422, 'VALIDATION_ERROR');
    expectError(await post('/api/v1/notifications/send', { user_id: uuid, title: '123456', body: 'is your code', push_data: { kind: 'one_time_code' } }, bearer(service)), 422, 'VALIDATION_ERROR');
  });
});

describe('one-time codes by push', () => {
  it('a burst of parallel requests sends one code (the resend throttle is reserved before sending)', async () => {
    const u = await enrolled('codes.burst', 10);
    t.clock.advance(61_000);
    const before = pushes(10).length;
    const results = await Promise.all(Array.from({ length: 10 }, () => post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(u.access))));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 429).every((r) => (r.json() as { error_code: string }).error_code === 'OTP_RESEND_THROTTLED')).toBe(true);
    expect(pushes(10).length - before).toBe(1);
  });

  it('when the device is dead the code is void: 503 OTP_DELIVERY_FAILED, the token inactive, the failure audited', async () => {
    const u = await enrolled('codes.gone', 11);
    fcm.fail(phone(11), 'UNREGISTERED');
    expectError(await post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(u.access)), 503, 'OTP_DELIVERY_FAILED');
    fcm.clear();
    const device = await t.s.db.selectFrom('device_tokens').select('is_active').where('uuid', '=', u.device).executeTakeFirstOrThrow();
    expect(device.is_active).toBe(false);
    const failed = await t.s.db.selectFrom('audit_log').select(['details']).where('event_type', '=', 'OTP_DELIVERY_FAILED').where('user_id', '=', u.uuid).execute();
    expect(failed.map((f) => f.details)).toEqual([expect.objectContaining({ via: 'push_provider', reason: 'unregistered' })]);
  });

  it('no code rests in the database or the log in clear: not in the outbox, the code table, the audit trail or any log line', async () => {
    const u = await enrolled('codes.secret', 12);
    t.clock.advance(61_000);
    expect((await post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(u.access))).statusCode).toBe(200);
    const codes = [...new Set(fcm.sent.map((m) => /^(\d{6}) /.exec(m.notification.body)?.[1]).filter((c): c is string => c !== undefined))];
    expect(codes.length).toBeGreaterThan(5); // every code this file received
    const { rows } = await t.s.database.db.executeQuery<{ dump: string }>({ sql: `SELECT (SELECT coalesce(string_agg(p::text, ''), '') FROM push_messages p) || (SELECT string_agg(c::text, '') FROM mfa_otp_codes c) || (SELECT string_agg(a::text, '') FROM audit_log a) AS dump`, parameters: [], query: { kind: 'SelectQueryNode' } } as never);
    const log = lines.join('');
    expect(log.length).toBeGreaterThan(0);
    for (const code of codes) {
      const asToken = new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`);
      expect(rows[0]!.dump).not.toMatch(asToken);
      expect(log).not.toMatch(asToken);
    }
  });

  it('without a push provider the method is unavailable: not offered for enrolment, 400 MFA_METHOD_UNAVAILABLE', async () => {
    const bare = await createTestApp();
    try {
      await seedUser(bare.s, 'codes.nopush');
      const access = (await signIn(bare.app, 'codes.nopush')).access_token;
      await bare.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(access), payload: { push_token: phone(9), platform: 'mobile' } });
      expectError(await bare.app.inject({ method: 'POST', url: '/api/v1/2fa/otp/setup', headers: bearer(access), payload: { method: 'push', current_password: STRONG_PASSWORD } }), 400, 'MFA_METHOD_UNAVAILABLE');
    } finally {
      await bare.close();
    }
  });

  it('an access policy may name push among the factors that count on a channel: only push is then offered, and a user with email alone is refused', async () => {
    const u = await enrolled('codes.policy', 13, undefined, 'policy@bank.example');
    await seedUser(t.s, 'codes.emailonly', { email: 'emailonly@bank.example' });
    const emailOnly = (await signIn(t.app, 'codes.emailonly')).access_token;
    expect((await post('/api/v1/2fa/otp/setup', { method: 'email' }, bearer(emailOnly))).statusCode).toBe(200);
    const mailed = t.s.otp.outbox.latest('emailonly@bank.example')!.code;
    expect((await post('/api/v1/2fa/otp/verify', { method: 'email', code: mailed }, bearer(emailOnly))).statusCode).toBe(200);
    // The first user enrols email too (codes through the development outbox), after a step-up with push.
    await stepUp(u.access, 13);
    expect((await post('/api/v1/2fa/otp/setup', { method: 'email' }, bearer(u.access))).statusCode).toBe(200);
    expect((await post('/api/v1/2fa/otp/verify', { method: 'email', code: t.s.otp.outbox.latest('policy@bank.example')!.code }, bearer(u.access))).statusCode).toBe(200);
    const methods = async () => (expectError(await login(t.app, 'codes.policy'), 401, '2FA_REQUIRED').details as { methods: string[] }).methods;
    expect((await methods()).sort()).toEqual(['email', 'push']);

    const admin = (await signIn(t.app, 'codes.service')).access_token;
    const created = await post('/api/v1/admin/access-policies', { name: 'codes: push only for customers on the web', channel: 'web', role: 'customer', rules: { second_factor_methods: ['push'] } }, bearer(admin));
    expect(created.statusCode, created.body).toBe(201);
    try {
      expect(await methods()).toEqual(['push']);
      expectError(await login(t.app, 'codes.emailonly'), 403, 'POLICY_RESTRICTED');
    } finally {
      await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${(created.json() as { policy: { id: string } }).policy.id}`, headers: bearer(admin) });
    }
  });
});

