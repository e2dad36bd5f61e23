/**
 * Two nodes on one PostgreSQL and one real directory (issue 11, section 4): an LDAP
 * configuration posted to one node is in force on the other as soon as the NOTIFY arrives
 * (awaited, not slept for), and a first sign-in on either node finds the account the other
 * provisioned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusEvent } from '../../src/platform/db/bus.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { startSlapd, type RunningSlapd } from '../harness/slapd.js';

let dir: RunningSlapd;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  dir = await startSlapd();
  const url = await freshPostgresDatabase();
  const secrets = testSecrets();
  const clock = new ManualClock(Date.now());
  a = await createTestApp({ database: await openTestDatabase('postgres', url), secrets, clock });
  b = await createTestApp({ database: await openTestDatabase('postgres', url), secrets, clock });
  await seedUser(a.s, 'ldap.operator', { roles: ['admin'] });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await dir?.stop();
});

function nextEvent(t: TestApp, match: (e: BusEvent) => boolean): Promise<BusEvent> {
  return new Promise((resolve) => t.s.database.bus.subscribe((e) => match(e) && resolve(e)));
}

const ldapLogin = (t: TestApp, username: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/login', payload: { username, password } });

describe('LDAP configuration across nodes', () => {
  it('a configuration posted on node A is in force on node B once the notice arrives; B had read "not configured" before', async () => {
    expectError(await ldapLogin(b, 'alice', dir.users.alice.password), 401, 'LDAP_NOT_CONFIGURED'); // B caches "none"
    const arrived = nextEvent(b, (e) => e.type === 'ldap-config.changed');
    const token = (await signIn(a.app, 'ldap.operator')).access_token;
    const posted = await a.app.inject({
      method: 'POST', url: '/api/v1/auth/ldap/config', headers: bearer(token),
      payload: { uri: dir.uri, bind_dn: dir.bindDn, bind_password: dir.bindPassword, base_dn: dir.baseDn, user_filter: '(uid={username})', group_roles: { tellers: ['staff'] }, groups_base_dn: `ou=groups,${dir.baseDn}` },
    });
    expect(posted.json()).toEqual({ status: 'success' });
    await arrived;
    const onB = await ldapLogin(b, 'alice', dir.users.alice.password);
    expect(onB.statusCode, onB.body).toBe(200);
    const onA = await ldapLogin(a, 'ALICE', dir.users.alice.password);
    expect(onA.json().user.id).toBe(onB.json().user.id); // the link B wrote, found by A
  });
});
