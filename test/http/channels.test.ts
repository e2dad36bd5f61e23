/**
 * Channels and device binding (issue 10): the mobile and agent sign-in, validate on those
 * channels, and the administrator's approval of bound devices. The "done when" of the issue:
 * agents sign in only from their bound phone, inside their branch's geofence, Monday to
 * Saturday 07:00 to 20:00 Nairobi time; outside any of those they get 403 POLICY_RESTRICTED
 * naming the rule, and inside them they sign in. The clock is frozen; nothing sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { signal } from '../harness/comparisons.js';
import { createTestApp, useTwoNodes, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

const BRANCH = { latitude: -1.28638, longitude: 36.81723, accuracy_m: 12 };
const OUTSIDE = { latitude: -1.2950, longitude: 36.81723, accuracy_m: 12 }; // about 960 m south
const PHONE = 'agent-phone-0001-a3f1';
const OTHER_PHONE = 'agent-phone-0002-77c0';
const MONDAY_NOON_NAIROBI = Date.UTC(2026, 10, 23, 9, 0, 0); // UTC+3 all year
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const AGENT_POLICY = {
  name: 'Agents: bound phone, branch area, working hours', channel: 'agent', role: 'agent',
  rules: {
    require_bound_device: true,
    schedule: [{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], from: '07:00', to: '20:00' }],
    geofences: [{ type: 'circle', lat: -1.28638, lon: 36.81723, radius_m: 300 }],
    max_location_accuracy_m: 50,
  },
};

type Location = { latitude?: number; longitude?: number; accuracy_m?: number };

function agentLogin(app: App, username: string, phone: string, location: Location | null = BRANCH, remoteAddress = '198.51.100.20') {
  return app.inject({
    method: 'POST', url: '/api/v1/auth/login/mobile', remoteAddress, headers: { 'user-agent': 'StrongroomAgent/3.2 (Android 14)' },
    payload: { username, password: STRONG_PASSWORD, device_fingerprint: phone, channel: 'agent', ...(location ?? {}) },
  });
}

function agentValidate(app: App, token: string, phone: string, location: Location) {
  return app.inject({ method: 'POST', url: '/api/v1/auth/agent/validate', headers: { ...bearer(token), 'x-device-fingerprint': phone }, payload: location });
}

function expectRestricted(res: Awaited<ReturnType<typeof agentLogin>>, rule: string): void {
  expectError(res, 403, 'POLICY_RESTRICTED');
  expect(withoutRequestId(res.json().details)).toEqual({ rule });
}

async function adminToken(t: TestApp, name: string): Promise<string> {
  await seedUser(t.s, name, { roles: ['admin'] });
  return (await signIn(t.app, name)).access_token;
}

async function createPolicy(app: App, token: string, body: Record<string, unknown>): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(token), payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ policy: { id: string } }>().policy.id;
}

async function deletePolicy(app: App, token: string, id: string): Promise<void> {
  expect((await app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${id}`, headers: bearer(token) })).statusCode).toBe(200);
}

interface Binding { id: string; user_id: string; username: string; status: string; label: string; channel: string; decided_by: string | null }

async function bindings(app: App, token: string, query: string): Promise<{ bindings: Binding[]; total: number }> {
  const res = await app.inject({ method: 'GET', url: `/api/v1/admin/device-bindings?${query}`, headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function decide(app: App, token: string, id: string | number, verb: 'approve' | 'revoke') {
  return app.inject({ method: 'POST', url: `/api/v1/admin/device-bindings/${id}/${verb}`, headers: bearer(token) });
}

/** Signs in once from `phone` (refused: rule device), and approves the pending binding it left. */
async function bindPhone(t: TestApp, admin: string, username: string, phone: string): Promise<void> {
  expectRestricted(await agentLogin(t.app, username, phone), 'device');
  const user = (await t.s.users.findByLogin(username))!;
  const pending = (await bindings(t.app, admin, `status=pending&user_id=${user.uuid}`)).bindings;
  expect(pending).toHaveLength(1);
  expect((await decide(t.app, admin, pending[0]!.id, 'approve')).statusCode).toBe(200);
}

