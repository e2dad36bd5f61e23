/**
 * Threat: escaping a channel's policy by naming another channel. The app's sign-in takes
 * `"channel": "agent"` from its body; a customer refused on `mobile` (unbound phone, address
 * outside the allow list) must not get in by naming `agent`, whose policies narrowed to the
 * `agent` role do not cover them. The agent channel is open only to holders of a role allowed
 * on it (default `agent`; set by administrators, audited): anyone else is 403
 * POLICY_RESTRICTED rule `channel` before any session is opened, and after a change of who may
 * use the channel a session whose user no longer qualifies is refused from its next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/platform/http/app.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

const OFFICE = '10.20.1.5';
const ELSEWHERE = '192.0.2.44';
const PHONE = 'fp-channel-escape-phone';

function expectRestricted(res: { statusCode: number; json(): unknown; body: string }, rule: string): void {
  const body = expectError(res, 403, 'POLICY_RESTRICTED');
  expect(withoutRequestId(body.details)).toEqual({ rule });
}

function appLogin(app: App, username: string, channel: 'mobile' | 'agent', remoteAddress = OFFICE) {
  return app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', remoteAddress, payload: { username, password: STRONG_PASSWORD, device_fingerprint: PHONE, channel } });
}

describe('threat: a customer names the agent channel to escape the mobile policy', () => {
  let t: TestApp;
  let admin: string;
  const sessionsOf = async (userId: number) => (await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', userId).execute()).length;
  const put = (channel: string, allowed_roles: unknown, token = admin) =>
    t.app.inject({ method: 'PUT', url: `/api/v1/admin/channels/${channel}`, headers: bearer(token), payload: { allowed_roles } });
  async function withMobilePolicy(rules: Record<string, unknown>, run: () => Promise<void>): Promise<void> {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(admin), payload: { name: `mobile ${JSON.stringify(rules)}`, channel: 'mobile', rules } });
    expect(res.statusCode, res.body).toBe(201);
    try {
      await run();
    } finally {
      await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${res.json<{ policy: { id: string } }>().policy.id}`, headers: bearer(admin) });
    }
  }

  beforeAll(async () => {
    t = await createTestApp();
    await seedUser(t.s, 'escape.admin', { roles: ['admin'] });
    admin = (await signIn(t.app, 'escape.admin')).access_token;
  });
  afterAll(async () => t.close());

  it('a mobile policy requiring bound devices: the unbound phone is refused on mobile (device) and on agent (channel), no session, audited', async () => {
    const customer = await seedUser(t.s, 'escape.device');
    await withMobilePolicy({ require_bound_device: true }, async () => {
      expectRestricted(await appLogin(t.app, 'escape.device', 'mobile'), 'device');
      expectRestricted(await appLogin(t.app, 'escape.device', 'agent'), 'channel');
      expect(await sessionsOf(customer.id)).toBe(0);
      const audit = await t.s.audit.query({ userId: customer.uuid, eventType: 'POLICY_VIOLATION', limit: 10, offset: 0 });
      expect(audit.entries.map((e) => [e.channel, (e.details as { rule: string }).rule]).sort()).toEqual([['agent', 'channel'], ['mobile', 'device']]);
    });
  });

  it('a mobile IP allow list: a customer outside it is refused on mobile (ip) and on agent (channel)', async () => {
    const customer = await seedUser(t.s, 'escape.ip');
    await withMobilePolicy({ ip: { allow: ['10.0.0.0/8'] } }, async () => {
      expectRestricted(await appLogin(t.app, 'escape.ip', 'mobile', ELSEWHERE), 'ip');
      expectRestricted(await appLogin(t.app, 'escape.ip', 'agent', ELSEWHERE), 'channel');
      expect(await sessionsOf(customer.id)).toBe(0);
    });
  });

  it('an agent still signs in on the agent channel, and the token says so', async () => {
    await seedUser(t.s, 'escape.real.agent', { roles: ['agent'] });
    const res = await appLogin(t.app, 'escape.real.agent', 'agent');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user_profile: { channel: 'agent', roles: ['agent'] } });
  });

  it('administrators set who may use a channel (audited); a session whose user no longer qualifies is refused from its next request, refresh included', async () => {
    const customer = await seedUser(t.s, 'escape.widened');
    const listed = await t.app.inject({ method: 'GET', url: '/api/v1/admin/channels', headers: bearer(admin) });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().channels).toEqual([
      { channel: 'web', allowed_roles: null, default: true, default_allowed_roles: null, updated_at: null, updated_by: null },
      { channel: 'mobile', allowed_roles: null, default: true, default_allowed_roles: null, updated_at: null, updated_by: null },
      { channel: 'ussd', allowed_roles: null, default: true, default_allowed_roles: null, updated_at: null, updated_by: null },
      { channel: 'agent', allowed_roles: ['agent'], default: true, default_allowed_roles: ['agent'], updated_at: null, updated_by: null },
    ]);

    const widened = await put('agent', ['agent', 'customer']);
    expect(widened.statusCode, widened.body).toBe(200);
    expect(widened.json().channel).toMatchObject({ channel: 'agent', allowed_roles: ['agent', 'customer'], default: false });
    const res = await appLogin(t.app, 'escape.widened', 'agent');
    expect(res.statusCode, res.body).toBe(200);
    const { access_token: token, refresh_token: refresh } = res.json<{ access_token: string; refresh_token: string }>();
    const headers = bearer(token, { 'x-device-fingerprint': PHONE });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers })).statusCode).toBe(200);

    t.clock.advance(1000);
    expect((await put('agent', ['agent'])).statusCode).toBe(200);
    expectRestricted(await t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers }), 'channel');
    expectRestricted(await t.app.inject({ method: 'POST', url: '/api/v1/auth/agent/validate', headers, payload: { latitude: -1.28, longitude: 36.81, accuracy_m: 10 } }), 'channel');
    expectRestricted(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', headers: { 'x-device-fingerprint': PHONE }, payload: { refresh_token: refresh } }), 'channel');
    expect(await auditTotal(t.s, customer.uuid, 'POLICY_VIOLATION')).toBe(1); // once a minute per session and rule

    const changes = await t.s.audit.query({ eventType: 'CHANNEL_ACCESS_CHANGED', limit: 10, offset: 0 });
    expect(changes.entries.map((e) => e.details)).toEqual([
      { channel: 'agent', allowed_roles: ['agent'], before: ['agent', 'customer'], before_was_default: false },
      { channel: 'agent', allowed_roles: ['agent', 'customer'], before: ['agent'], before_was_default: true },
    ]);
    expect(changes.entries[0]).toMatchObject({ username: 'escape.admin', status: 'SUCCESS' });
  });

  it('setting who may use a channel: an unknown role 422, shutting out your own session 422, a customer 403, no token 401; nothing changes', async () => {
    const field = (res: Awaited<ReturnType<typeof put>>) => (expectError(res, 422, 'VALIDATION_ERROR').details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
    expect(field(await put('agent', ['agent', 'no_such_role']))).toEqual(['allowed_roles']);
    expect(field(await put('web', ['staff']))).toEqual(['allowed_roles']); // the administrator's own web session
    expectError(await put('web', []), 422, 'VALIDATION_ERROR');
    expectError(await put('agent', ['age\u0000nt']), 422, 'VALIDATION_ERROR'); // a NUL never reaches the database
    expectError(await put('sms', null), 422, 'VALIDATION_ERROR');
    await seedUser(t.s, 'escape.curious');
    expectError(await put('agent', null, (await signIn(t.app, 'escape.curious')).access_token), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/channels' }), 401, 'TOKEN_MISSING');
    const web = (await t.app.inject({ method: 'GET', url: '/api/v1/admin/channels', headers: bearer(admin) })).json().channels[0];
    expect(web).toMatchObject({ channel: 'web', allowed_roles: null, default: true });
  });
});
