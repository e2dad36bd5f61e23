/**
 * A directory user's password is the directory's (issue 11): re-authentication with the current
 * password (before enrolling an authenticator app) binds as the linked entry, live, so a
 * password changed in the directory takes effect at once; a wrong one counts toward the lockout
 * like any other; the directory down is 401 LDAP_UNAVAILABLE, not counted; and this service
 * never sets a local password for such an account (409 PASSWORD_MANAGED_EXTERNALLY), which
 * would let the person in after the directory shut them out.
 */
import { Attribute, Change, Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn, WRONG_PASSWORD } from '../harness/fixtures.js';
import { startSlapd, type RunningSlapd } from '../harness/slapd.js';
import { withoutRequestId } from '../harness/request-id.js';

let dir: RunningSlapd;
let t: TestApp;

beforeAll(async () => {
  dir = await startSlapd();
  t = await createTestApp({ env: { LDAP_TIMEOUT_MS: '400' }, clock: new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0)) });
  await seedUser(t.s, 'ldap.admin', { roles: ['admin'] });
  const token = (await signIn(t.app, 'ldap.admin')).access_token;
  const res = await t.app.inject({
    method: 'POST', url: '/api/v1/auth/ldap/config', headers: bearer(token),
    payload: { uri: dir.uri, bind_dn: dir.bindDn, bind_password: dir.bindPassword, base_dn: dir.baseDn, user_filter: '(&(objectClass=inetOrgPerson)(uid={username}))', group_roles: { [dir.groups.tellers]: ['staff'] } },
  });
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(async () => {
  await t?.close();
  await dir?.stop();
});

/** Signs a directory user in: their access token and account. */
async function ldapSignIn(username: string, password: string) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/login', payload: { username, password } });
  expect(res.statusCode, res.body).toBe(200);
  const user = (await t.s.users.findByLogin(username))!;
  return { token: res.json<{ access_token: string }>().access_token, user };
}

function totpSetup(token: string, currentPassword: string) {
  return t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/setup', headers: bearer(token), payload: { current_password: currentPassword } });
}

async function setDirectoryPassword(dn: string, password: string): Promise<void> {
  const client = new Client({ url: dir.uri });
  try {
    await client.bind(dir.adminDn, dir.adminPassword);
    await client.modify(dn, new Change({ operation: 'replace', modification: new Attribute({ type: 'userPassword', values: [password] }) }));
  } finally {
    await client.unbind();
  }
}

const failures = (uuid: string) => auditTotal(t.s, uuid, 'FAILED_LOGIN_ATTEMPT');

describe('a directory user\'s current password is checked in the directory', () => {
  it('enrolling an authenticator app with the directory password works; a wrong one is 401 INVALID_CREDENTIALS and counts toward the lockout', async () => {
    const { token, user } = await ldapSignIn('alice', dir.users.alice.password);
    expectError(await totpSetup(token, WRONG_PASSWORD), 401, 'INVALID_CREDENTIALS');
    expect(await failures(user.uuid)).toBe(1);
    const ok = await totpSetup(token, dir.users.alice.password);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toHaveProperty('qr_code');
    expect(await failures(user.uuid)).toBe(1);
  });

  it('a password changed in the directory takes effect at once: the old one is refused, the new one accepted', async () => {
    const { token, user } = await ldapSignIn('carol', dir.users.carol.password);
    const renewed = 'Directory#Renewed-2026';
    await setDirectoryPassword(dir.users.carol.dn, renewed);
    try {
      expectError(await totpSetup(token, dir.users.carol.password), 401, 'INVALID_CREDENTIALS');
      expect(await failures(user.uuid)).toBe(1);
      expect((await totpSetup(token, renewed)).statusCode).toBe(200);
    } finally {
      await setDirectoryPassword(dir.users.carol.dn, dir.users.carol.password);
    }
  });

  it('the directory down during the check: 401 LDAP_UNAVAILABLE, not counted against the user; back up, the check works', async () => {
    const { token, user } = await ldapSignIn('bob', dir.users.bob.password);
    await dir.pause();
    try {
      expectError(await totpSetup(token, dir.users.bob.password), 401, 'LDAP_UNAVAILABLE');
    } finally {
      dir.resume();
    }
    expect(await failures(user.uuid)).toBe(0);
    const row = await t.s.database.db.selectFrom('login_attempts').select(['failed_count', 'pending']).where('subject_key', '=', t.s.attempts.userKey(user.id)).executeTakeFirst();
    expect(row ?? { failed_count: 0, pending: 0 }).toMatchObject({ failed_count: 0, pending: 0 });
    expect((await totpSetup(token, dir.users.bob.password)).statusCode).toBe(200);
  });
});

