/**
 * Threat: a token issued before an access policy (or stolen and used from elsewhere) keeps its
 * worth outside that policy. The session's channel policy is checked in the bearer guard on
 * every authenticated route, the MCP endpoint and refresh, not only at sign-in and validate:
 * a policy added mid-session refuses the very next request, 403 POLICY_RESTRICTED with the
 * rule, audited once a minute per session and rule; a refused request does no work, keeps no
 * session alive, and spends no refresh token. Logout stays allowed (ending a session is never a
 * privilege). The clock is frozen; nothing sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { signal } from '../harness/comparisons.js';
import { createTestApp, useTwoNodes, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, STRONG_PASSWORD, type SignedIn } from '../harness/fixtures.js';
import { ENCRYPTED, fetchServerPem, openPreAuth, openSession, preAuthBody, sessionBody } from '../harness/transport-client.js';
import { withoutRequestId } from '../harness/request-id.js';

const OFFICE = '10.20.1.5';
const ELSEWHERE = '192.0.2.44';
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const MCP_INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'policy-test', version: '1' } } };

function expectRestricted(res: { statusCode: number; json(): unknown; body: string }, rule: string): void {
  const body = expectError(res, 403, 'POLICY_RESTRICTED');
  expect(withoutRequestId(body.details)).toEqual({ rule });
}

async function createPolicy(app: App, token: string, body: Record<string, unknown>): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(token), payload: body, remoteAddress: OFFICE });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ policy: { id: string } }>().policy.id;
}

async function deletePolicy(app: App, token: string, id: string): Promise<void> {
  const res = await app.inject({ method: 'DELETE', url: `/api/v1/admin/access-policies/${id}`, headers: bearer(token), remoteAddress: OFFICE });
  expect(res.statusCode, res.body).toBe(200);
}

/** The web sign-in from `remoteAddress`. */
async function signInFrom(app: App, username: string, remoteAddress: string): Promise<SignedIn> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password: STRONG_PASSWORD }, remoteAddress });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('threat: a session outlives the access policy that now governs it', () => {
  let t: TestApp;
  let clock: ManualClock;
  /** A fresh administrator's session for each policy change (tests move the clock past an idle timeout). */
  const admin = async () => (await signInFrom(t.app, 'guard.admin', OFFICE)).access_token;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0)); // Monday 12:00 in Nairobi
    t = await createTestApp({ clock });
    await seedUser(t.s, 'guard.admin', { roles: ['admin'] });
  });
  afterAll(async () => t.close());

  it('an IP rule added mid-session refuses the admin\'s next request from elsewhere: reading users, creating an administrator (none created), refresh (the token not spent)', async () => {
    const victim = await seedUser(t.s, 'guard.victim.admin', { roles: ['admin'] });
    const stolen = await signInFrom(t.app, 'guard.victim.admin', OFFICE);
    const list = () => t.app.inject({ method: 'GET', url: '/api/v1/admin/users?limit=1', headers: bearer(stolen.access_token), remoteAddress: ELSEWHERE });
    expect((await list()).statusCode).toBe(200);

    const id = await createPolicy(t.app, await admin(), { name: 'admins: bank network only', channel: 'web', role: 'admin', rules: { ip: { allow: ['10.0.0.0/8'] } } });
    expectRestricted(await list(), 'ip');
    const create = await t.app.inject({
      method: 'POST', url: '/api/v1/admin/users', headers: bearer(stolen.access_token), remoteAddress: ELSEWHERE,
      payload: { username: 'planted.admin', email: 'planted@bank.example', roles: ['admin'] },
    });
    expectRestricted(create, 'ip');
    expect(await t.s.users.findByLogin('planted.admin')).toBeUndefined();
    const refresh = (from: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: stolen.refresh_token }, remoteAddress: from });
    expectRestricted(await refresh(ELSEWHERE), 'ip');
    const spent = await t.s.database.db.selectFrom('refresh_tokens').select('used_at').where('family_id', 'in', t.s.database.db.selectFrom('refresh_families').select('family_id').where('session_id', '=', stolen.session_id)).execute();
    expect(spent.map((r) => r.used_at)).toEqual([null]);

    // The same session from inside the bank's network goes on, refresh included.
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/admin/users?limit=1', headers: bearer(stolen.access_token), remoteAddress: OFFICE })).statusCode).toBe(200);
    expect((await refresh(OFFICE)).statusCode).toBe(200);
    await deletePolicy(t.app, await admin(), id);
    expect(await auditTotal(t.s, victim.uuid, 'POLICY_VIOLATION')).toBe(1); // three refusals within the minute: one row
  });

  it('a schedule added mid-session refuses a self-service route and the MCP endpoint at closing time, not a minute before', async () => {
    await seedUser(t.s, 'guard.teller', { roles: ['staff'] });
    clock.set(Date.parse('2026-11-23T16:50:00Z')); // 19:50 in Nairobi
    const teller = await signInFrom(t.app, 'guard.teller', OFFICE);
    const id = await createPolicy(t.app, await admin(), { name: 'staff hours', channel: 'web', role: 'staff', rules: { schedule: [{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '07:00', to: '20:00' }] } });
    const preferences = () => t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(teller.access_token), remoteAddress: OFFICE });
    const mcp = () => t.app.inject({ method: 'POST', url: '/mcp', headers: { ...MCP_HEADERS, ...bearer(teller.access_token) }, payload: MCP_INIT, remoteAddress: OFFICE });
    clock.set(Date.parse('2026-11-23T16:59:59Z')); // 19:59:59
    expect((await preferences()).statusCode).toBe(200);
    expect((await mcp()).statusCode).toBe(200);
    clock.set(Date.parse('2026-11-23T17:00:00Z')); // 20:00
    expectRestricted(await preferences(), 'schedule');
    expectRestricted(await mcp(), 'schedule');
    clock.set(Date.UTC(2026, 10, 23, 9, 0, 0));
    await deletePolicy(t.app, await admin(), id);
  });

  it('a bound-device rule added after a mobile session opened refuses its next request (rule device), validate included, until the rule goes', async () => {
    await seedUser(t.s, 'guard.phone');
    const fp = 'fp-guard-unbound-phone';
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', payload: { username: 'guard.phone', password: STRONG_PASSWORD, device_fingerprint: fp }, remoteAddress: OFFICE });
    expect(res.statusCode, res.body).toBe(200);
    const token = res.json<SignedIn>().access_token;
    const devices = () => t.app.inject({ method: 'GET', url: '/api/v1/notifications/devices', headers: bearer(token, { 'x-device-fingerprint': fp }), remoteAddress: OFFICE });
    expect((await devices()).statusCode).toBe(200);
    const id = await createPolicy(t.app, await admin(), { name: 'mobile: bound phones', channel: 'mobile', rules: { require_bound_device: true } });
    expectRestricted(await devices(), 'device');
    expectRestricted(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate/mobile', headers: bearer(token, { 'x-device-fingerprint': fp }), remoteAddress: OFFICE }), 'device');
    await deletePolicy(t.app, await admin(), id);
    expect((await devices()).statusCode).toBe(200);
  });

  it('refusals are audited once a minute per session and rule, and every refusal is answered', async () => {
    const user = await seedUser(t.s, 'guard.counted', { roles: ['staff'] });
    const s = await signInFrom(t.app, 'guard.counted', OFFICE);
    const id = await createPolicy(t.app, await admin(), { name: 'staff: office only', channel: 'web', role: 'staff', rules: { ip: { allow: ['10.0.0.0/8'] } } });
    const get = () => t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(s.access_token), remoteAddress: ELSEWHERE });
    for (let i = 0; i < 5; i++) expectRestricted(await get(), 'ip');
    expect(await auditTotal(t.s, user.uuid, 'POLICY_VIOLATION')).toBe(1);
    clock.advance(60_000);
    expectRestricted(await get(), 'ip');
    expect(await auditTotal(t.s, user.uuid, 'POLICY_VIOLATION')).toBe(2);
    const rows = await t.s.audit.query({ userId: user.uuid, eventType: 'POLICY_VIOLATION', limit: 10, offset: 0 });
    expect(rows.entries[0]).toMatchObject({ status: 'FAILURE', channel: 'web', ip_address: ELSEWHERE, details: { rule: 'ip', policy_id: id } });
    await deletePolicy(t.app, await admin(), id);
  });

  it('a refused request does not keep the session alive: it still ends 15 minutes after its last allowed request', async () => {
    await seedUser(t.s, 'guard.idle', { roles: ['staff'] });
    const s = await signInFrom(t.app, 'guard.idle', OFFICE);
    const id = await createPolicy(t.app, await admin(), { name: 'staff: office only (idle)', channel: 'web', role: 'staff', rules: { ip: { allow: ['10.0.0.0/8'] } } });
    const get = (from: string) => t.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(s.access_token), remoteAddress: from });
    clock.advance(10 * 60_000);
    expectRestricted(await get(ELSEWHERE), 'ip');
    clock.advance(6 * 60_000); // 16 minutes after the sign-in, 6 after the refusal
    expectError(await get(OFFICE), 401, 'SESSION_EXPIRED');
    await deletePolicy(t.app, await admin(), id);
  });

  it('an encrypted request of a refused session is refused by the route\'s guard before its body is opened, as a token refusal is (plaintext 403), and changes nothing', async () => {
    await seedUser(t.s, 'guard.sealed', { roles: ['staff'] });
    const serverPem = await fetchServerPem(t.app);
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(serverPem, { username: 'guard.sealed', password: STRONG_PASSWORD }), remoteAddress: OFFICE });
    const opened = openPreAuth(login.json());
    const token = String(opened.body.access_token);
    const id = await createPolicy(t.app, await admin(), { name: 'staff: office only (sealed)', channel: 'web', role: 'staff', rules: { ip: { allow: ['10.0.0.0/8'] } } });
    const put = (from: string) => t.app.inject({ method: 'PUT', url: '/api/v1/notifications/preferences', headers: { ...ENCRYPTED, ...bearer(token) }, payload: sessionBody(opened.key, { language: 'fr' }), remoteAddress: from });
    const refused = await put(ELSEWHERE);
    expectRestricted(refused, 'ip');
    expect(refused.headers['x-encrypted']).toBeUndefined();
    expect((await t.s.users.findByLogin('guard.sealed'))!.language).toBeNull(); // nothing was changed
    const allowed = await put(OFFICE);
    expect(allowed.statusCode).toBe(200);
    expect(openSession(opened.key, allowed.json())).toMatchObject({ language: 'fr' });
    await deletePolicy(t.app, await admin(), id);
  });

  it('an agent\'s validate refused by the geofence records no activity either: the session still ends 15 minutes after its last allowed request', async () => {
    await seedUser(t.s, 'guard.field.agent', { roles: ['agent'] });
    const fp = 'fp-guard-field-agent';
    const here = { latitude: -1.2864, longitude: 36.8172, accuracy_m: 10 };
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', payload: { username: 'guard.field.agent', password: STRONG_PASSWORD, device_fingerprint: fp, channel: 'agent', ...here }, remoteAddress: OFFICE });
    expect(login.statusCode, login.body).toBe(200);
    const token = login.json<SignedIn>().access_token;
    const id = await createPolicy(t.app, await admin(), { name: 'agents: the branch area', channel: 'agent', role: 'agent', rules: { geofences: [{ type: 'circle', lat: -1.2864, lon: 36.8172, radius_m: 250 }] } });
    const validate = (at: typeof here) => t.app.inject({ method: 'POST', url: '/api/v1/auth/agent/validate', headers: bearer(token, { 'x-device-fingerprint': fp }), payload: at, remoteAddress: OFFICE });
    expect((await validate(here)).statusCode).toBe(200);
    clock.advance(10 * 60_000);
    expectRestricted(await validate({ latitude: -1.3, longitude: 36.9, accuracy_m: 10 }), 'geofence');
    clock.advance(6 * 60_000);
    expectError(await validate(here), 401, 'SESSION_EXPIRED');
    await deletePolicy(t.app, await admin(), id);
  });

  it('a refused session can still end itself: logout answers 200 and the session is over', async () => {
    await seedUser(t.s, 'guard.leaver', { roles: ['staff'] });
    const s = await signInFrom(t.app, 'guard.leaver', OFFICE);
    const id = await createPolicy(t.app, await admin(), { name: 'staff: office only (logout)', channel: 'web', role: 'staff', rules: { ip: { allow: ['10.0.0.0/8'] } } });
    expectRestricted(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(s.access_token), remoteAddress: ELSEWHERE }), 'ip');
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token), remoteAddress: ELSEWHERE });
    expect(out.json()).toEqual({ status: 'success', sessions_ended: 1 });
    await deletePolicy(t.app, await admin(), id);
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(s.access_token), remoteAddress: OFFICE }), 401, 'TOKEN_REVOKED');
  });
});