describe('agents: bound phone, branch geofence, working hours in Nairobi', () => {
  let t: TestApp;
  let clock: ManualClock;
  let admin: string;
  let adminUuid: string;
  beforeAll(async () => {
    clock = new ManualClock(MONDAY_NOON_NAIROBI);
    t = await createTestApp({ clock });
    admin = await adminToken(t, 'branch.admin');
    adminUuid = (await t.s.users.findByLogin('branch.admin'))!.uuid;
    await createPolicy(t.app, admin, AGENT_POLICY);
  });
  afterAll(async () => t.close());

  it('an unbound phone is 403 rule device and leaves one pending binding, audited; approved, the agent signs in inside all the rules', async () => {
    const agent = await seedUser(t.s, 'agent.wanjiru', { roles: ['agent'] });
    const first = await agentLogin(t.app, 'agent.wanjiru', PHONE);
    expectRestricted(first, 'device');
    expectRestricted(await agentLogin(t.app, 'agent.wanjiru', PHONE), 'device'); // the same phone again: still one request
    const pending = (await bindings(t.app, admin, `status=pending&user_id=${agent.uuid}`)).bindings;
    expect(pending).toEqual([expect.objectContaining({ user_id: agent.uuid, username: 'agent.wanjiru', status: 'pending', channel: 'agent', label: 'StrongroomAgent/3.2 (Android 14)', decided_by: null })]);
    expect(await auditTotal(t.s, agent.uuid, 'DEVICE_BINDING_REQUESTED')).toBe(1);
    expect(await auditTotal(t.s, agent.uuid, 'POLICY_VIOLATION')).toBe(2);

    const approved = await decide(t.app, admin, pending[0]!.id, 'approve');
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().binding).toMatchObject({ status: 'approved', decided_by: adminUuid });
    expect(await auditTotal(t.s, adminUuid, 'DEVICE_BINDING_APPROVED')).toBe(1);

    const ok = await agentLogin(t.app, 'agent.wanjiru', PHONE);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().user_profile).toMatchObject({ channel: 'agent' });
    const session = await t.s.database.db.selectFrom('sessions').select(['channel', 'device_fingerprint']).where('session_id', '=', ok.json().session_id).executeTakeFirstOrThrow();
    expect(session).toEqual({ channel: 'agent', device_fingerprint: PHONE });
  });

  it('outside the branch, with a location too inaccurate, or with none: 403 rule geofence, no session', async () => {
    const agent = await seedUser(t.s, 'agent.otieno', { roles: ['agent'] });
    await bindPhone(t, admin, 'agent.otieno', PHONE);
    const sessions = async () => (await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', agent.id).execute()).length;
    expectRestricted(await agentLogin(t.app, 'agent.otieno', PHONE, OUTSIDE), 'geofence');
    expectRestricted(await agentLogin(t.app, 'agent.otieno', PHONE, { ...BRANCH, accuracy_m: 500 }), 'geofence');
    expectRestricted(await agentLogin(t.app, 'agent.otieno', PHONE, null), 'geofence');
    expect(await sessions()).toBe(0);
    expect((await agentLogin(t.app, 'agent.otieno', PHONE)).statusCode).toBe(200);
  });

  it('on Sunday and after 20:00 Nairobi time: 403 rule schedule; Saturday 19:59 signs in', async () => {
    await seedUser(t.s, 'agent.njeri', { roles: ['agent'] });
    await bindPhone(t, admin, 'agent.njeri', PHONE);
    try {
      clock.set(Date.UTC(2026, 10, 22, 9, 0, 0)); // Sunday 12:00
      expectRestricted(await agentLogin(t.app, 'agent.njeri', PHONE), 'schedule');
      clock.set(Date.UTC(2026, 10, 23, 17, 0, 0)); // Monday 20:00, the window's exclusive end
      expectRestricted(await agentLogin(t.app, 'agent.njeri', PHONE), 'schedule');
      clock.set(Date.UTC(2026, 10, 23, 3, 59, 0)); // Monday 06:59
      expectRestricted(await agentLogin(t.app, 'agent.njeri', PHONE), 'schedule');
      clock.set(Date.UTC(2026, 10, 28, 16, 59, 0)); // Saturday 19:59
      expect((await agentLogin(t.app, 'agent.njeri', PHONE)).statusCode).toBe(200);
    } finally {
      clock.set(MONDAY_NOON_NAIROBI);
    }
  });

  it('another phone of the same agent is 403 rule device until approved too (re-binding is an administrator\'s decision)', async () => {
    await seedUser(t.s, 'agent.kiptoo', { roles: ['agent'] });
    await bindPhone(t, admin, 'agent.kiptoo', PHONE);
    expectRestricted(await agentLogin(t.app, 'agent.kiptoo', OTHER_PHONE), 'device');
    expect((await agentLogin(t.app, 'agent.kiptoo', PHONE)).statusCode).toBe(200); // the bound one still works
    const user = (await t.s.users.findByLogin('agent.kiptoo'))!;
    const [request] = (await bindings(t.app, admin, `status=pending&user_id=${user.uuid}`)).bindings;
    expect((await decide(t.app, admin, request!.id, 'approve')).statusCode).toBe(200);
    expect((await agentLogin(t.app, 'agent.kiptoo', OTHER_PHONE)).statusCode).toBe(200);
  });

  it('agent/validate checks the policy where the agent is now: inside 200, outside 403 geofence, after hours 403 schedule', async () => {
    await seedUser(t.s, 'agent.achieng', { roles: ['agent'] });
    await bindPhone(t, admin, 'agent.achieng', PHONE);
    try {
      clock.set(Date.UTC(2026, 10, 23, 16, 40, 0)); // 19:40 in Nairobi
      const token = (await agentLogin(t.app, 'agent.achieng', PHONE)).json().access_token as string;
      const inside = await agentValidate(t.app, token, PHONE, BRANCH);
      expect(inside.statusCode, inside.body).toBe(200);
      expect(inside.json()).toMatchObject({ valid: true, channel: 'agent', roles: ['agent'] });
      expectRestricted(await agentValidate(t.app, token, PHONE, OUTSIDE), 'geofence');
      expectRestricted(await agentValidate(t.app, token, PHONE, { ...BRANCH, accuracy_m: 51 }), 'geofence');
      clock.advance(10 * 60_000); // 19:50: the session is still fresh (inactivity 15 minutes)
      expect((await agentValidate(t.app, token, PHONE, BRANCH)).statusCode).toBe(200);
      clock.advance(11 * 60_000); // 20:01
      expectRestricted(await agentValidate(t.app, token, PHONE, BRANCH), 'schedule');
      // The token stays bound to its phone (ruling 9): another device's header is refused first.
      expectError(await agentValidate(t.app, token, OTHER_PHONE, BRANCH), 401, 'FINGERPRINT_MISMATCH');
    } finally {
      clock.set(MONDAY_NOON_NAIROBI);
    }
  });

  it('agent/validate refuses bad coordinates with 422 VALIDATION_ERROR naming the field, and a web session with 403 CHANNEL_MISMATCH', async () => {
    await seedUser(t.s, 'agent.baraka', { roles: ['agent'] });
    await bindPhone(t, admin, 'agent.baraka', PHONE);
    const token = (await agentLogin(t.app, 'agent.baraka', PHONE)).json().access_token as string;
    for (const [body, field] of [
      [{ ...BRANCH, latitude: 91 }, 'latitude'], [{ ...BRANCH, longitude: -180.5 }, 'longitude'], [{ ...BRANCH, accuracy_m: -1 }, 'accuracy_m'],
      [{ ...BRANCH, latitude: 'NaN' }, 'latitude'], [{ latitude: 1, longitude: 2 }, 'accuracy_m'],
    ] as const) {
      const res = await agentValidate(t.app, token, PHONE, body as Location);
      expectError(res, 422, 'VALIDATION_ERROR');
      expect(JSON.stringify(res.json().details), JSON.stringify(body)).toContain(field);
    }
    const web = (await signIn(t.app, 'agent.baraka')).access_token;
    expectError(await agentValidate(t.app, web, '', BRANCH), 403, 'CHANNEL_MISMATCH');
  });

  it('a partial location at sign-in is 422 VALIDATION_ERROR naming the missing fields; a mobile sign-in without a fingerprint is 422', async () => {
    await seedUser(t.s, 'agent.partial', { roles: ['agent'] });
    const partial = await agentLogin(t.app, 'agent.partial', PHONE, { latitude: 1 });
    expectError(partial, 422, 'VALIDATION_ERROR');
    expect(partial.json().details.fields.map((f: { field: string }) => f.field)).toEqual(['longitude', 'accuracy_m']);
    const noFingerprint = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', payload: { username: 'agent.partial', password: STRONG_PASSWORD } });
    expectError(noFingerprint, 422, 'VALIDATION_ERROR');
  });

  it('threat: the web route cannot claim another channel (a laxer policy, or USSD without the gateway): 422, not a sign-in', async () => {
    await seedUser(t.s, 'channel.claimer', { roles: ['agent'] });
    for (const channel of ['agent', 'mobile', 'ussd']) {
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'channel.claimer', password: STRONG_PASSWORD, channel } }), 422, 'VALIDATION_ERROR');
    }
    const web = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'channel.claimer', password: STRONG_PASSWORD, channel: 'web' } });
    expect(web.json().user_profile.channel).toBe('web');
  });

  it('a second factor finishes without a location (the password step checked it) but not from an unbound phone', async () => {
    const agent = await seedUser(t.s, 'agent.twofa', { roles: ['agent'] });
    const { authenticator } = await enrolTotp(t.app, clock, (await signIn(t.app, 'agent.twofa')).access_token);
    await bindPhone(t, admin, 'agent.twofa', PHONE);
    const gate = expectError(await agentLogin(t.app, 'agent.twofa', PHONE), 401, '2FA_REQUIRED').details as { two_factor_token: string };
    const finish = await t.app.inject({
      method: 'POST', url: '/api/v1/2fa/totp/verify-login', headers: { 'x-device-fingerprint': PHONE },
      payload: { two_factor_token: gate.two_factor_token, code: authenticator.code(clock.now()) },
    });
    expect(finish.statusCode, finish.body).toBe(200);
    expect(finish.json().user_profile).toMatchObject({ channel: 'agent', mfa_completed: true });

    // The binding revoked between the two steps: the finishing request is refused.
    clock.advance(30_000);
    const again = expectError(await agentLogin(t.app, 'agent.twofa', PHONE), 401, '2FA_REQUIRED').details as { two_factor_token: string };
    const binding = (await bindings(t.app, admin, `status=approved&user_id=${agent.uuid}`)).bindings[0]!;
    expect((await decide(t.app, admin, binding.id, 'revoke')).statusCode).toBe(200);
    const refused = await t.app.inject({
      method: 'POST', url: '/api/v1/2fa/totp/verify-login', headers: { 'x-device-fingerprint': PHONE },
      payload: { two_factor_token: again.two_factor_token, code: authenticator.code(clock.now()) },
    });
    expectRestricted(refused, 'device');
  });
});

