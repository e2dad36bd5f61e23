/**
 * LDAP sign-in end to end against a real OpenLDAP (issue 11): the configuration route, first
 * sign-in provisioning (once, also in parallel), the link on later sign-ins, roles from groups,
 * wrong password and unknown user alike, filter injection in the username, an empty password,
 * the directory stopped mid-test (401 LDAP_UNAVAILABLE within the timeout, nothing counted), a
 * local account with the same name (409, audited, never merged), the bind password absent from
 * every answer and log line, and the second factor a policy requires. The clock is frozen.
 */
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Attribute, Change, Client } from 'ldapts';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { Authenticator } from '../harness/authenticator.js';
import { createTestApp, testSecrets, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { startSlapd, type RunningSlapd } from '../harness/slapd.js';
import { answerWithoutRequestId, withoutRequestId } from '../harness/request-id.js';

let dir: RunningSlapd;
let t: TestApp;
const logged: string[] = [];
const secrets = testSecrets();

beforeAll(async () => {
  dir = await startSlapd();
  const log = pino({ level: 'debug' }, new Writable({ write(chunk, _enc, done) { logged.push(String(chunk)); done(); } }));
  t = await createTestApp({ env: { LDAP_TIMEOUT_MS: '2000' }, log, secrets, clock: new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0)) });
  await seedUser(t.s, 'ldap.admin', { roles: ['admin'] });
  await seedUser(t.s, 'ldap.clerk', { roles: ['customer'] });
});
afterAll(async () => {
  await t?.close();
  await dir?.stop();
});

const admin = async () => (await signIn(t.app, 'ldap.admin')).access_token;

function config(body?: Record<string, unknown>, token?: string) {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/config', headers: token === undefined ? {} : bearer(token), ...(body === undefined ? {} : { payload: body }) });
}

function ldapLogin(username: string, password: string, extra: Record<string, unknown> = {}) {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/login', payload: { username, password, ...extra } });
}

const settings = () => ({
  uri: dir.uri, bind_dn: dir.bindDn, bind_password: dir.bindPassword, base_dn: dir.baseDn,
  user_filter: '(&(objectClass=inetOrgPerson)(uid={username}))', attr_mail: 'mail', attr_name: 'cn', group_member_attr: 'memberOf',
  group_roles: { [dir.groups.tellers]: ['staff'], auditors: ['operator'] }, groups_base_dn: `ou=groups,${dir.baseDn}`,
});

async function userByName(username: string) {
  return t.s.users.findByLogin(username);
}