describe('threat: a session on another node outlives the policy written on this one', () => {
  const nodes = useTwoNodes();

  /** Resolves once node `t` has heard of the next policy change and applied it. */
  function nextChange(t: TestApp): Promise<void> {
    const heard = signal();
    t.s.bus.subscribe((e) => {
      if (e.type === 'access-policies.changed') heard.fire();
    });
    return heard.promise.then(() => t.s.accessPolicy.whenIdle());
  }

  // On PostgreSQL the change crosses by NOTIFY; on PGlite the two nodes share one database and its in-process bus.
  it('a policy written on node a refuses the next request of sessions cached on node b (self-service route, refresh, admin route) as soon as b hears of it', async () => {
    const { a, b } = nodes;
    await seedUser(a.s, 'nodes.admin', { roles: ['admin'] });
    await seedUser(a.s, 'nodes.staff', { roles: ['staff'] });
    const writer = (await signInFrom(a.app, 'nodes.admin', OFFICE)).access_token;
    const staff = await signInFrom(b.app, 'nodes.staff', OFFICE);
    const preferences = () => b.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(staff.access_token), remoteAddress: OFFICE });
    const users = (from: string) => b.app.inject({ method: 'GET', url: '/api/v1/admin/users?limit=1', headers: bearer(writer), remoteAddress: from });
    expect((await preferences()).statusCode).toBe(200); // b has both sessions cached
    expect((await users(ELSEWHERE)).statusCode).toBe(200);

    let changed = nextChange(b);
    await createPolicy(a.app, writer, { name: 'staff closed on web', channel: 'web', role: 'staff', rules: { allow_channel: false } });
    await changed;
    expectRestricted(await preferences(), 'channel');
    expectRestricted(await b.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: staff.refresh_token }, remoteAddress: OFFICE }), 'channel');

    changed = nextChange(b);
    await createPolicy(a.app, writer, { name: 'admins: bank network only', channel: 'web', role: 'admin', rules: { ip: { allow: ['10.0.0.0/8'] } } });
    await changed;
    expectRestricted(await users(ELSEWHERE), 'ip');
    expect((await users(OFFICE)).statusCode).toBe(200);
  });

  it('who may use a channel, changed on node a, refuses the next request of an agent session cached on node b', async () => {
    const { a, b } = nodes;
    await seedUser(a.s, 'nodes.admin3', { roles: ['admin'] });
    await seedUser(a.s, 'nodes.agent', { roles: ['agent'] });
    const writer = (await signInFrom(a.app, 'nodes.admin3', OFFICE)).access_token;
    const fp = 'fp-nodes-agent';
    const login = await b.app.inject({ method: 'POST', url: '/api/v1/auth/login/mobile', payload: { username: 'nodes.agent', password: STRONG_PASSWORD, device_fingerprint: fp, channel: 'agent' }, remoteAddress: OFFICE });
    expect(login.statusCode, login.body).toBe(200);
    const preferences = () => b.app.inject({ method: 'GET', url: '/api/v1/notifications/preferences', headers: bearer(login.json<SignedIn>().access_token, { 'x-device-fingerprint': fp }), remoteAddress: OFFICE });
    expect((await preferences()).statusCode).toBe(200);
    const put = (allowed: string[]) => a.app.inject({ method: 'PUT', url: '/api/v1/admin/channels/agent', headers: bearer(writer), payload: { allowed_roles: allowed }, remoteAddress: OFFICE });
    let changed = nextChange(b);
    expect((await put(['operator'])).statusCode).toBe(200);
    await changed;
    expectRestricted(await preferences(), 'channel');
    changed = nextChange(b);
    expect((await put(['agent'])).statusCode).toBe(200);
    await changed;
    expect((await preferences()).statusCode).toBe(200);
  });
});
