/**
 * One-time codes by push (issue 14 section 3) and the done-when, against the local FCM
 * fake: a phone registers its token; the user enrols push as a second factor; signing in
 * elsewhere, they get the `send2FA` push with their code, in their language, and finish with it;
 * a transfer notification arrives in their language; a token the provider reports unregistered
 * turns inactive by itself. Also: web tokens never get codes, a burst of requests sends one code,
 * a code whose every device is dead is void (503), and no code rests in the database in clear.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeFcm, type FakeFcm } from '../harness/fcm.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn } from '../harness/fixtures.js';

let fcm: FakeFcm;
let t: TestApp;
let service: string;

const phone = (n: number): string => `code${n}:APA91bH2x7k3Lq9Zr0Xc3A_${'p'.repeat(90)}`;
const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload, headers });
const pushes = (n: number) => fcm.sent.filter((m) => m.token === phone(n));
/** The code in the newest push to device `n`. */
const codeOn = (n: number): string => /^(\d{6}) /.exec(pushes(n).at(-1)!.notification.body)![1]!;

async function register(access: string, n: number, platform: 'mobile' | 'web' = 'mobile', device_name?: string): Promise<number> {
  const res = await post('/api/v1/notifications/devices/register', { push_token: phone(n), platform, ...(device_name ? { device_name } : {}) }, bearer(access));
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: number }).id;
}

/** A signed-in user with push enrolled as their second factor on device `n`. */
async function enrolled(name: string, n: number, language?: 'pt' | 'fr'): Promise<{ uuid: string; access: string; device: number }> {
  const { uuid } = await seedUser(t.s, name);
  const access = (await signIn(t.app, name)).access_token;
  if (language) await t.app.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: bearer(access), payload: { language } });
  const device = await register(access, n, 'mobile', `${name}'s phone`);
  const setup = await post('/api/v1/2fa/otp/setup', { method: 'push' }, bearer(access));
  expect(setup.statusCode, setup.body).toBe(200);
  expect(setup.json()).toMatchObject({ method: 'push', destination: `mobile device "${name}'s phone"` });
  const verify = await post('/api/v1/2fa/otp/verify', { method: 'push', code: codeOn(n) }, bearer(access));
  expect(verify.json()).toEqual({ enrolled: true, method: 'push' });
  t.clock.advance(61_000); // past the resend throttle of the enrolment code's challenge (another challenge, but a fresh start all the same)
  return { uuid, access, device };
}

beforeAll(async () => {
  fcm = await startFakeFcm();
  t = await createTestApp({ env: fcm.env });
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
    expect(sent.json()).toEqual({ method: 'push', destination: 'mobile device "codes.amina\'s phone"', expires_in: 300, resend_after: 60 });
    const push = pushes(1).at(-1)!;
    expect(push.notification.title).toBe('O seu código de verificação'); // send2FA, in Portuguese
    expect(push.notification.body).toMatch(/^\d{6} é o seu código de verificação\. Válido 5 minutos\./);
    expect(push.data).toEqual({ kind: 'one_time_code', reference: expect.stringMatching(/^[0-9a-f-]{36}$/) as string });
    const done = await post('/api/v1/auth/2fa/validate', { two_factor_token: first.two_factor_token, code: codeOn(1) });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ access_token: expect.any(String) as string, user_profile: expect.objectContaining({ mfa_completed: true }) as object });

    // The core banking service reports a transfer: it arrives in Portuguese.
    service = (await signIn(t.app, 'codes.service')).access_token;
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
    // With no active mobile device left, push is no longer offered at sign-in.
    const next = expectError(await login(t.app, 'codes.amina'), 401, '2FA_REQUIRED').details as { two_factor_token: string; methods: string[] };
    expect(next.methods).not.toContain('push');
    expectError(await post('/api/v1/auth/2fa/request', { two_factor_token: next.two_factor_token, method: 'push' }), 400, 'MFA_METHOD_UNAVAILABLE');
    fcm.clear();
  });
});

