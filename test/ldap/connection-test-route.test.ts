/**
 * POST /api/v1/admin/ldap/test against a real OpenLDAP (test/harness/slapd.ts): each step of the
 * settings in force reported (reachable, TLS, the service bind, the user's entry and groups with
 * the roles they map to), each kind of failure named (closed port, untrusted certificate, wrong
 * service password, unknown user), the bind password never in an answer, each run audited
 * (LDAP_CONNECTION_TESTED: who, the username tested, the outcome) and rate limited, and the route
 * refused without config.manage or without a configuration.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { freePort } from '../harness/postgres.js';
import { startSlapd, type RunningSlapd } from '../harness/slapd.js';

let dir: RunningSlapd;
let t: TestApp;
let token: string;

beforeAll(async () => {
  dir = await startSlapd();
  t = await createTestApp({ env: { LDAP_TIMEOUT_MS: '3000' } });
  await seedUser(t.s, 'ldap.tester', { roles: ['admin'] });
  await seedUser(t.s, 'ldap.customer', { roles: ['customer'] });
  token = (await signIn(t.app, 'ldap.tester')).access_token;
}, 120_000);
afterAll(async () => {
  await t?.close();
  await dir?.stop();
});

const settings = (over: Record<string, unknown> = {}) => ({
  uri: dir.uri, bind_dn: dir.bindDn, bind_password: dir.bindPassword, base_dn: dir.baseDn,
  user_filter: '(&(objectClass=inetOrgPerson)(uid={username}))', attr_mail: 'mail', attr_name: 'displayName', group_member_attr: 'memberOf',
  group_roles: { tellers: ['staff'] }, groups_base_dn: `ou=groups,${dir.baseDn}`, ...over,
});

async function configure(over: Record<string, unknown> = {}): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/config', headers: bearer(token), payload: settings(over) });
  expect(res.json(), res.body).toEqual({ status: 'success' });
}

const test = (body: Record<string, unknown> = {}, as = token) => t.app.inject({ method: 'POST', url: '/api/v1/admin/ldap/test', headers: bearer(as), payload: body });
const outcomes = (body: { steps: Array<{ step: string; outcome: string; reason: string | null }> }) => body.steps.map((s) => `${s.step}:${s.outcome}${s.reason ? `:${s.reason}` : ''}`);

describe('POST /api/v1/admin/ldap/test', () => {
  it('threat: an operator without config.manage: 401 without a token, 403 PERMISSION_DENIED for a customer', async () => {
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/admin/ldap/test', payload: {} }), 401, 'TOKEN_MISSING');
    expectError(await test({}, (await signIn(t.app, 'ldap.customer')).access_token), 403, 'PERMISSION_DENIED');
  });

  it('answers 409 LDAP_TEST_NOT_CONFIGURED before any configuration', async () => {
    expectError(await test(), 409, 'LDAP_TEST_NOT_CONFIGURED');
  });

  it('ldap:// with StartTLS: reachable, TLS verified, bound; with a username, the entry, its groups and the roles they map to', async () => {
    await configure({ start_tls: true, ca_cert: readFileSync(dir.caFile, 'utf8') });
    const bare = await test();
    expect(bare.statusCode, bare.body).toBe(200);
    expect(bare.json()).toMatchObject({ ok: true, source: 'database', uri: dir.uri, user: null });
    expect(outcomes(bare.json())).toEqual(['connect:passed', 'tls:passed', 'bind:passed', 'search:skipped:no_username', 'groups:skipped:no_username']);

    const alice = await test({ username: 'alice' });
    expect(alice.json()).toMatchObject({ ok: true, user: { dn: dir.users.alice.dn, mail: dir.users.alice.mail, name: dir.users.alice.name, roles: ['staff'] } });
    expect(alice.json().user.groups).toEqual(expect.arrayContaining(dir.users.alice.groups));
    expect(outcomes(alice.json())).toEqual(['connect:passed', 'tls:passed', 'bind:passed', 'search:passed', 'groups:passed']);
    expect(alice.body).not.toContain(dir.bindPassword);
  });

  it('an unknown user: the search fails with user_not_found, the service bind still passed', async () => {
    const res = await test({ username: 'nobody-here' });
    expect(res.json()).toMatchObject({ ok: false, user: null });
    expect(outcomes(res.json())).toEqual(['connect:passed', 'tls:passed', 'bind:passed', 'search:failed:user_not_found', 'groups:skipped:earlier_step_failed']);
  });

  it('ldaps:// with a CA that did not sign the server\'s certificate: TLS fails, nothing is sent to bind', async () => {
    await configure({ uri: dir.ldapsUri, ca_cert: readFileSync(dir.untrustedCaFile, 'utf8') });
    const res = await test({ username: 'alice' });
    expect(outcomes(res.json())).toEqual(['connect:passed', 'tls:failed:tls_failed', 'bind:skipped:earlier_step_failed', 'search:skipped:earlier_step_failed', 'groups:skipped:earlier_step_failed']);
    expect(res.json().ok).toBe(false);
  });

  it('threat: a wrong service password is named (credentials_refused) and never echoed, neither the stored one nor the wrong one', async () => {
    const wrong = 'Not-The-Service-Password-42';
    await configure({ uri: dir.ldapsUri, ca_cert: readFileSync(dir.caFile, 'utf8'), bind_password: wrong });
    const res = await test({ username: 'alice' });
    expect(outcomes(res.json())).toEqual(['connect:passed', 'tls:passed', 'bind:failed:credentials_refused', 'search:skipped:earlier_step_failed', 'groups:skipped:earlier_step_failed']);
    expect(res.body).not.toContain(wrong);
    expect(res.body).not.toContain(dir.bindPassword);
  });

  it('a closed port: connect fails as unreachable; plain ldap:// says the password would travel in clear', async () => {
    await configure({ uri: `ldap://127.0.0.1:${await freePort()}` });
    const closed = await test();
    expect(outcomes(closed.json())).toEqual(['connect:failed:unreachable', 'tls:skipped:earlier_step_failed', 'bind:skipped:earlier_step_failed', 'search:skipped:earlier_step_failed', 'groups:skipped:earlier_step_failed']);
    expect(closed.json().steps[0].detail).toMatch(/ECONNREFUSED/);
    await configure();
    const plain = await test();
    expect(outcomes(plain.json())).toEqual(['connect:passed', 'tls:skipped:no_tls', 'bind:passed', 'search:skipped:no_username', 'groups:skipped:no_username']);
  });

  it('each run is audited (LDAP_CONNECTION_TESTED: who, the username tested, the outcome and the failed step) and counted by the rate limiter', async () => {
    await configure();
    const entries = async () => (await t.s.database.db.selectFrom('audit_log').select(['audit_id', 'username', 'status', 'details']).where('event_type', '=', 'LDAP_CONNECTION_TESTED').execute())
      .map((e) => ({ ...e, details: (typeof e.details === 'string' ? JSON.parse(e.details) : e.details) as Record<string, unknown> }));
    const newOnes = async (run: () => Promise<unknown>) => {
      const seen = new Set((await entries()).map((e) => e.audit_id));
      await run();
      return (await entries()).filter((e) => !seen.has(e.audit_id));
    };
    const passed = await newOnes(async () => {
      const res = await test();
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeDefined();
    });
    expect(passed).toHaveLength(1);
    expect(passed[0]).toMatchObject({ username: 'ldap.tester', status: 'SUCCESS', details: { uri: dir.uri, tested_username: null, outcome: 'passed', failed_step: null, reason: null } });
    const failed = await newOnes(async () => expect((await test({ username: 'nobody-here' })).json().ok).toBe(false));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ username: 'ldap.tester', status: 'FAILURE', details: { tested_username: 'nobody-here', outcome: 'failed', failed_step: 'search', reason: 'user_not_found' } });
    const after = [...passed, ...failed];
    expect(JSON.stringify(after)).not.toContain(dir.bindPassword);
  });

  it('threat: a body other than a username is refused (the route tries the settings in force, never a directory named by the caller)', async () => {
    expectError(await test({ uri: 'ldap://attacker.example' }), 422, 'VALIDATION_ERROR');
  });
});