describe('device bindings: administration', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await createTestApp({ clock: new ManualClock(MONDAY_NOON_NAIROBI) });
    admin = await adminToken(t, 'devices.admin');
    await createPolicy(t.app, admin, { name: 'mobile: bound devices', channel: 'mobile', role: 'operator', rules: { require_bound_device: true } });
  });
  afterAll(async () => t.close());

  function mobileLogin(username: string, phone: string) {
    return t.app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', payload: { username, password: STRONG_PASSWORD, device_fingerprint: phone } });
  }

  it('revoking a binding ends the user\'s sessions on that device, audited; validate/mobile then refuses the token', async () => {
    const user = await seedUser(t.s, 'operator.revoked', { roles: ['operator'] });
    expectRestricted(await mobileLogin('operator.revoked', PHONE), 'device');
    const [pending] = (await bindings(t.app, admin, `user_id=${user.uuid}`)).bindings;
    expect(pending!.id).toMatch(UUID);
    const requested = await t.s.audit.query({ userId: user.uuid, eventType: 'DEVICE_BINDING_REQUESTED', limit: 10, offset: 0 });
    expect(requested.entries[0]!.details).toMatchObject({ binding_id: pending!.id });
    expect((await decide(t.app, admin, pending!.id, 'approve')).statusCode).toBe(200);
    const signedIn = await mobileLogin('operator.revoked', PHONE);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const token = signedIn.json().access_token as string;
    const validate = () => t.app.inject({ method: 'POST', url: '/api/v1/auth/validate/mobile', headers: { ...bearer(token), 'x-device-fingerprint': PHONE } });
    expect((await validate()).json()).toMatchObject({ valid: true, channel: 'mobile' });

    const revoked = await decide(t.app, admin, pending!.id, 'revoke');
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().binding.status).toBe('revoked');
    const audit = await t.s.audit.query({ eventType: 'DEVICE_BINDING_REVOKED', limit: 10, offset: 0 });
    expect(audit.entries[0]!.details).toMatchObject({ binding_id: pending!.id, user_id: user.uuid, previous_status: 'approved', sessions_ended: 1 });
    expectError(await validate(), 401, 'SESSION_INVALID');
    expectRestricted(await mobileLogin('operator.revoked', PHONE), 'device');
    // A revoked phone stays revoked: signing in again does not queue a new request.
    expect((await bindings(t.app, admin, `status=pending&user_id=${user.uuid}`)).total).toBe(0);
  });

  it('validate/mobile applies a device policy written after the sign-in (403 rule device, audited); a web token there is 403 CHANNEL_MISMATCH', async () => {
    const user = await seedUser(t.s, 'customer.later', { roles: ['customer'] });
    const signedIn = await mobileLogin('customer.later', PHONE);
    expect(signedIn.statusCode).toBe(200);
    const token = signedIn.json().access_token as string;
    const validate = () => t.app.inject({ method: 'POST', url: '/api/v1/auth/validate/mobile', headers: { ...bearer(token), 'x-device-fingerprint': PHONE } });
    expect((await validate()).statusCode).toBe(200);
    const id = await createPolicy(t.app, admin, { name: 'customers: bound devices', channel: 'mobile', role: 'customer', rules: { require_bound_device: true } });
    const before = await auditTotal(t.s, user.uuid, 'POLICY_VIOLATION');
    expectRestricted(await validate(), 'device');
    expect(await auditTotal(t.s, user.uuid, 'POLICY_VIOLATION')).toBe(before + 1);
    // Refused again and again, audited once a minute per session and rule (not per request).
    for (let i = 0; i < 5; i++) expectRestricted(await validate(), 'device');
    expect(await auditTotal(t.s, user.uuid, 'POLICY_VIOLATION')).toBe(before + 1);
    t.clock.advance(60_000);
    expectRestricted(await validate(), 'device');
    expect(await auditTotal(t.s, user.uuid, 'POLICY_VIOLATION')).toBe(before + 2);
    await deletePolicy(t.app, admin, id);
    expect((await validate()).statusCode).toBe(200);
    const web = (await signIn(t.app, 'customer.later')).access_token;
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate/mobile', headers: bearer(web) }), 403, 'CHANNEL_MISMATCH');
  });

  it('a thief cycling fingerprints opens at most 5 pending requests, one after another or all at once', async () => {
    const user = await seedUser(t.s, 'operator.flooded', { roles: ['operator'] });
    for (let i = 0; i < 8; i++) expectRestricted(await mobileLogin('operator.flooded', `stolen-device-${i}-xxxx`), 'device');
    expect((await bindings(t.app, admin, `status=pending&user_id=${user.uuid}`)).total).toBe(5);
    expect(await auditTotal(t.s, user.uuid, 'DEVICE_BINDING_REQUESTED')).toBe(5);

    const burst = await seedUser(t.s, 'operator.burst', { roles: ['operator'] });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => mobileLogin('operator.burst', `burst-device-${i}-xxxx`)));
    for (const r of results) expectRestricted(r, 'device');
    expect((await bindings(t.app, admin, `status=pending&user_id=${burst.uuid}`)).total).toBe(5);
    expect(await auditTotal(t.s, burst.uuid, 'DEVICE_BINDING_REQUESTED')).toBe(5);

    // The sign-ins above reach the policy one bcrypt apart; the requests themselves, all at once:
    const direct = await seedUser(t.s, 'operator.direct', { roles: ['operator'] });
    await Promise.all(Array.from({ length: 12 }, (_, i) => t.s.deviceBindings.request(direct, `direct-device-${i}-xxxx`, 'mobile', 'burst', {})));
    expect((await bindings(t.app, admin, `status=pending&user_id=${direct.uuid}`)).total).toBe(5);
    expect(await auditTotal(t.s, direct.uuid, 'DEVICE_BINDING_REQUESTED')).toBe(5);
  });

  it('four eyes: an administrator cannot approve their own device (403 DEVICE_BINDING_SELF_APPROVAL); twice is 409, unknown 404, a customer 403, no token 401', async () => {
    const self = await seedUser(t.s, 'operator.admin', { roles: ['admin', 'operator'] });
    const selfToken = (await signIn(t.app, 'operator.admin')).access_token;
    expectRestricted(await mobileLogin('operator.admin', PHONE), 'device');
    const [own] = (await bindings(t.app, admin, `user_id=${self.uuid}`)).bindings;
    expectError(await decide(t.app, selfToken, own!.id, 'approve'), 403, 'DEVICE_BINDING_SELF_APPROVAL');
    expect((await decide(t.app, admin, own!.id, 'approve')).statusCode).toBe(200);
    expectError(await decide(t.app, admin, own!.id, 'approve'), 409, 'DEVICE_BINDING_UNCHANGED');
    expectError(await decide(t.app, admin, '00000000-0000-4000-8000-000000000000', 'revoke'), 404, 'DEVICE_BINDING_NOT_FOUND');
    await seedUser(t.s, 'nosy.customer');
    const customer = (await signIn(t.app, 'nosy.customer')).access_token;
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/device-bindings', headers: bearer(customer) }), 403, 'PERMISSION_DENIED');
    expectError(await decide(t.app, customer, own!.id, 'revoke'), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/device-bindings' }), 401, 'TOKEN_MISSING');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/device-bindings?status=lost', headers: bearer(admin) }), 422, 'VALIDATION_ERROR');
  });

  it('require_second_factor (LoginFactor): the covered role on that channel must enrol and pass a factor; the web stays password-only', async () => {
    await seedUser(t.s, 'customer.factor', { roles: ['customer'] });
    const id = await createPolicy(t.app, admin, { name: 'customers on mobile: second factor', channel: 'mobile', role: 'customer', rules: { require_second_factor: true } });
    const setup = expectError(await mobileLogin('customer.factor', 'customer-phone-0001'), 403, 'MFA_SETUP_INCOMPLETE');
    expect(setup.details).toMatchObject({ setup_methods: expect.arrayContaining(['totp']) });
    expect(await t.s.database.db.selectFrom('sessions').innerJoin('users', 'users.id', 'sessions.user_id').select('session_id').where('users.username', '=', 'customer.factor').execute()).toHaveLength(0);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'customer.factor', password: STRONG_PASSWORD } })).statusCode).toBe(200);
    await deletePolicy(t.app, admin, id);
    expect((await mobileLogin('customer.factor', 'customer-phone-0001')).statusCode).toBe(200);
  });

  it('two parallel approvals of one request: one wins, the other is 409, one audit row', async () => {
    const user = await seedUser(t.s, 'operator.race', { roles: ['operator'] });
    expectRestricted(await mobileLogin('operator.race', PHONE), 'device');
    const [pending] = (await bindings(t.app, admin, `user_id=${user.uuid}`)).bindings;
    const results = await Promise.all([decide(t.app, admin, pending!.id, 'approve'), decide(t.app, admin, pending!.id, 'approve')]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const audit = await t.s.audit.query({ eventType: 'DEVICE_BINDING_APPROVED', limit: 50, offset: 0 });
    expect(audit.entries.filter((e) => (e.details as { binding_id: string }).binding_id === pending!.id)).toHaveLength(1);
  });

  it('threat: an integer device binding id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming the field, and changes nothing', async () => {
    const user = await seedUser(t.s, 'operator.integer', { roles: ['operator'] });
    expectRestricted(await mobileLogin('operator.integer', PHONE), 'device');
    const [pending] = (await bindings(t.app, admin, `user_id=${user.uuid}`)).bindings;
    const stored = () => t.s.database.db.selectFrom('device_bindings').selectAll().where('uuid', '=', pending!.id).executeTakeFirstOrThrow();
    const before = await stored();
    const decisions = async () => (await t.s.audit.query({ limit: 1000, offset: 0 })).entries.filter((e) => (e.details as { binding_id?: unknown }).binding_id === pending!.id).length;
    const decisionsBefore = await decisions();
    for (const verb of ['approve', 'revoke'] as const) {
      const body = expectError(await decide(t.app, admin, before.id, verb), 422, 'VALIDATION_ERROR');
      expect(body.details, verb).toMatchObject({ expected: 'uuid', fields: [{ location: 'params', field: 'id' }] });
      expect(body.message, verb).toContain('GET /api/v1/admin/device-bindings');
    }
    expect(await stored()).toEqual(before);
    expect(await decisions()).toBe(decisionsBefore);
    expectRestricted(await mobileLogin('operator.integer', PHONE), 'device');
    // The user filter takes the user's uuid too: their internal id is refused alike.
    const byInteger = expectError(await t.app.inject({ method: 'GET', url: `/api/v1/admin/device-bindings?user_id=${user.id}`, headers: bearer(admin) }), 422, 'VALIDATION_ERROR');
    expect(byInteger.details).toMatchObject({ expected: 'uuid', fields: [{ location: 'querystring', field: 'user_id' }] });
  });
});