describe('configuration (POST /api/v1/auth/ldap/config)', () => {
  it('needs config.manage: no token 401, a customer 403 PERMISSION_DENIED', async () => {
    expectError(await config(), 401, 'TOKEN_MISSING');
    expectError(await config(undefined, (await signIn(t.app, 'ldap.clerk')).access_token), 403, 'PERMISSION_DENIED');
  });

  it('answers 400 LDAP_CONFIG_INVALID naming each bad field, and stores nothing', async () => {
    const token = await admin();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...settings(), uri: 'http://ldap.bank.example' }, 'uri'],
      [{ ...settings(), uri: 'not a uri' }, 'uri'],
      [{ ...settings(), uri: 'ldaps://:secret@ldap.bank.example' }, 'uri'], // a password in the URI would be shown and audited
      [{ ...settings(), user_filter: '(uid=alice)' }, 'user_filter'],
      [{ ...settings(), user_filter: '(uid={username}' }, 'user_filter'],
      [{ ...settings(), group_roles: { tellers: ['astronaut'] } }, 'group_roles'],
      [{ ...settings(), ca_cert: 'not a certificate' }, 'ca_cert'],
      [{ ...settings(), bind_password: undefined }, 'bind_password'],
      [{ ...settings(), surprise: true }, 'surprise'],
      [{ ...settings(), start_tls: 'yes' }, 'start_tls'],
      [{ ...settings(), groups_base_dn: undefined }, 'groups_base_dn'], // a short name ("auditors") needs a groups base
      [{ ...settings(), groups_base_dn: 'groups' }, 'groups_base_dn'],
      [{ ...settings(), group_roles: { 'cn=tellers,ou=groups,': ['staff'] } }, 'cn=tellers,ou=groups,'],
    ];
    for (const [body, field] of cases) {
      const res = await config(body, token);
      const error = expectError(res, 400, 'LDAP_CONFIG_INVALID');
      expect(JSON.stringify(error.details), JSON.stringify(body)).toContain(field);
    }
    expect((await config(undefined, token)).json()).toMatchObject({ configured: false, source: null, bind_password_set: false });
  });

  it('stores a valid configuration; reading it never returns the bind password, nor does any log line or audit row', async () => {
    const token = await admin();
    expect((await config(settings(), token)).json()).toEqual({ status: 'success' });
    for (const read of [await config(undefined, token), await config({}, token)]) {
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json()).toMatchObject({ configured: true, source: 'database', uri: dir.uri, bind_dn: dir.bindDn, bind_password_set: true });
      expect(read.body).not.toContain(dir.bindPassword);
    }
    const stored = await t.s.database.db.selectFrom('ldap_config').select('bind_password_enc').executeTakeFirstOrThrow();
    expect(stored.bind_password_enc).not.toContain(dir.bindPassword);
    // An update without bind_password keeps the stored one.
    const { bind_password: _kept, ...rest } = settings();
    expect((await config(rest, token)).json()).toEqual({ status: 'success' });
    const audits = await t.s.database.db.selectFrom('audit_log').select('details').where('event_type', '=', 'LDAP_CONFIG_CHANGED').execute();
    expect(audits).toHaveLength(2);
    expect(JSON.stringify(audits)).not.toContain(dir.bindPassword);
    expect(logged.join('')).not.toContain(dir.bindPassword);
  });
});