describe('the link', () => {
  it('a link an administrator deactivated: the right directory password is 403 ACCOUNT_DISABLED, nothing is refreshed; reactivated, the sign-in works', async () => {
    const { user } = await ldapSignIn('bob', dir.users.bob.password);
    const link = () => t.s.database.db.updateTable('user_identity_providers').where('user_id', '=', user.id);
    await link().set({ active: false }).execute();
    await t.s.database.db.updateTable('users').set({ full_name: 'Renamed Locally' }).where('id', '=', user.id).execute();
    try {
      expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/login', payload: { username: 'bob', password: dir.users.bob.password } }), 403, 'ACCOUNT_DISABLED');
      expect((await t.s.users.findById(user.id))?.full_name).toBe('Renamed Locally');
    } finally {
      await link().set({ active: true }).execute();
    }
    await ldapSignIn('bob', dir.users.bob.password);
    expect((await t.s.users.findById(user.id))?.full_name).toBe(dir.users.bob.name);
  });
});

describe('threat: a local account created at the same moment as a first directory sign-in', () => {
  it('the insert that loses the unique index is 409 IDENTITY_CONFLICT (audited), not a 500, and nothing of the directory user is left', async () => {
    // The race made deterministic: a local account holds the directory user's email, and the
    // conflict check does not see it (as when an administrator's insert commits between that
    // check and ours), so the unique index is what stops the second account.
    const local = await seedUser(t.s, 'eve.local', { roles: ['customer'], email: dir.users.hostile.mail! });
    const exists = vi.spyOn(t.s.users, 'exists').mockResolvedValue({ username: false, email: false, phone: false, crossed: [] });
    try {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/login', payload: { username: dir.users.hostile.uid, password: dir.users.hostile.password } });
      expect(withoutRequestId(expectError(res, 409, 'IDENTITY_CONFLICT').details)).toEqual({ fields: ['email'] });
      expect(exists).toHaveBeenCalled();
    } finally {
      exists.mockRestore();
    }
    expect(await t.s.users.findByLogin(dir.users.hostile.uid)).toBeUndefined();
    expect(await t.s.database.db.selectFrom('user_identity_providers').select('id').where('idp_subject', '=', dir.users.hostile.dn.toLowerCase()).execute()).toEqual([]);
    const audits = await t.s.database.db.selectFrom('audit_log').select('details').where('event_type', '=', 'IDENTITY_CONFLICT').execute();
    expect(audits.some((a) => JSON.stringify(a.details).includes('"email"'))).toBe(true);
    expect(await t.s.users.findByLogin(dir.users.hostile.mail!)).toMatchObject({ id: local.id });
  });
});