describe('device bindings across nodes', () => {
  const nodes = useTwoNodes();

  // On PostgreSQL the event crosses by NOTIFY; on PGlite the two nodes share one database and its in-process bus.
  it('an approval on node a lets the device in on node b as soon as b hears the NOTIFY (b had cached its absence)', async () => {
    const { a, b } = nodes;
    const admin = await adminToken(a, 'nodes.admin');
    await createPolicy(a.app, admin, { name: 'operators: bound', channel: 'mobile', role: 'operator', rules: { require_bound_device: true } });
    await b.s.accessPolicy.reload();
    const user = await seedUser(a.s, 'operator.nodes', { roles: ['operator'] });
    const login = (app: App) => app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', payload: { username: 'operator.nodes', password: STRONG_PASSWORD, device_fingerprint: PHONE } });
    expectRestricted(await login(b.app), 'device'); // b caches "no approved devices" for this user
    const [pending] = (await bindings(a.app, admin, `user_id=${user.uuid}`)).bindings;
    const heard = signal();
    b.s.bus.subscribe((e) => {
      if (e.type === 'device-bindings.changed') heard.fire();
    });
    expect((await decide(a.app, admin, pending!.id, 'approve')).statusCode).toBe(200);
    await heard.promise;
    expect((await login(b.app)).statusCode).toBe(200);
  });
});