describe('one-time codes by push', () => {
  it('go to every active mobile device (English by default), never to a web token nor an inactive one', async () => {
    const u = await enrolled('codes.kofi', 2);
    await register(u.access, 3, 'mobile');
    await register(u.access, 4, 'web');
    const off = await register(u.access, 5, 'mobile');
    await t.app.inject({ method: 'PUT', url: `/api/v1/notifications/devices/${off}/deactivate`, headers: bearer(u.access) });
    const before = fcm.sent.length;
    const res = await post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(u.access)); // step-up
    expect(res.json()).toMatchObject({ method: 'push', destination: '2 mobile devices' });
    const got = fcm.sent.slice(before);
    expect(got.map((m) => m.token).sort()).toEqual([phone(2), phone(3)].sort());
    expect(got[0]!.notification.title).toBe('Your verification code');
    expect(got[0]!.notification.body).toBe(got[1]!.notification.body); // one code, on both devices
    const ok = await post('/api/v1/auth/2fa/verify', { code: codeOn(3) }, bearer(u.access));
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a burst of parallel requests sends one code (the resend throttle is reserved before sending)', async () => {
    const u = await enrolled('codes.burst', 6);
    const before = pushes(6).length;
    const results = await Promise.all(Array.from({ length: 10 }, () => post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(u.access))));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 429).every((r) => (r.json() as { error_code: string }).error_code === 'OTP_RESEND_THROTTLED')).toBe(true);
    expect(pushes(6).length - before).toBe(1);
  });

  it('when every device is dead the code is void: 503 OTP_DELIVERY_FAILED, the token inactive, the failure audited', async () => {
    const u = await enrolled('codes.gone', 7);
    fcm.fail(phone(7), 'UNREGISTERED');
    expectError(await post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(u.access)), 503, 'OTP_DELIVERY_FAILED');
    fcm.clear();
    const device = await t.s.db.selectFrom('device_tokens').select('is_active').where('id', '=', u.device).executeTakeFirstOrThrow();
    expect(device.is_active).toBe(false);
    const failed = await t.s.db.selectFrom('audit_log').select(['details']).where('event_type', '=', 'OTP_DELIVERY_FAILED').where('user_id', '=', u.uuid).execute();
    expect(failed.map((f) => f.details)).toEqual([expect.objectContaining({ via: 'push_provider', reason: 'no device accepted the code (unregistered)' })]);
  });

  it('no code rests in the database in clear: not in the outbox, the code table or the audit trail', async () => {
    const u = await enrolled('codes.secret', 8);
    await post('/api/v1/auth/2fa/request', { method: 'push' }, bearer(u.access));
    const code = codeOn(8);
    const { rows } = await t.s.database.db.executeQuery<{ dump: string }>({ sql: `SELECT (SELECT coalesce(string_agg(p::text, ''), '') FROM push_messages p) || (SELECT string_agg(c::text, '') FROM mfa_otp_codes c) || (SELECT string_agg(a::text, '') FROM audit_log a) AS dump`, parameters: [], query: { kind: 'SelectQueryNode' } } as never);
    expect(rows[0]!.dump).not.toMatch(new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`));
  });

  it('without a push provider the method is unavailable: not offered for enrolment, 400 MFA_METHOD_UNAVAILABLE', async () => {
    const bare = await createTestApp();
    try {
      await seedUser(bare.s, 'codes.nopush');
      const access = (await signIn(bare.app, 'codes.nopush')).access_token;
      await bare.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(access), payload: { push_token: phone(9), platform: 'mobile' } });
      expectError(await bare.app.inject({ method: 'POST', url: '/api/v1/2fa/otp/setup', headers: bearer(access), payload: { method: 'push' } }), 400, 'MFA_METHOD_UNAVAILABLE');
    } finally {
      await bare.close();
    }
  });
});
