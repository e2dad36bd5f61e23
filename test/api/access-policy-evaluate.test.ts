/**
 * "Would this sign-in be allowed?" (POST /api/v1/admin/access-policies/evaluate): the answer is
 * the sign-in check's own (src/access/engine.ts `simulate`): allowed, or refused by the IP list,
 * the schedule or the geofence with the policy that has the rule, exactly as a real sign-in from
 * the same address is refused. Threats: the tester used to change or record something (it
 * writes no audit row and opens no session); a caller without `policies.manage` learning the
 * policies through it (403); a caller with `policies.manage` but not `users.read` learning
 * whether an account exists and its roles by naming it (403 before any look-up, the same for an
 * existing and a missing user); malformed input taken as a sign-in (422, 400). The clock is frozen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { bodyWithoutRequestId, withoutRequestId } from '../harness/request-id.js';

const BRANCH_NET = '10.20.0.0/16';
const IN_BRANCH = '10.20.1.5';
const OUTSIDE = '192.0.2.44';
/** Nairobi, and a point about 2 km away. */
const BRANCH = { latitude: -1.2864, longitude: 36.8172 };
const FAR = { latitude: -1.3044, longitude: 36.8172 };
const MONDAY_NOON_NAIROBI = '2026-11-23T09:00:00Z';
const SUNDAY_NOON_NAIROBI = '2026-11-29T09:00:00Z';
const PHONE = 'fp-evaluate-agent-phone';