describe('an account whose identity provider keeps no password this service can check (SAML)', () => {
  it('confirming a current password is 409 PASSWORD_MANAGED_EXTERNALLY, not counted against the user (no lockout for asking)', async () => {
    const user = await seedUser(t.s, 'sso.only', { roles: ['staff'] });
    const token = (await signIn(t.app, 'sso.only')).access_token;
    await t.s.database.db.insertInto('user_identity_providers').values({ user_id: user.id, idp_type: 'SAML', idp_subject: 'sso-only-nameid', idp_issuer: 'https://idp.bank.test', created_at: new Date(t.clock.now()) }).execute();
    for (let i = 0; i < 6; i++) expect(withoutRequestId(expectError(await totpSetup(token, WRONG_PASSWORD), 409, 'PASSWORD_MANAGED_EXTERNALLY').details)).toEqual({ idp_type: 'SAML' });
    expect(await failures(user.uuid)).toBe(0);
    const row = await t.s.database.db.selectFrom('login_attempts').select(['failed_count', 'pending']).where('subject_key', '=', t.s.attempts.userKey(user.id)).executeTakeFirst();
    expect(row ?? { failed_count: 0, pending: 0 }).toMatchObject({ failed_count: 0, pending: 0 });
  });
});

describe('threat: a local password outliving the directory account', () => {
  it('changing the password is 409 PASSWORD_MANAGED_EXTERNALLY before anything is checked or counted', async () => {
    const { token, user } = await ldapSignIn('jürgen', dir.users.unicode.password);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: bearer(token), payload: { current_password: WRONG_PASSWORD, new_password: 'Local#Shadow-2026!' } });
    expect(withoutRequestId(expectError(res, 409, 'PASSWORD_MANAGED_EXTERNALLY').details)).toEqual({ idp_type: 'LDAP' });
    expect(await failures(user.uuid)).toBe(0);
    expect((await t.s.credentials.state(user.id))?.hash).toBeNull();
  });

  it('an administrator\'s password reset is 409 PASSWORD_MANAGED_EXTERNALLY: no local password, the user\'s sessions kept, and the directory password never opens /auth/login', async () => {
    const { token, user } = await ldapSignIn('alice', dir.users.alice.password);
    const adminToken = (await signIn(t.app, 'ldap.admin')).access_token;
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${user.uuid}/reset-password`, headers: bearer(adminToken) });
    expectError(res, 409, 'PASSWORD_MANAGED_EXTERNALLY');
    expect((await t.s.credentials.state(user.id))?.hash).toBeNull();
    expect(await auditTotal(t.s, user.uuid, 'PASSWORD_RESET_BY_ADMIN')).toBe(0);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) })).statusCode).toBe(200);
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'alice', password: dir.users.alice.password } }), 401, 'INVALID_CREDENTIALS');
  });
});

describe('the directory connections of a node', () => {
  it('LDAP_POOL_SIZE bounds them (three sign-ins waiting on the directory at once share one connection), and closing the service closes them', async () => {
    const node = await createTestApp({
      env: {
        LDAP_POOL_SIZE: '1', LDAP_TIMEOUT_MS: '5000', LDAP_URI: dir.uri, LDAP_BIND_DN: dir.bindDn, LDAP_BIND_PASSWORD: dir.bindPassword, LDAP_BASE_DN: dir.baseDn,
        LDAP_USER_FILTER: '(&(objectClass=inetOrgPerson)(uid={username}))',
      },
    });
    const mark = dir.log().length;
    let accepted: string[] = [];
    try {
      await dir.pause();
      let signIns: Array<Promise<{ statusCode: number }>>;
      try {
        signIns = (['alice', 'bob', 'carol'] as const).map((k) => node.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/login', payload: { username: dir.users[k].uid, password: dir.users[k].password } }));
        await new Promise((resolve) => setTimeout(resolve, 200)); // all three reach the directory step
      } finally {
        dir.resume();
      }
      for (const res of await Promise.all(signIns)) expect(res.statusCode).toBe(200);
      await dir.waitForLog(/BIND dn="uid=carol,ou=people,dc=bank,dc=test" mech=SIMPLE/, mark);
      accepted = [...dir.log().slice(mark).matchAll(/ (conn=\d+) fd=\d+ ACCEPT /g)].map((m) => m[1]!);
      expect(accepted).toHaveLength(1);
    } finally {
      await node.close();
    }
    await dir.waitForLog(new RegExp(` ${accepted[0]} fd=\\d+ closed`), mark);
  });
});
