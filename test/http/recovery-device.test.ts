/**
 * Account recovery, phase 2 (issue 27): an agent's new phone re-bound after approval, on both
 * databases. The agent channel accepts only bound devices; the agent loses the bound phone,
 * proves who they are at a branch (an operator's approval) and with the password, waits out the
 * staff cooling-off (72 hours), the old phone's binding is revoked, the new phone's binding is
 * asked for through `reset/access-policy`, and an administrator approves it. The clock is frozen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { HOUR, ok, recovery } from '../harness/recovery.js';
const OLD_PHONE = 'fp-agent-old-phone-0001';
const NEW_PHONE = 'fp-agent-new-phone-0002';

let t: TestApp;
let admin: string;
let n = 0;

const r = recovery(() => t);
const { post, initiate, verify } = r;
const accessPolicy = (recovery_id: string, body: Record<string, unknown> = { channel: 'agent', device_fingerprint: NEW_PHONE }) => post('/api/v1/auth/reset/access-policy', { recovery_id, ...body });
const agentLogin = (username: string, device_fingerprint: string) => post('/api/v1/auth/login/mobile', { username, password: STRONG_PASSWORD, device_fingerprint, channel: 'agent' });
const approveBinding = (id: string) => post(`/api/v1/admin/device-bindings/${id}/approve`, {}, bearer(admin));

async function bindingsOf(uuid: string): Promise<Array<{ id: string; status: string; label: string }>> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/device-bindings?user_id=${uuid}`, headers: bearer(admin) });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { bindings: Array<{ id: string; status: string; label: string }> }).bindings;
}

/** An agent whose old phone is bound on the agent channel. */
async function boundAgent() {
  const user = await seedUser(t.s, `agent.${++n}`, { roles: ['agent'], email: `agent.${n}@bank.example` });
  expectError(await agentLogin(user.username, OLD_PHONE), 403, 'POLICY_RESTRICTED');
  ok(await approveBinding((await bindingsOf(user.uuid))[0]!.id));
  expect((await agentLogin(user.username, OLD_PHONE)).statusCode).toBe(200);
  return user;
}

/** A `device` workflow of `username`, approved at a branch and proved with the password: `waiting`. */
async function waitingDevice(username: string): Promise<string> {
  const started = ok(await initiate(username, 'device'), 202);
  ok(await r.approve(started.reference!, admin, { document_type: 'national_id', document_number_last4: '0042' }));
  expect(ok(await verify(started.recovery_id as string, { proof: 'password', password: STRONG_PASSWORD })).state).toBe('waiting');
  return started.recovery_id as string;
}

beforeAll(async () => {
  t = await createTestApp({ clock: new ManualClock(Date.UTC(2026, 2, 7, 9, 0, 0)) });
  await seedUser(t.s, 'device.admin', { roles: ['admin'] });
  admin = (await signIn(t.app, 'device.admin')).access_token;
  const policy = await post('/api/v1/admin/access-policies', { name: 'agents: bound devices only', channel: 'agent', rules: { require_bound_device: true } }, bearer(admin));
  expect(policy.statusCode, policy.body).toBe(201);
});
afterAll(async () => t?.close());

describe('an agent\'s new phone re-bound after approval', () => {
  it('device recovery, 72 hours, the old phone revoked, the new phone asked for and approved by an administrator', async () => {
    const agent = await boundAgent();
    const id = await waitingDevice(agent.username);
    expect(expectError(await accessPolicy(id), 400, 'RECOVERY_INVALID_STATE').details).toMatchObject({ reason: 'cooling_off_not_over' });

    t.clock.advance(72 * HOUR);
    expect(await t.scheduler.runNow('account recovery completion')).toBe(true);
    admin = (await signIn(t.app, 'device.admin')).access_token; // the one before has expired meanwhile
    expectError(await agentLogin(agent.username, OLD_PHONE), 403, 'POLICY_RESTRICTED'); // the lost phone's binding is revoked

    const asked = ok(await accessPolicy(id));
    expect(asked).toMatchObject({ state: 'completed', binding: { status: 'pending', channel: 'agent' } });
    expect(ok(await accessPolicy(id)).binding).toEqual(asked.binding); // asking again answers the state
    expectError(await agentLogin(agent.username, NEW_PHONE), 403, 'POLICY_RESTRICTED'); // not before an administrator approves

    const bindings = await bindingsOf(agent.uuid);
    expect(bindings.find((b) => b.id === asked.binding!.id)).toMatchObject({ status: 'pending', label: 'New device (account recovery)' });
    expect(bindings.find((b) => b.id !== asked.binding!.id)).toMatchObject({ status: 'revoked' });
    ok(await approveBinding(asked.binding!.id));
    expect((await agentLogin(agent.username, NEW_PHONE)).statusCode).toBe(200);
    expect(ok(await accessPolicy(id)).binding).toMatchObject({ status: 'approved' });

    const audit = await t.s.database.db.selectFrom('audit_log').select('details').where('user_id', '=', agent.uuid).where('event_type', '=', 'RECOVERY_ACCESS_POLICY_REQUESTED').execute();
    expect(audit.map((a) => (a.details as { requested: boolean }).requested)).toEqual([true, false, false]);
  });

  it('other kinds and states answer the phase 1 codes: 400 RECOVERY_INVALID_STATE, 409 RECOVERY_STALE', async () => {
    const user = await seedUser(t.s, 'not.a.device', { email: 'nad@bank.example' });
    const mfa = ok(await initiate(user.username, 'mfa'), 202).recovery_id as string;
    expect(expectError(await accessPolicy(mfa), 400, 'RECOVERY_INVALID_STATE').details).toMatchObject({ reason: 'not_a_device_recovery' });
    const device = ok(await initiate(user.username, 'device'), 202).recovery_id as string;
    ok(await post('/api/v1/auth/reset/cancel', { recovery_id: device }));
    expect(expectError(await accessPolicy(device), 409, 'RECOVERY_STALE').details).toMatchObject({ state: 'cancelled' });
    const decoy = ok(await initiate('no.such.agent', 'device'), 202).recovery_id as string;
    expect(expectError(await accessPolicy(decoy), 400, 'RECOVERY_INVALID_STATE').details).toMatchObject({ reason: 'cooling_off_not_over' });
    expectError(await accessPolicy(decoy, { channel: 'agent' }), 422, 'VALIDATION_ERROR');
  });
});