describe('POST /api/v1/admin/access-policies/evaluate', () => {
  let t: TestApp;
  let admin: string;
  let policyId: string;
  let agent: { uuid: string; id: number };
  const evaluate = (payload: unknown, token = admin) =>
    t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies/evaluate', headers: bearer(token), payload: payload as Record<string, unknown> });
  const verdict = async (payload: Record<string, unknown>) => {
    const res = await evaluate({ channel: 'agent', username: 'eval.agent', ip: IN_BRANCH, location: { ...BRANCH, accuracy_m: 20 }, at: MONDAY_NOON_NAIROBI, ...payload });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ allowed: boolean; rule: string | null; refusal: { status_code: number; error_code: string } | null; policy: { id: string; name: string } | null; roles: string[] }>();
  };

  beforeAll(async () => {
    t = await createTestApp({ clock: new ManualClock(Date.parse(MONDAY_NOON_NAIROBI)) });
    await seedUser(t.s, 'eval.admin', { roles: ['admin'] });
    admin = (await signIn(t.app, 'eval.admin')).access_token;
    agent = await seedUser(t.s, 'eval.agent', { roles: ['agent'] });
    const res = await t.app.inject({
      method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(admin),
      payload: {
        name: 'Agents: branch network, hours, area', channel: 'agent', role: 'agent',
        rules: {
          ip: { allow: [BRANCH_NET] },
          schedule: [{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], from: '07:00', to: '20:00' }],
          geofences: [{ type: 'circle', ...{ lat: BRANCH.latitude, lon: BRANCH.longitude }, radius_m: 500 }],
        },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    policyId = res.json<{ policy: { id: string } }>().policy.id;
  });
  afterAll(async () => t.close());

  it('allowed: in the branch network, in working hours, inside the area', async () => {
    expect(await verdict({})).toEqual({
      allowed: true, rule: null, refusal: null, policy: null, roles: ['agent'],
      second_factor: { required: false, methods: null }, at: '2026-11-23T09:00:00.000Z',
    });
  });

  it('refused by the IP list: names the rule, the policy and 403 POLICY_RESTRICTED, as a real sign-in from there is refused', async () => {
    expect(await verdict({ ip: OUTSIDE })).toMatchObject({ allowed: false, rule: 'ip', refusal: { status_code: 403, error_code: 'POLICY_RESTRICTED' }, policy: { id: policyId, name: 'Agents: branch network, hours, area' } });
    const real = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', remoteAddress: OUTSIDE, payload: { username: 'eval.agent', password: STRONG_PASSWORD, device_fingerprint: PHONE, channel: 'agent', ...BRANCH, accuracy_m: 20 } });
    const body = expectError(real, 403, 'POLICY_RESTRICTED');
    expect(withoutRequestId(body.details)).toEqual({ rule: 'ip' });
  });

  it('refused by the schedule: Sunday noon in Nairobi', async () => {
    expect(await verdict({ at: SUNDAY_NOON_NAIROBI })).toMatchObject({ allowed: false, rule: 'schedule', refusal: { error_code: 'POLICY_RESTRICTED' }, policy: { id: policyId } });
  });

  it('refused by the geofence: 2 km away, or no location at all', async () => {
    expect(await verdict({ location: { ...FAR, accuracy_m: 20 } })).toMatchObject({ allowed: false, rule: 'geofence', policy: { id: policyId } });
    const res = await evaluate({ channel: 'agent', roles: ['agent'], ip: IN_BRANCH, at: MONDAY_NOON_NAIROBI });
    expect(res.json()).toMatchObject({ allowed: false, rule: 'geofence', roles: ['agent'] });
  });

  it('who may use the channel comes first: a customer on the agent channel is refused by rule channel, with no policy', async () => {
    expect(await verdict({ username: undefined, roles: ['customer'] })).toMatchObject({ allowed: false, rule: 'channel', policy: null, roles: ['customer'] });
  });

  it('threat: the tester records nothing (no POLICY_VIOLATION audited, no session)', async () => {
    const before = await auditTotal(t.s, agent.uuid, 'POLICY_VIOLATION');
    const sessions = async () => (await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', agent.id).execute()).length;
    const sessionsBefore = await sessions();
    await verdict({ ip: OUTSIDE });
    await verdict({ at: SUNDAY_NOON_NAIROBI });
    expect(await auditTotal(t.s, agent.uuid, 'POLICY_VIOLATION')).toBe(before);
    expect(await sessions()).toBe(sessionsBefore);
  });

  it('bad input: an address that is not one, both a user and roles, an unknown user, an unknown channel: 422 VALIDATION_ERROR naming the field; broken JSON 400', async () => {
    const field = async (payload: Record<string, unknown>, name: string) => {
      const body = expectError(await evaluate({ channel: 'agent', ip: IN_BRANCH, ...payload }), 422, 'VALIDATION_ERROR');
      expect((body.details as { fields: { field: string }[] }).fields.map((f) => f.field)).toContain(name);
    };
    await field({ ip: '10.20.1.999' }, 'ip');
    await field({ ip: '10.20.0.0/16' }, 'ip');
    await field({ username: 'eval.agent', roles: ['agent'] }, 'roles');
    await field({ username: 'nobody.here' }, 'username');
    await field({ channel: 'branch' }, 'channel');
    await field({ location: { latitude: 91, longitude: 0 } }, 'location.latitude');
    await field({ at: 'yesterday' }, 'at');
    const broken = await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies/evaluate', headers: bearer(admin, { 'content-type': 'application/json' }), payload: '{"channel": "agent",' });
    expectError(broken, 400, 'MALFORMED_REQUEST');
  });

  it('threat: a signed-in user without policies.manage is 403 PERMISSION_DENIED; no token is 401', async () => {
    await seedUser(t.s, 'eval.staff', { roles: ['staff'] });
    const staff = (await signIn(t.app, 'eval.staff')).access_token;
    expectError(await evaluate({ channel: 'agent', roles: ['agent'], ip: OUTSIDE }, staff), 403, 'PERMISSION_DENIED');
    const anonymous = await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies/evaluate', payload: { channel: 'agent', ip: OUTSIDE } });
    expect(anonymous.statusCode).toBe(401);
  });

  it('threat: a policies.manage-only caller naming a user (existing or not) is 403 PERMISSION_DENIED alike: no account enumeration; roles given directly still work', async () => {
    const role = await t.app.inject({ method: 'POST', url: '/api/v1/admin/roles', headers: bearer(admin), payload: { name: 'eval.policies.only', description: 'Access policies only', permissions: ['policies.manage'] } });
    expect(role.statusCode, role.body).toBe(201);
    await seedUser(t.s, 'eval.policies', { roles: ['eval.policies.only'] });
    const policiesOnly = (await signIn(t.app, 'eval.policies')).access_token;
    const ask = (username: string) => evaluate({ channel: 'agent', username, ip: IN_BRANCH, at: MONDAY_NOON_NAIROBI }, policiesOnly);
    const existing = expectError(await ask('eval.agent'), 403, 'PERMISSION_DENIED');
    const missing = expectError(await ask('nobody.here'), 403, 'PERMISSION_DENIED');
    expect(bodyWithoutRequestId(existing)).toEqual(bodyWithoutRequestId(missing));
    expect(existing.details).toMatchObject({ required_permission: 'users.read' });
    const byRoles = await evaluate({ channel: 'agent', roles: ['agent'], ip: IN_BRANCH, location: { ...BRANCH, accuracy_m: 20 }, at: MONDAY_NOON_NAIROBI }, policiesOnly);
    expect(byRoles.statusCode, byRoles.body).toBe(200);
    expect(byRoles.json()).toMatchObject({ allowed: true, roles: ['agent'] });
  });
});
