/**
 * Per-channel access policy (issue 10, section 2): IP allow and deny lists (IPv4 and IPv6),
 * schedules in a time zone across a daylight-saving change, closed channels, geofences without
 * a location, narrowing by role, administration and its validation, and a change reaching a
 * second node. Every refusal asserts 403 POLICY_RESTRICTED with the rule; the IP and
 * second-factor tests also count the audit rows and that no session was made (the refusal is
 * one code path, src/access/engine.ts `refuse`). The clock is frozen; nothing sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { signal } from '../harness/comparisons.js';
import { createTestApp, useTwoNodes, type TestApp } from '../harness/app.js';
import { bearer, expectError, loginFrom, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

const OFFICE_V4 = '10.20.1.5';
const OFFICE_V6 = '2001:db8:40::7';
const ELSEWHERE = '192.0.2.44';
const NO_SUCH_POLICY = '00000000-0000-4000-8000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function adminToken(t: TestApp, name: string): Promise<string> {
  await seedUser(t.s, name, { roles: ['admin'] });
  return (await signIn(t.app, name)).access_token;
}

function createPolicy(app: App, token: string, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(token), payload: body });
}

async function withPolicy(app: App, token: string, body: Record<string, unknown>): Promise<string> {
  const res = await createPolicy(app, token, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ policy: { id: string } }>().policy.id;
}

async function deletePolicy(app: App, token: string, id: string): Promise<void> {
  const res = await app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${id}`, headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
}

function expectRestricted(res: Awaited<ReturnType<typeof loginFrom>>, rule: string): void {
  expectError(res, 403, 'POLICY_RESTRICTED');
  expect(withoutRequestId(res.json().details)).toEqual({ rule });
}

async function sessionsOf(t: TestApp, userId: number): Promise<number> {
  return (await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', userId).execute()).length;
}

/** A sign-in on `channel`, by its route: the web form, or the app's (mobile and agent) with a device fingerprint. */
function loginOn(app: App, channel: string, username: string, remoteAddress = OFFICE_V4) {
  const app_ = channel === 'mobile' || channel === 'agent';
  return app.inject({
    method: 'POST', url: app_ ? '/api/v1/auth/login/mobile' : '/api/v1/auth/login', remoteAddress,
    payload: { username, password: STRONG_PASSWORD, ...(app_ ? { channel, device_fingerprint: 'fp-access-policy-test' } : {}) },
  });
}