describe('sign-in (POST /api/v1/auth/ldap/login)', () => {
  it('the first sign-in creates the account from the directory (name, email, roles from groups, a link to the DN) in one go; the second finds it by the link', async () => {
    const res = await ldapLogin('alice', dir.users.alice.password);
    expect(res.statusCode, res.body).toBe(200);
    const alice = (await userByName('alice'))!;
    expect(alice).toMatchObject({ username: 'alice', email: 'alice@bank.test', full_name: 'Alice Archer' });
    expect((await t.s.users.grants(alice.id)).roles).toEqual(['operator', 'staff']);
    const links = await t.s.database.db.selectFrom('user_identity_providers').selectAll().where('user_id', '=', alice.id).execute();
    expect(links).toMatchObject([{ idp_type: 'LDAP', idp_subject: dir.users.alice.dn.toLowerCase(), active: true }]);
    const credential = await t.s.database.db.selectFrom('credentials').select(['type', 'username', 'password_hash']).where('user_id', '=', alice.id).executeTakeFirstOrThrow();
    expect(credential).toEqual({ type: 'password', username: 'alice', password_hash: null });
    expect(await auditTotal(t.s, alice.uuid, 'USER_PROVISIONED')).toBe(1);

    const again = await ldapLogin('ALICE', dir.users.alice.password);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().user.id).toBe(res.json().user.id);
    expect(await auditTotal(t.s, alice.uuid, 'USER_PROVISIONED')).toBe(1);
    // The local password sign-in does not open a directory account (it has no local password).
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'alice', password: dir.users.alice.password } }), 401, 'INVALID_CREDENTIALS');
  });

  it('POST /api/v1/auth/third-party/login with provider ldap is the same sign-in: the same account, a session, the same 401 for a wrong password', async () => {
    const via = await t.app.inject({ method: 'POST', url: '/api/v1/auth/third-party/login', payload: { provider: 'ldap', username: 'alice', password: dir.users.alice.password } });
    expect(via.statusCode, via.body).toBe(200);
    expect(via.json()).toMatchObject({ token_type: 'bearer', user: { id: (await userByName('alice'))!.id }, user_profile: { username: 'alice' } });
    expect(await t.s.database.db.selectFrom('sessions').select('session_id').where('session_id', '=', via.json().session_id).where('is_active', '=', true).execute()).toHaveLength(1);
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/third-party/login', payload: { provider: 'ldap', username: 'alice', password: 'not-her-password' } }), 401, 'INVALID_CREDENTIALS');
  });

  it('later sign-ins refresh the name from the directory and the roles the group map manages, keeping roles an administrator gave', async () => {
    expect((await ldapLogin('carol', dir.users.carol.password)).statusCode).toBe(200);
    const carol = (await userByName('carol'))!;
    await t.s.database.db.transaction().execute((trx) => t.s.users.setRoles(trx, carol.id, ['customer', 'staff'])); // staff is the map's: it goes
    const directory = new Client({ url: dir.uri });
    await directory.bind(dir.adminDn, dir.adminPassword);
    await directory.modify(dir.users.carol.dn, new Change({ operation: 'replace', modification: new Attribute({ type: 'cn', values: ['Carol Clerk-Mwangi'] }) }));
    await directory.unbind();
    expect((await ldapLogin('carol', dir.users.carol.password)).statusCode).toBe(200);
    expect((await userByName('carol'))!.full_name).toBe('Carol Clerk-Mwangi');
    expect((await t.s.users.grants(carol.id)).roles).toEqual(['customer']);
  });

  it('threat: telling directory users from unknown names: a wrong password and an unknown user get the same 401 INVALID_CREDENTIALS, and neither provisions anything', async () => {
    const wrong = await ldapLogin('bob', 'Wrong#Passw0rd!');
    const unknown = await ldapLogin('nobody.here', 'Wrong#Passw0rd!');
    expectError(wrong, 401, 'INVALID_CREDENTIALS');
    expectError(unknown, 401, 'INVALID_CREDENTIALS');
    expect(answerWithoutRequestId(unknown)).toEqual(answerWithoutRequestId(wrong));
    expect(await userByName('bob')).toBeUndefined();
    expect(await userByName('nobody.here')).toBeUndefined();
  });

  it('threat: LDAP filter injection in the username (*, *)(uid=*, a backslash) matches nobody: 401 INVALID_CREDENTIALS; the user whose uid holds those characters signs in with their own password', async () => {
    for (const username of ['*', '*)(uid=*', 'alice)(|(uid=*', '*)(|(objectClass=*', 'ali*', '\\2a']) {
      expectError(await ldapLogin(username, dir.users.alice.password), 401, 'INVALID_CREDENTIALS');
    }
    const hostile = await ldapLogin(dir.users.hostile.uid, dir.users.hostile.password);
    expect(hostile.statusCode, hostile.body).toBe(200);
  });

  it('threat: an empty password (an anonymous bind many directories accept) is 400 LDAP_CREDENTIALS_MISSING before any bind; so is a missing username', async () => {
    const from = dir.log().length;
    for (const body of [{ username: 'bob', password: '' }, { username: 'bob' }, { password: 'x' }, { username: '   ', password: 'x' }]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/login', payload: body });
      expectError(res, 400, 'LDAP_CREDENTIALS_MISSING');
    }
    expect(dir.log().slice(from)).not.toMatch(/uid=bob/); // neither searched nor bound
  });

  it('takes the form encoding SPEC shows (method=simple); a field given twice is 400 MALFORMED_REQUEST; another method is 422', async () => {
    const form = (body: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/ldap/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
    const ok = await form(`username=bob&password=${encodeURIComponent(dir.users.bob.password)}&method=simple`);
    expect(ok.statusCode, ok.body).toBe(200);
    expectError(await form(`username=bob&username=alice&password=${encodeURIComponent(dir.users.bob.password)}`), 400, 'MALFORMED_REQUEST');
    expectError(await form(`username=bob&password=x&method=sasl`), 422, 'VALIDATION_ERROR');
  });

  it('three parallel first sign-ins of one person create one account, one credential and one link (provisioned once, audited once), and all three sign in', async () => {
    const results = await Promise.all([1, 2, 3].map(() => ldapLogin(dir.users.unicode.uid, dir.users.unicode.password)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    const users = await t.s.database.db.selectFrom('users').select(['id', 'uuid']).where('username', '=', dir.users.unicode.uid).execute();
    expect(users).toHaveLength(1);
    expect(await t.s.database.db.selectFrom('user_identity_providers').select('id').where('user_id', '=', users[0]!.id).execute()).toHaveLength(1);
    expect(await t.s.database.db.selectFrom('credentials').select('id').where('user_id', '=', users[0]!.id).execute()).toHaveLength(1);
    expect(await auditTotal(t.s, users[0]!.uuid, 'USER_PROVISIONED')).toBe(1);
  });

  it('threat: taking over a local account: a directory user whose username or email a local account holds is 409 IDENTITY_CONFLICT, audited, and nothing is created or linked', async () => {
    const directory = new Client({ url: dir.uri });
    await directory.bind(dir.adminDn, dir.adminPassword);
    const person = async (uid: string, mail: string) => {
      await directory.add(`uid=${uid},ou=people,${dir.baseDn}`, { objectClass: ['inetOrgPerson'], uid, cn: uid, sn: uid, mail, userPassword: 'Dir#Passw0rd-2026' });
    };
    await person('dana', 'dana@bank.test');
    await person('erin', 'erin.shared@bank.test');
    await directory.unbind();
    const localDana = await seedUser(t.s, 'dana');
    const localErin = await seedUser(t.s, 'erin.local', { email: 'erin.shared@bank.test' });
    for (const [uid, fields] of [['dana', ['username']], ['erin', ['email']]] as const) {
      const res = await ldapLogin(uid, 'Dir#Passw0rd-2026');
      expectError(res, 409, 'IDENTITY_CONFLICT');
      expect(withoutRequestId(res.json().details)).toEqual({ fields });
    }
    const audits = await t.s.database.db.selectFrom('audit_log').select('username').where('event_type', '=', 'IDENTITY_CONFLICT').orderBy('username').execute();
    expect(audits.map((a) => a.username)).toEqual(['dana', 'erin']);
    expect(await t.s.database.db.selectFrom('user_identity_providers').select('id').where('user_id', 'in', [localDana.id, localErin.id]).execute()).toHaveLength(0);
    expect(await userByName('erin')).toBeUndefined();
    // Nothing was counted against the name: the conflict is the bank's to resolve, not a guess.
    expectError(await ldapLogin('dana', 'Dir#Passw0rd-2026'), 409, 'IDENTITY_CONFLICT');
  });

  it('threat: guessing one directory account under many spellings (case, spaces): they all count against the account the directory resolved, which locks after 5 (429 ACCOUNT_LOCKED), right password included; an administrator\'s unlock clears it', async () => {
    const carol = (await userByName('carol'))!; // provisioned above: the lock is the linked account's
    for (const [i, name] of ['carol', 'CAROL', ' carol ', 'Carol', 'cArOl'].entries()) {
      const res = await ldapLogin(name, 'Wrong#Passw0rd!');
      if (i < 4) expectError(res, 401, 'INVALID_CREDENTIALS');
      else expectError(res, 429, 'ACCOUNT_LOCKED');
    }
    expectError(await ldapLogin('carol', dir.users.carol.password), 429, 'ACCOUNT_LOCKED');
    expect(await auditTotal(t.s, carol.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(5);
    const unlock = await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${carol.uuid}/unlock`, headers: bearer(await admin()) });
    expect(unlock.statusCode, unlock.body).toBe(200);
    expect((await ldapLogin('carol', dir.users.carol.password)).statusCode).toBe(200);
  });

  it('the directory stopped mid-test: 401 LDAP_UNAVAILABLE within the timeout, logged for operators, not counted against the user; back up, the user signs in', async () => {
    const counted = async () => t.s.database.db.selectFrom('login_attempts').select(['subject_key', 'failed_count']).where('failed_count', '>', 0).orderBy('subject_key').execute();
    const before = await counted();
    await dir.pause();
    try {
      const res = await ldapLogin('alice', dir.users.alice.password);
      expectError(res, 401, 'LDAP_UNAVAILABLE');
    } finally {
      dir.resume();
    }
    expect(await counted()).toEqual(before);
    expect(logged.some((l) => l.includes('LDAP directory unavailable') && l.includes('"reason":"timeout"'))).toBe(true);
    expect((await ldapLogin('alice', dir.users.alice.password)).statusCode).toBe(200);
  });

  it('threat: a parallel burst of 20 wrong passwords on one directory account binds as it at most 5 times, audits 5 failures, and the rest are refused before the directory is asked to bind', async () => {
    const eve = (await userByName(dir.users.hostile.uid))!; // provisioned by the injection test
    const mark = dir.log().length;
    const results = await Promise.all(Array.from({ length: 20 }, () => ldapLogin(dir.users.hostile.uid, 'Wrong#Passw0rd!')));
    for (const r of results) expect(['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'RATE_LIMITED']).toContain(r.json().error_code);
    expect(await auditTotal(t.s, eve.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(5);
    // slapd logs every bind request as `BIND dn="…" method=128` (a success adds a mech=SIMPLE line).
    const binds = (): number => dir.log().slice(mark).split('\n').filter((l) => / BIND dn="uid=ev[^"]*" method=128/.test(l)).length;
    await vi.waitFor(() => expect(binds()).toBeGreaterThanOrEqual(5));
    // A fence: once a later request is in the log, every line of the burst is too.
    const fence = dir.log().length;
    expectError(await ldapLogin('fence-after-burst', 'Wrong#Passw0rd!'), 401, 'INVALID_CREDENTIALS');
    await dir.waitForLog(/uid=fence-after-burst/, fence);
    expect(binds()).toBe(5);
  });
});

describe('threat: the directory\'s bind password sent to another host', () => {
  it('re-pointing the server (host, port, scheme), the bind DN, StartTLS or the CA without the password is 400 LDAP_CONFIG_INVALID naming bind_password, audited; the stored password never leaves for the listener', async () => {
    const token = await admin();
    let connections = 0;
    const listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    try {
      const { bind_password: _kept, ...keep } = settings();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...keep, uri: `ldap://127.0.0.1:${port}` }, 'uri'],
        [{ ...keep, uri: `ldap://localhost:${new URL(dir.uri).port}` }, 'uri'],
        [{ ...keep, uri: dir.ldapsUri }, 'uri'],
        [{ ...keep, bind_dn: dir.adminDn }, 'bind_dn'],
        [{ ...keep, start_tls: true }, 'start_tls'],
        [{ ...keep, ca_cert: readFileSync(dir.untrustedCaFile, 'utf8') }, 'ca_cert'],
      ];
      const failuresBefore = (await t.s.audit.query({ eventType: 'LDAP_CONFIG_CHANGED', limit: 100, offset: 0 })).entries.filter((e) => e.status === 'FAILURE').length;
      for (const [body, changed] of cases) {
        const error = expectError(await config(body, token), 400, 'LDAP_CONFIG_INVALID');
        const fields = (error.details as { fields: Array<{ field: string; message: string }> }).fields;
        expect(fields.find((f) => f.field === 'bind_password')?.message, JSON.stringify(body)).toContain(changed);
      }
      const failures = (await t.s.audit.query({ eventType: 'LDAP_CONFIG_CHANGED', limit: 100, offset: 0 })).entries.filter((e) => e.status === 'FAILURE');
      expect(failures).toHaveLength(failuresBefore + cases.length);
      expect(failures.map((e) => (e.details as { changed: string[] }).changed.join()).sort()).toEqual(['bind_dn', 'ca_cert', 'start_tls', 'uri', 'uri', 'uri']);
      expect(failures.find((e) => (e.details as { uri: string }).uri === `ldap://127.0.0.1:${port}`)).toMatchObject({ username: 'ldap.admin', details: { reason: 'bind_password_required', changed: ['uri'] } });
      expect((await config(undefined, token)).json()).toMatchObject({ uri: dir.uri, bind_dn: dir.bindDn, start_tls: false, ca_cert: null });
      expect((await ldapLogin('alice', dir.users.alice.password)).statusCode).toBe(200);
      expect(connections).toBe(0);

      // The same server, account and TLS in another spelling keep the password.
      const respelled = await config({ ...keep, uri: `${dir.uri.toUpperCase().replace('LDAP://', 'ldap://')}/`, bind_dn: dir.bindDn.toUpperCase() }, token);
      expect(respelled.json(), respelled.body).toEqual({ status: 'success' });
      expect((await ldapLogin('alice', dir.users.alice.password)).statusCode).toBe(200);
    } finally {
      listener.close();
      expect((await config(settings(), token)).json()).toEqual({ status: 'success' });
    }
  });
});

describe('threat: a role by a group\'s short name, from a group outside the groups base', () => {
  it('bob makes cn=auditors in an OU he manages and joins it: no operator role; the real cn=auditors still grants it; a full DN key matches in any spelling', async () => {
    const token = await admin();
    const rogue = `cn=auditors,ou=contractors,${dir.baseDn}`;
    const directory = new Client({ url: dir.uri });
    await directory.bind(dir.adminDn, dir.adminPassword);
    await directory.add(rogue, { objectClass: 'groupOfNames', cn: 'auditors', member: [dir.users.bob.dn] });
    try {
      const respelled = dir.groups.tellers.toUpperCase().replace(/,/g, ', ');
      expect((await config({ ...settings(), group_roles: { [respelled]: ['staff'], auditors: ['operator'] } }, token)).json()).toEqual({ status: 'success' });
      expect((await ldapLogin('bob', dir.users.bob.password)).statusCode).toBe(200);
      expect((await t.s.users.grants((await userByName('bob'))!.id)).roles).toEqual(['staff']);
      expect((await ldapLogin('alice', dir.users.alice.password)).statusCode).toBe(200);
      expect((await t.s.users.grants((await userByName('alice'))!.id)).roles).toEqual(['operator', 'staff']);
    } finally {
      await directory.del(rogue);
      await directory.unbind();
      expect((await config(settings(), token)).json()).toEqual({ status: 'success' });
    }
  });

  it('a map stored before short names needed a groups base: start-up warns naming the keys, and they grant nothing', async () => {
    await t.s.database.db.updateTable('ldap_config').set({ groups_base_dn: null }).execute();
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
    const restarted = await createTestApp({ database: t.s.database, log, secrets, clock: t.clock });
    try {
      expect(lines.join('')).toMatch(/short group names \\"auditors\\" map roles only under groups_base_dn/);
      await t.s.ldapSettings.announce();
      expect((await ldapLogin('alice', dir.users.alice.password)).statusCode).toBe(200);
      expect((await t.s.users.grants((await userByName('alice'))!.id)).roles).toEqual(['staff']);
    } finally {
      await restarted.closeApp();
      expect((await config(settings(), await admin())).json()).toEqual({ status: 'success' });
    }
  });
});

describe('policy and second factor apply as for every sign-in', () => {
  it('a staff member from the directory whose policy requires a second factor enrols one on first use and then signs in with it', async () => {
    const token = await admin();
    const policy = await t.app.inject({ method: 'POST', url: '/api/v1/admin/access-policies', headers: bearer(token), payload: { name: 'staff need a factor', channel: 'web', role: 'staff', rules: { require_second_factor: true } } });
    expect(policy.statusCode, policy.body).toBe(201);
    const first = expectError(await ldapLogin('bob', dir.users.bob.password), 403, 'MFA_SETUP_INCOMPLETE');
    const twoFactor = (first.details as { two_factor_token: string }).two_factor_token;
    const setup = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/setup', payload: { two_factor_token: twoFactor } });
    expect(setup.statusCode, setup.body).toBe(200);
    const app = Authenticator.scan(setup.json<{ qr_code: string }>().qr_code);
    const verify = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify', payload: { two_factor_token: twoFactor, code: app.code(t.clock.now()) } });
    expect(verify.statusCode, verify.body).toBe(200);
    expect(verify.json().sign_in.user_profile).toMatchObject({ mfa_completed: true, roles: ['staff'] });
  });
});

describe('TLS to the directory, configured through the route', () => {
  const signInAs = async (): Promise<number> => (await ldapLogin('carol', dir.users.carol.password)).statusCode;

  it('ldaps:// and StartTLS with the bank\'s CA sign in; a CA the directory\'s certificate does not chain to is 401 LDAP_UNAVAILABLE (reason tls), not counted against the user', async () => {
    const token = await admin();
    const ca = readFileSync(dir.caFile, 'utf8');
    expect(await signInAs()).toBe(200); // plain ldap://, as configured above; carol is provisioned
    const carol = (await userByName('carol'))!;
    const failuresBefore = await auditTotal(t.s, carol.uuid, 'FAILED_LOGIN_ATTEMPT');
    try {
      expect((await config({ ...settings(), uri: dir.ldapsUri, ca_cert: ca }, token)).json()).toEqual({ status: 'success' });
      expect(await signInAs()).toBe(200);
      expect((await config({ ...settings(), start_tls: true, ca_cert: ca }, token)).json()).toEqual({ status: 'success' });
      expect(await signInAs()).toBe(200);
      for (const body of [{ ...settings(), uri: dir.ldapsUri, ca_cert: readFileSync(dir.untrustedCaFile, 'utf8') }, { ...settings(), start_tls: true, ca_cert: readFileSync(dir.untrustedCaFile, 'utf8') }]) {
        expect((await config(body, token)).json()).toEqual({ status: 'success' });
        const mark = logged.length;
        expectError(await ldapLogin('carol', dir.users.carol.password), 401, 'LDAP_UNAVAILABLE');
        expect(logged.slice(mark).some((l) => l.includes('LDAP directory unavailable') && l.includes('"reason":"tls"'))).toBe(true);
      }
      expect(await auditTotal(t.s, carol.uuid, 'FAILED_LOGIN_ATTEMPT')).toBe(failuresBefore);
    } finally {
      expect((await config(settings(), token)).json()).toEqual({ status: 'success' });
    }
  });

  it('a new configuration replaces the pooled directory connections: those opened on the old settings close, and the next sign-in opens its own on the new ones (StartTLS here)', async () => {
    const token = await admin();
    expect(await signInAs()).toBe(200); // plain ldap://: the pool keeps its connections open
    const before = dir.log();
    const closed = (conn: string): RegExp => new RegExp(` ${conn} fd=\\d+ closed`);
    const open = [...before.matchAll(/ (conn=\d+) fd=\d+ ACCEPT /g)].map((m) => m[1]!).filter((conn) => !closed(conn).test(before));
    expect(open.length).toBeGreaterThan(0);
    try {
      expect((await config({ ...settings(), start_tls: true, ca_cert: readFileSync(dir.caFile, 'utf8') }, token)).json()).toEqual({ status: 'success' });
      const mark = dir.log().length;
      expect(await signInAs()).toBe(200);
      for (const conn of open) await dir.waitForLog(closed(conn));
      await dir.waitForLog(/BIND dn="uid=carol,ou=people,dc=bank,dc=test" mech=SIMPLE/, mark);
      const binds = dir.log().slice(mark).split('\n').filter((l) => / mech=SIMPLE /.test(l));
      expect(binds.length).toBeGreaterThan(0);
      for (const line of binds) expect(line).toMatch(/ ssf=(?!0\b)\d+/); // every bind of the new pool is over TLS
      expect(binds.some((l) => open.some((conn) => l.includes(` ${conn} `)))).toBe(false);
    } finally {
      expect((await config(settings(), token)).json()).toEqual({ status: 'success' });
    }
  });
});
