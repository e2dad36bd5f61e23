/**
 * TRUST_PROXY: which X-Forwarded-For entries decide the client address that IP policies, rate
 * limits, lockout and sessions see. The threat: a client writes its own X-Forwarded-For to pass
 * an IP deny list (or to spread its attempts over made-up addresses). `TRUST_PROXY=1` used to
 * mean "believe every hop", so the leftmost entry, written by the client, won.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

const BALANCER = '10.0.0.1';
const ATTACKER = '203.0.113.7';
const ALLOWED = '198.51.100.1';

async function denyAttackerNetwork(t: TestApp): Promise<void> {
  await seedUser(t.s, 'proxy.admin', { roles: ['admin'] });
  const admin = (await signIn(t.app, 'proxy.admin', STRONG_PASSWORD)).access_token;
  const res = await t.app.inject({
    method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(admin),
    payload: { name: 'web: not from the attacker network', channel: 'web', rules: { ip: { deny: ['203.0.113.0/24'] } } },
  });
  expect(res.statusCode, res.body).toBe(201);
  await seedUser(t.s, 'proxy.customer');
}

function login(t: TestApp, remoteAddress: string, forwardedFor?: string) {
  return t.app.inject({
    method: 'POST', url: '/api/v1/auth/login', remoteAddress,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    payload: { username: 'proxy.customer', password: STRONG_PASSWORD },
  });
}

async function sessionAddressIs(t: TestApp, res: Awaited<ReturnType<typeof login>>, address: string): Promise<void> {
  expect(res.statusCode, res.body).toBe(200);
  const { session_id } = res.json<{ session_id: string }>();
  const row = await t.s.database.db.selectFrom('sessions').select('ip_address').where('session_id', '=', session_id).executeTakeFirstOrThrow();
  expect(row.ip_address).toBe(t.s.ipHasher.hex(address));
}

describe('TRUST_PROXY=1 (one load balancer in front)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: '1' } });
    await denyAttackerNetwork(t);
  });
  afterAll(async () => t.close());

  it('X-Forwarded-For spoofing: a made-up leftmost entry does not pass the IP deny list (403 POLICY_RESTRICTED rule ip)', async () => {
    // The client sends "X-Forwarded-For: 198.51.100.1"; the balancer appends the address it saw.
    const res = await login(t, BALANCER, `${ALLOWED}, ${ATTACKER}`);
    expectError(res, 403, 'POLICY_RESTRICTED');
    expect(withoutRequestId(res.json().details)).toEqual({ rule: 'ip' });
  });

  it('the address the balancer appended is the client: an allowed client signs in and its session records that address', async () => {
    await sessionAddressIs(t, await login(t, BALANCER, `203.0.113.99, ${ALLOWED}`), ALLOWED);
  });
});

describe('TRUST_PROXY as the balancers\' addresses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: '10.0.0.0/8' } });
    await denyAttackerNetwork(t);
  });
  afterAll(async () => t.close());

  it('X-Forwarded-For spoofing by a client that reaches the port directly: its header is ignored (403 POLICY_RESTRICTED rule ip)', async () => {
    const res = await login(t, ATTACKER, ALLOWED);
    expectError(res, 403, 'POLICY_RESTRICTED');
    expect(withoutRequestId(res.json().details)).toEqual({ rule: 'ip' });
  });

  it('through two trusted balancers the first untrusted address from the right is the client', async () => {
    expectError(await login(t, BALANCER, `${ALLOWED}, ${ATTACKER}, 10.9.9.9`), 403, 'POLICY_RESTRICTED');
    await sessionAddressIs(t, await login(t, BALANCER, `${ATTACKER}, ${ALLOWED}, 10.9.9.9`), ALLOWED);
  });
});

describe('TRUST_PROXY unset', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await denyAttackerNetwork(t);
  });
  afterAll(async () => t.close());

  it('X-Forwarded-For spoofing without a proxy: the socket address decides (403 POLICY_RESTRICTED rule ip)', async () => {
    expectError(await login(t, ATTACKER, ALLOWED), 403, 'POLICY_RESTRICTED');
    await sessionAddressIs(t, await login(t, ALLOWED, ATTACKER), ALLOWED);
  });
});