describe('access policy at sign-in', () => {
  let t: TestApp;
  let clock: ManualClock;
  let admin: string;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0)); // Monday 12:00 in Nairobi
    t = await createTestApp({ clock });
    admin = await adminToken(t, 'policy.admin');
  });
  afterAll(async () => t.close());

  it('IP allow list: outside the bank\'s networks (IPv4 or IPv6) is 403 POLICY_RESTRICTED rule ip, audited, no session', async () => {
    const user = await seedUser(t.s, 'ip.teller', { roles: ['staff'] });
    const id = await withPolicy(t.app, admin, { name: 'staff on web: bank networks', channel: 'web', role: 'staff', rules: { ip: { allow: ['10.20.0.0/16', '2001:db8:40::/48'] } } });
    expect((await loginFrom(OFFICE_V4, t.app, 'ip.teller')).statusCode).toBe(200);
    expect((await loginFrom(OFFICE_V6, t.app, 'ip.teller')).statusCode).toBe(200);
    expect((await loginFrom(`::ffff:${OFFICE_V4}`, t.app, 'ip.teller')).statusCode).toBe(200); // IPv4-mapped form
    const before = await sessionsOf(t, user.id);
    expectRestricted(await loginFrom(ELSEWHERE, t.app, 'ip.teller'), 'ip');
    expectRestricted(await loginFrom('2001:db8:41::7', t.app, 'ip.teller'), 'ip');
    expect(await sessionsOf(t, user.id)).toBe(before);
    const audit = await t.s.audit.query({ userId: user.uuid, eventType: 'POLICY_VIOLATION', limit: 10, offset: 0 });
    expect(audit.total).toBe(2);
    expect(audit.entries[0]).toMatchObject({ status: 'FAILURE', channel: 'web', details: { rule: 'ip', policy_id: id } });
    await deletePolicy(t.app, admin, id);
    expect((await loginFrom(ELSEWHERE, t.app, 'ip.teller')).statusCode).toBe(200);
  });

  it('IP deny list wins over the allow list; other roles on the channel are not covered by a role policy', async () => {
    await seedUser(t.s, 'deny.teller', { roles: ['staff'] });
    await seedUser(t.s, 'deny.customer');
    const id = await withPolicy(t.app, admin, { name: 'staff: not the guest network', channel: 'web', role: 'staff', rules: { ip: { allow: ['10.20.0.0/16'], deny: ['10.20.1.0/24'] } } });
    expectRestricted(await loginFrom(OFFICE_V4, t.app, 'deny.teller'), 'ip');
    expect((await loginFrom('10.20.2.9', t.app, 'deny.teller')).statusCode).toBe(200);
    expect((await loginFrom(OFFICE_V4, t.app, 'deny.customer')).statusCode).toBe(200);
    await deletePolicy(t.app, admin, id);
  });

  it('schedule in Africa/Nairobi: Monday to Saturday 07:00-20:00 local; 20:00 and Sunday are refused with rule schedule', async () => {
    await seedUser(t.s, 'hours.agent', { roles: ['staff'] });
    const id = await withPolicy(t.app, admin, { name: 'staff hours', channel: 'web', role: 'staff', rules: { schedule: [{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], from: '07:00', to: '20:00' }] } });
    const at = (iso: string) => clock.set(Date.parse(iso));
    at('2026-11-23T04:00:00Z'); // Monday 07:00 Nairobi (UTC+3): the first allowed minute
    expect((await loginFrom(OFFICE_V4, t.app, 'hours.agent')).statusCode).toBe(200);
    at('2026-11-23T03:59:59Z'); // 06:59:59
    expectRestricted(await loginFrom(OFFICE_V4, t.app, 'hours.agent'), 'schedule');
    at('2026-11-23T17:00:00Z'); // 20:00: the end is exclusive
    expectRestricted(await loginFrom(OFFICE_V4, t.app, 'hours.agent'), 'schedule');
    at('2026-11-28T16:59:00Z'); // Saturday 19:59
    expect((await loginFrom(OFFICE_V4, t.app, 'hours.agent')).statusCode).toBe(200);
    at('2026-11-29T09:00:00Z'); // Sunday noon
    expectRestricted(await loginFrom(OFFICE_V4, t.app, 'hours.agent'), 'schedule');
    at('2026-11-23T09:00:00Z');
    await deletePolicy(t.app, admin, id);
  });

  it('schedule across a daylight-saving change: 09:00-17:00 Europe/London is 09:00Z before 29 March 2026 and 08:00Z after', async () => {
    await seedUser(t.s, 'london.staff', { roles: ['staff'] });
    const id = await withPolicy(t.app, admin, { name: 'london hours', channel: 'web', role: 'staff', rules: { schedule: [{ time_zone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' }] } });
    clock.set(Date.parse('2026-03-27T08:30:00Z')); // Friday 08:30 GMT
    expectRestricted(await loginFrom(OFFICE_V4, t.app, 'london.staff'), 'schedule');
    clock.set(Date.parse('2026-03-30T08:30:00Z')); // Monday 09:30 BST
    expect((await loginFrom(OFFICE_V4, t.app, 'london.staff')).statusCode).toBe(200);
    clock.set(Date.parse('2026-03-30T16:00:00Z')); // 17:00 BST
    expectRestricted(await loginFrom(OFFICE_V4, t.app, 'london.staff'), 'schedule');
    clock.set(Date.UTC(2026, 10, 23, 9, 0, 0));
    await deletePolicy(t.app, admin, id);
  });

  it('a channel closed to a role is 403 rule channel, before any other rule; the other channels stay open', async () => {
    await seedUser(t.s, 'closed.customer');
    const id = await withPolicy(t.app, admin, { name: 'customers not on agent', channel: 'agent', role: 'customer', rules: { allow_channel: false, ip: { allow: ['10.0.0.0/8'] } } });
    expectRestricted(await loginOn(t.app, 'agent', 'closed.customer', ELSEWHERE), 'channel');
    expect((await loginOn(t.app, 'web', 'closed.customer')).statusCode).toBe(200);
    await deletePolicy(t.app, admin, id);
  });

  it('a geofence with no location in the request is refused with rule geofence (fail closed)', async () => {
    await seedUser(t.s, 'fenced.agent', { roles: ['agent'] });
    const id = await withPolicy(t.app, admin, { name: 'agent branch area', channel: 'agent', role: 'agent', rules: { geofences: [{ type: 'circle', lat: -1.2864, lon: 36.8172, radius_m: 250 }] } });
    expectRestricted(await loginOn(t.app, 'agent', 'fenced.agent'), 'geofence');
    await deletePolicy(t.app, admin, id);
  });

  it('the second factor is checked against the policy again: a 2FA token obtained in the office is refused when finished from outside (rule ip), no session', async () => {
    const user = await seedUser(t.s, 'twofa.teller', { roles: ['staff'] });
    const { authenticator } = await enrolTotp(t.app, clock, (await signIn(t.app, 'twofa.teller')).access_token);
    const id = await withPolicy(t.app, admin, { name: 'staff 2fa: bank networks', channel: 'web', role: 'staff', rules: { ip: { allow: ['10.20.0.0/16'] } } });
    const gate = expectError(await loginFrom(OFFICE_V4, t.app, 'twofa.teller'), 401, '2FA_REQUIRED').details as { two_factor_token: string };
    const before = await sessionsOf(t, user.id);
    const finish = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify-login', remoteAddress: ELSEWHERE, payload: { two_factor_token: gate.two_factor_token, code: authenticator.code(clock.now()) } });
    expectRestricted(finish, 'ip');
    expect(await sessionsOf(t, user.id)).toBe(before);
    await deletePolicy(t.app, admin, id);
  });

  it('a disabled policy restricts nothing', async () => {
    await seedUser(t.s, 'disabled.policy', { roles: ['staff'] });
    const id = await withPolicy(t.app, admin, { name: 'disabled', channel: 'web', role: 'staff', enabled: false, rules: { allow_channel: false } });
    expect((await loginFrom(ELSEWHERE, t.app, 'disabled.policy')).statusCode).toBe(200);
    await deletePolicy(t.app, admin, id);
  });
});

describe('access policy administration', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await adminToken(t, 'policy.admin2');
  });
  afterAll(async () => t.close());

  it.each([
    [{ ip: { allow: ['10.0.0.0/33'] } }, 'rules.ip.allow[0]'],
    [{ ip: { deny: ['not-an-address'] } }, 'rules.ip.deny[0]'],
    [{ schedule: [{ time_zone: 'Mars/Olympus_Mons', days: ['mon'], from: '07:00', to: '20:00' }] }, 'rules.schedule[0].time_zone'],
    [{ schedule: [{ time_zone: 'Africa/Nairobi', days: ['mon'], from: '25:00', to: '20:00' }] }, 'rules.schedule[0].from'],
    [{ geofences: [{ type: 'polygon', points: [[0, 0], [0, 1]] }] }, 'rules.geofences.0.points'], // caught by the schema: two points
  ])('rules that do not compile are 422 VALIDATION_ERROR naming the field (%j)', async (rules, field) => {
    const res = await createPolicy(t.app, admin, { name: `bad ${field}`, channel: 'web', rules });
    expectError(res, 422, 'VALIDATION_ERROR');
    const fields = res.json().details.fields as Array<{ field: string }>;
    expect(fields.map((f) => f.field)).toContain(field);
    expect((await t.s.database.db.selectFrom('access_policies').select('id').where('name', '=', `bad ${field}`).execute())).toHaveLength(0);
  });

  it('hostile and impossible input: unknown role 422, unknown rule 422, an unknown channel 422, an out-of-range latitude 422, a taken name 409 ACCESS_POLICY_EXISTS, a missing id 404', async () => {
    expectError(await createPolicy(t.app, admin, { name: 'r', channel: 'web', role: 'no_such_role', rules: {} }), 422, 'VALIDATION_ERROR');
    expectError(await createPolicy(t.app, admin, { name: 'r', channel: 'web', rules: { ipp: {} } }), 422, 'VALIDATION_ERROR');
    expectError(await createPolicy(t.app, admin, { name: 'r', channel: 'sms', rules: {} }), 422, 'VALIDATION_ERROR');
    expectError(await createPolicy(t.app, admin, { name: 'r', channel: 'agent', rules: { geofences: [{ type: 'circle', lat: 91, lon: 0, radius_m: 10 }] } }), 422, 'VALIDATION_ERROR');
    const id = await withPolicy(t.app, admin, { name: 'unique', channel: 'web', rules: {} });
    expectError(await createPolicy(t.app, admin, { name: 'unique', channel: 'mobile', rules: {} }), 409, 'ACCESS_POLICY_EXISTS');
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/admin/access-policies/${NO_SUCH_POLICY}`, headers: bearer(admin) }), 404, 'ACCESS_POLICY_NOT_FOUND');
    expectError(await t.app.inject({ method: 'PUT', url: `/api/v1/admin/access-policies/${NO_SUCH_POLICY}`, headers: bearer(admin), payload: { name: 'x', channel: 'web', rules: {} } }), 404, 'ACCESS_POLICY_NOT_FOUND');
    await deletePolicy(t.app, admin, id);
  });

  it('renaming onto a taken name is 409 ACCESS_POLICY_EXISTS, also for two renames to one name at once (one wins)', async () => {
    const put = (id: string, name: string) => t.app.inject({ method: 'PUT', url: `/api/v1/admin/access-policies/${id}`, headers: bearer(admin), payload: { name, channel: 'web', rules: {} } });
    const first = await withPolicy(t.app, admin, { name: 'rename first', channel: 'web', rules: {} });
    const second = await withPolicy(t.app, admin, { name: 'rename second', channel: 'web', rules: {} });
    expectError(await put(second, 'rename first'), 409, 'ACCESS_POLICY_EXISTS');
    const both = await Promise.all([put(first, 'rename target'), put(second, 'rename target')]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expectError(both.find((r) => r.statusCode === 409)!, 409, 'ACCESS_POLICY_EXISTS');
    const names = (await t.s.database.db.selectFrom('access_policies').select('name').where('uuid', 'in', [first, second]).execute()).map((r) => r.name).sort();
    expect(names).toContain('rename target');
    expect(await t.s.audit.query({ eventType: 'ACCESS_POLICY_UPDATED', limit: 100, offset: 0 }).then((r) => r.entries.filter((e) => (e.details as { name: string }).name === 'rename target'))).toHaveLength(1);
    await deletePolicy(t.app, admin, first);
    await deletePolicy(t.app, admin, second);
  });

  it('only holders of policies.manage may read or change policies: 403 for a customer, 401 without a token', async () => {
    await seedUser(t.s, 'curious.customer');
    const customer = (await signIn(t.app, 'curious.customer')).access_token;
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/access-policies', headers: bearer(customer) }), 403, 'PERMISSION_DENIED');
    expectError(await createPolicy(t.app, customer, { name: 'sneaky', channel: 'web', rules: { allow_channel: false } }), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/access-policies' }), 401, 'TOKEN_MISSING');
  });

  it('create, read, replace, list and delete, each change audited with who made it', async () => {
    const id = await withPolicy(t.app, admin, { name: 'lifecycle', channel: 'mobile', rules: { ip: { deny: ['198.51.100.0/24'] } } });
    expect(id).toMatch(UUID);
    const read = await t.app.inject({ method: 'GET', url: `/api/v1/admin/access-policies/${id}`, headers: bearer(admin) });
    expect(read.json().policy).toMatchObject({ id, name: 'lifecycle', channel: 'mobile', role: null, enabled: true, rules: { ip: { deny: ['198.51.100.0/24'] } } });
    const put = await t.app.inject({ method: 'PUT', url: `/api/v1/admin/access-policies/${id}`, headers: bearer(admin), payload: { name: 'lifecycle', channel: 'mobile', enabled: false, rules: {} } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().policy).toMatchObject({ enabled: false, rules: {} });
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/admin/access-policies', headers: bearer(admin) });
    expect(list.json().policies.map((p: { id: string }) => p.id)).toContain(id);
    await deletePolicy(t.app, admin, id);
    for (const eventType of ['ACCESS_POLICY_CREATED', 'ACCESS_POLICY_UPDATED', 'ACCESS_POLICY_DELETED'] as const) {
      const a = await t.s.audit.query({ eventType, limit: 10, offset: 0 });
      expect(a.entries.find((e) => (e.details as { policy_id?: string }).policy_id === id), eventType).toMatchObject({ username: 'policy.admin2', status: 'SUCCESS' });
    }
  });

  it('threat: an integer access policy id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming the field, and changes nothing', async () => {
    const id = await withPolicy(t.app, admin, { name: 'integer id', channel: 'web', rules: { ip: { deny: ['198.51.100.0/24'] } } });
    const stored = () => t.s.database.db.selectFrom('access_policies').selectAll().where('uuid', '=', id).executeTakeFirst();
    const before = await stored();
    const audited = async () => (await t.s.audit.query({ limit: 1000, offset: 0 })).entries.filter((e) => (e.details as { policy_id?: unknown }).policy_id === id).length;
    const auditedBefore = await audited();
    const url = `/api/v1/admin/access-policies/${before!.id}`;
    for (const [method, payload] of [['GET', undefined], ['PUT', { name: 'taken over', channel: 'web', enabled: false, rules: {} }], ['DELETE', undefined]] as const) {
      const res = await t.app.inject({ method, url, headers: bearer(admin), ...(payload ? { payload } : {}) });
      const body = expectError(res, 422, 'VALIDATION_ERROR');
      expect(body.details, method).toMatchObject({ expected: 'uuid', fields: [{ location: 'params', field: 'id' }] });
      expect(body.message, method).toContain('GET /api/v1/admin/access-policies');
    }
    expect(await stored()).toEqual(before);
    expect(await audited()).toBe(auditedBefore);
    await deletePolicy(t.app, admin, id);
  });
});

describe('access policy on two nodes', () => {
  const nodes = useTwoNodes();

  it('the periodic sync picks up a policy written behind the nodes\' back (a lost notification)', async () => {
    const { a, b } = nodes;
    await seedUser(a.s, 'sync.staff', { roles: ['staff'] });
    const now = new Date(a.clock.now());
    await a.s.database.db.insertInto('access_policies').values({ name: 'written directly', channel: 'web', role: 'staff', enabled: true, rules: JSON.stringify({ allow_channel: false }), created_at: now, updated_at: now }).execute();
    expect((await loginFrom(OFFICE_V4, b.app, 'sync.staff')).statusCode).toBe(200); // not known yet
    await b.scheduler.runNow('access policy sync');
    expectRestricted(await loginFrom(OFFICE_V4, b.app, 'sync.staff'), 'channel');
    await a.s.database.db.deleteFrom('access_policies').where('name', '=', 'written directly').execute();
    await b.scheduler.runNow('access policy sync');
    await a.scheduler.runNow('access policy sync');
  });

  // On PostgreSQL the event crosses by NOTIFY; on PGlite the two nodes share one database and its in-process bus.
  it('a policy created on node a refuses sign-ins on node b as soon as b hears the NOTIFY', async () => {
    const { a, b } = nodes;
    await seedUser(a.s, 'notified.staff', { roles: ['staff'] });
    const token = await adminToken(a, 'policy.admin3');
    const heard = signal();
    b.s.bus.subscribe((e) => {
      if (e.type === 'access-policies.changed') heard.fire();
    });
    await withPolicy(a.app, token, { name: 'staff closed', channel: 'web', role: 'staff', rules: { allow_channel: false } });
    await heard.promise;
    await b.s.accessPolicy.whenIdle();
    expectRestricted(await loginFrom(OFFICE_V4, b.app, 'notified.staff'), 'channel');
  });
});
