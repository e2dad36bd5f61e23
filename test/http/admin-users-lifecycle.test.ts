/**
 * User lifecycle administration (issue 25, sections 1 and 2): finding users (keyset pages,
 * search through the blind indexes, filters), reading, changing, disabling and soft-deleting
 * them, their sessions, and the one public id (the uuid) on every route that names a user.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/service.js';
import type { UserRow } from '../../src/users/store.js';
import { createTestApp, useTwoNodes, type TestApp } from '../harness/app.js';
import { signal } from '../harness/comparisons.js';
import { auditTotal, bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';

type Res = Awaited<ReturnType<typeof login>>;
interface AdminUserView { id: string; uuid: string; username: string; email: string | null; phone: string | null; full_name: string | null; language: string | null; roles: string[]; entities: string[]; status: string; is_active: boolean; locked_until: string | null; deleted_at: string | null }
interface Page { users: AdminUserView[]; next_cursor: string | null; limit: number }
interface SessionView { session_id: string; channel: string; device_tag: string | null; ip_address: string; expires_at: string; idle_expires_at: string }

let t: TestApp;
let root: UserRow;
let rootToken: string;
let staffToken: string;

beforeAll(async () => {
  t = await createTestApp();
  root = await seedUser(t.s, 'root.admin', { roles: ['admin'], email: 'root@bank.example' });
  await seedUser(t.s, 'sam.staff', { roles: ['staff'] });
  rootToken = (await signIn(t.app, 'root.admin')).access_token;
  staffToken = (await signIn(t.app, 'sam.staff')).access_token;
  for (const [code, name] of [['NBO-001', 'Nairobi'], ['MSA-002', 'Mombasa'], ['OLD-009', 'Closed branch']] as const) await t.s.entities.create(t.s.database.db, code, name);
  const old = (await t.s.entities.byCode('OLD-009'))!;
  await t.s.entities.update(t.s.database.db, old.uuid, { isActive: false });
});
afterAll(async () => t.close());

function call(method: 'GET' | 'PATCH' | 'DELETE' | 'POST', url: string, payload?: Record<string, unknown>, token = rootToken): Promise<Res> {
  return t.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
}
const users = '/api/v1/admin/users';
const view = async (res: Res): Promise<AdminUserView> => {
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { user: AdminUserView }).user;
};
const validate = (token: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) });
const refresh = (refreshToken: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: refreshToken } });
const auditOf = async (uuid: string, eventType: string): Promise<AuditEntry[]> =>
  ((await call('GET', `/api/v1/admin/audit?user_id=${uuid}&event_type=${eventType}`)).json() as { entries: AuditEntry[] }).entries;

describe('GET /api/v1/admin/users: keyset pages, search and filters', () => {
  beforeAll(async () => {
    for (const i of [4, 1, 7, 3, 6, 2, 5]) await seedUser(t.s, `kp.user.${i}`, { email: `kp${i}@bank.example`, phone: `+2547000001${i}0` });
  });

  it('pages in username order with an opaque cursor: every user once, none skipped, no OFFSET', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const res = await call('GET', `${users}?search=kp.user&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as Page;
      expect(page.limit).toBe(3);
      sizes.push(page.users.length);
      seen.push(...page.users.map((u) => u.username));
      cursor = page.next_cursor;
      // A user created between pages, before the cursor, does not shift the pages that follow.
      if (seen.length === 3) await seedUser(t.s, 'kp.user.0');
    } while (cursor !== null);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(['kp.user.1', 'kp.user.2', 'kp.user.3', 'kp.user.4', 'kp.user.5', 'kp.user.6', 'kp.user.7']);
  });

  it('a page that ends exactly at the last user says so (next_cursor null)', async () => {
    const page = (await call('GET', `${users}?search=kp.user.&limit=8`)).json() as Page;
    expect(page.users).toHaveLength(8);
    expect(page.next_cursor).toBeNull();
  });

  it('finds the whole email and the whole phone number through their blind indexes, never a part of one', async () => {
    const names = async (q: string) => ((await call('GET', `${users}?search=${encodeURIComponent(q)}`)).json() as Page).users.map((u) => u.username);
    expect(await names('KP3@Bank.Example')).toEqual(['kp.user.3']);
    expect(await names('+254700000150')).toEqual(['kp.user.5']);
    expect(await names('kp3@bank')).toEqual([]);
    expect(await names('+2547000001')).toEqual([]);
    // Stored encrypted: the database holds neither in clear.
    const row = await t.s.database.db.selectFrom('users').select(['email', 'phone']).where('username', '=', 'kp.user.5').executeTakeFirstOrThrow();
    expect(`${row.email} ${row.phone}`).not.toMatch(/kp5@|\+254700000150/);
  });

  it('filters by role, branch and status', async () => {
    const u = await seedUser(t.s, 'filter.me', { roles: ['operator'] });
    expect((await call('PATCH', `${users}/${u.uuid}`, { entities: ['msa-002'] })).statusCode).toBe(200);
    const names = async (q: string) => ((await call('GET', `${users}?${q}`)).json() as Page).users.map((x) => x.username);
    expect(await names('role=operator')).toEqual(['filter.me']);
    expect(await names('entity=MSA-002')).toEqual(['filter.me']);
    expect(await names('status=disabled')).toEqual([]);
    expect((await call('PATCH', `${users}/${u.uuid}`, { active: false })).statusCode).toBe(200);
    expect(await names('status=disabled')).toEqual(['filter.me']);
    expect(await names('status=active&role=operator')).toEqual([]);
  });

  it('lists a locked account as locked until its lock ends', async () => {
    const u = await seedUser(t.s, 'locked.out');
    for (let i = 0; i < t.s.config.signin.maxLoginAttempts; i++) await login(t.app, 'locked.out', 'Wrong#Passw0rd!');
    const listed = ((await call('GET', `${users}?status=locked`)).json() as Page).users;
    expect(listed.map((x) => x.username)).toEqual(['locked.out']);
    expect(listed[0]).toMatchObject({ status: 'locked', is_active: true, locked_until: expect.any(String) });
    expect((await call('POST', `${users}/${u.uuid}/unlock`)).statusCode).toBe(200);
    expect(((await call('GET', `${users}?status=locked`)).json() as Page).users).toEqual([]);
  });

  it('refuses a cursor it did not issue with 422 VALIDATION_ERROR naming cursor', async () => {
    for (const bad of ['bm9wZQ', 'eyJ2IjoyLCJhZnRlciI6ImEifQ', 'not*base64']) {
      const body = expectError(await call('GET', `${users}?cursor=${bad}`), 422, 'VALIDATION_ERROR');
      expect((body.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field)).toContain('cursor');
    }
    expectError(await call('GET', `${users}?limit=201`), 422, 'VALIDATION_ERROR');
  });
});

describe('GET and PATCH /api/v1/admin/users/{id}', () => {
  it('reads a user by uuid: `id` is the uuid and the integer appears nowhere', async () => {
    const u = await seedUser(t.s, 'read.me', { email: 'read.me@bank.example' });
    const res = await call('GET', `${users}/${u.uuid}`);
    const got = await view(res);
    expect(got).toMatchObject({ id: u.uuid, uuid: u.uuid, username: 'read.me', email: 'read.me@bank.example', roles: ['customer'], entities: [], status: 'active', deleted_at: null });
    expect(typeof got.id).toBe('string');
    expect(res.body).not.toMatch(new RegExp(`"id":${u.id}\\b`));
  });

  it('changes name, contacts, language, roles and branches, and audits which fields changed (never a contact\'s value)', async () => {
    const u = await seedUser(t.s, 'change.me', { roles: ['customer'] });
    const res = await call('PATCH', `${users}/${u.uuid}`, { full_name: 'Chantal Mbeki', email: 'Chantal@Bank.example', phone: '+254711000222', language: 'fr', roles: ['customer', 'operator'], entities: ['NBO-001', 'msa-002'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      user: { id: u.uuid, full_name: 'Chantal Mbeki', email: 'Chantal@Bank.example', phone: '+254711000222', language: 'fr', roles: ['customer', 'operator'], entities: ['MSA-002', 'NBO-001'] },
      sessions_ended: 0,
    });
    expect((await t.s.users.findByLogin('chantal@bank.example'))?.username).toBe('change.me');
    expect((await t.s.users.findByPhone('+254711000222'))?.username).toBe('change.me');
    const [entry] = await auditOf(u.uuid, 'USER_UPDATED');
    expect(entry!.details).toMatchObject({ changed: ['full_name', 'email', 'phone', 'language', 'roles', 'entities'], roles_before: ['customer'], roles_after: ['customer', 'operator'], changed_by_id: root.uuid });
    expect(JSON.stringify(entry)).not.toMatch(/Chantal@|254711000222/);
    // null clears; an absent field stays.
    expect(await view(await call('PATCH', `${users}/${u.uuid}`, { phone: null, entities: [] }))).toMatchObject({ phone: null, entities: [], email: 'Chantal@Bank.example' });
  });

  it('refuses contacts another account holds as creation does: 409 USER_EXISTS naming the field, 409 IDENTIFIER_CONFLICT', async () => {
    await seedUser(t.s, 'holder.one', { email: 'holder@bank.example', phone: '+254722000333' });
    const u = await seedUser(t.s, 'wants.contacts');
    const byEmail = expectError(await call('PATCH', `${users}/${u.uuid}`, { email: 'HOLDER@bank.example' }), 409, 'USER_EXISTS');
    expect(byEmail.details).toMatchObject({ fields: ['email'] });
    expect(expectError(await call('PATCH', `${users}/${u.uuid}`, { phone: '+254722000333' }), 409, 'USER_EXISTS').details).toMatchObject({ fields: ['phone'] });
    await seedUser(t.s, 'ops@branch.example');
    expect(expectError(await call('PATCH', `${users}/${u.uuid}`, { email: 'OPS@branch.example' }), 409, 'IDENTIFIER_CONFLICT').details).toMatchObject({ fields: ['email'] });
    // Its own address again is no conflict.
    expect((await call('PATCH', `${users}/${u.uuid}`, { email: 'mine@bank.example' })).statusCode).toBe(200);
    expect((await call('PATCH', `${users}/${u.uuid}`, { email: 'MINE@bank.example' })).statusCode).toBe(200);
  });

  it('threat: a parallel burst of changes and creations claiming one email leaves it with exactly one account, the rest 409 USER_EXISTS', async () => {
    const a1 = await seedUser(t.s, 'race.change.one');
    const a2 = await seedUser(t.s, 'race.change.two');
    const email = 'contested@bank.example';
    const results = await Promise.all([
      call('PATCH', `${users}/${a1.uuid}`, { email }),
      call('POST', users, { username: 'race.create.one', email, roles: ['customer'] }),
      call('PATCH', `${users}/${a2.uuid}`, { email }),
      call('POST', users, { username: 'race.create.two', email, roles: ['customer'] }),
    ]);
    expect(results.filter((r) => r.statusCode < 300)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode >= 300)) expectError(r, 409, 'USER_EXISTS');
    const holders = ((await call('GET', `${users}?search=${encodeURIComponent(email)}`)).json() as { users: AdminUserView[] }).users;
    expect(holders).toHaveLength(1);
  });

  it('refuses unknown roles (422 UNKNOWN_ROLE) and unknown or deactivated branches (422 UNKNOWN_ENTITY), changing nothing', async () => {
    const u = await seedUser(t.s, 'strict.change');
    expect(expectError(await call('PATCH', `${users}/${u.uuid}`, { roles: ['wizard'], full_name: 'X' }), 422, 'UNKNOWN_ROLE').details).toMatchObject({ unknown_roles: ['wizard'] });
    expect(expectError(await call('PATCH', `${users}/${u.uuid}`, { entities: ['NOPE-1', 'OLD-009'] }), 422, 'UNKNOWN_ENTITY').details).toMatchObject({ unknown_entities: ['NOPE-1'], inactive_entities: ['OLD-009'] });
    expect(await view(await call('GET', `${users}/${u.uuid}`))).toMatchObject({ full_name: null, roles: ['customer'], entities: [] });
    expectError(await call('PATCH', `${users}/${u.uuid}`, {}), 422, 'VALIDATION_ERROR');
  });

  it('answers an unknown uuid with 404 USER_NOT_FOUND on every route that names a user', async () => {
    const nobody = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, payload] of [['GET', ''], ['PATCH', '', { full_name: 'X' }], ['DELETE', ''], ['GET', '/sessions'], ['DELETE', '/sessions'], ['POST', '/unlock'], ['POST', '/reset-password'], ['POST', '/reset-pin']] as const) {
      expectError(await call(method, `${users}/${nobody}${path}`, payload), 404, 'USER_NOT_FOUND');
    }
  });
});

describe('one public id: integer user ids are refused saying to send the uuid', () => {
  it('threat: an integer id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming id and the uuid on every user route', async () => {
    for (const [method, path, payload] of [['GET', ''], ['PATCH', '', { full_name: 'X' }], ['DELETE', ''], ['GET', '/sessions'], ['DELETE', '/sessions'], ['DELETE', `/sessions/${root.uuid}`], ['POST', '/unlock'], ['POST', '/reset-password'], ['POST', '/reset-pin']] as const) {
      const res = await call(method, `${users}/${root.id}${path}`, payload);
      const body = expectError(res, 422, 'VALIDATION_ERROR');
      expect(body.details, `${method} ${path}`).toMatchObject({ expected: 'uuid', fields: [{ location: 'params', field: 'id' }] });
      expect(body.message).toContain('uuid');
    }
    // Nothing was done to the account the integer names.
    expect((await validate(rootToken)).statusCode).toBe(200);
  });

  it('threat: the urn:uuid: form of a uuid (which a generic uuid format accepts and PostgreSQL refuses) answers 422 VALIDATION_ERROR naming the format, never 500, on a signed-in and a public route', async () => {
    const urn = `urn:uuid:${root.uuid}`;
    for (const [url, token] of [[`${users}/${urn}`, rootToken], [`/api/v1/faq/${urn}`, undefined]] as const) {
      const res = await t.app.inject({ method: 'GET', url, ...(token ? { headers: bearer(token) } : {}) });
      const body = expectError(res, 422, 'VALIDATION_ERROR');
      expect(body.details, url).toMatchObject({ fields: [{ location: 'params', constraint: 'format', format: 'uuid' }] });
    }
  });

  it('the sign-in answer keeps its integer user.id (published contract, deprecated) beside user.uuid', async () => {
    const body = await signIn(t.app, 'sam.staff');
    expect(body.user).toMatchObject({ id: expect.any(Number), uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as { components: { schemas: Record<string, { properties: Record<string, { properties?: Record<string, { deprecated?: boolean; description?: string }> }> }> } };
    const schemas = Object.values(doc.components.schemas).filter((x) => x.properties?.user?.properties?.active !== undefined);
    expect(schemas.length).toBeGreaterThan(0);
    for (const schema of schemas) {
      expect(schema.properties.user!.properties!.id).toMatchObject({ deprecated: true, description: expect.stringContaining('uuid') });
    }
  });
});

describe('disabling, enabling and deleting', () => {
  it('threat: a disabled user\'s access token is refused at the next request (401 SESSION_INVALID), the refresh token too, and sign-in answers 403 ACCOUNT_DISABLED', async () => {
    const u = await seedUser(t.s, 'leaver.one');
    const s = await signIn(t.app, 'leaver.one');
    expect((await validate(s.access_token)).statusCode).toBe(200);
    const res = await call('PATCH', `${users}/${u.uuid}`, { active: false });
    expect(res.json()).toMatchObject({ user: { status: 'disabled', is_active: false }, sessions_ended: 1 });
    expectError(await validate(s.access_token), 401, 'SESSION_INVALID');
    expectError(await refresh(s.refresh_token), 401, 'TOKEN_REVOKED');
    expectError(await login(t.app, 'leaver.one'), 403, 'ACCOUNT_DISABLED');
    expect((await auditOf(u.uuid, 'USER_DISABLED'))[0]?.details).toMatchObject({ changed: ['active'], sessions_ended: 1, changed_by_id: root.uuid });

    expect(await view(await call('PATCH', `${users}/${u.uuid}`, { active: true }))).toMatchObject({ status: 'active', is_active: true });
    expect(await auditOf(u.uuid, 'USER_ENABLED')).toHaveLength(1);
    await signIn(t.app, 'leaver.one');
  });

  it('deletes softly: disabled for good, sessions ended, audited, readable but not changeable, identifiers still taken', async () => {
    const u = await seedUser(t.s, 'gone.user', { email: 'gone@bank.example' });
    const s = await signIn(t.app, 'gone.user');
    const res = await call('DELETE', `${users}/${u.uuid}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user: { id: u.uuid, status: 'deleted', is_active: false, deleted_at: new Date(t.clock.now()).toISOString() }, sessions_ended: 1 });
    expectError(await validate(s.access_token), 401, 'SESSION_INVALID');
    expectError(await login(t.app, 'gone.user'), 403, 'ACCOUNT_DISABLED');
    expect((await auditOf(u.uuid, 'USER_DELETED'))[0]?.details).toMatchObject({ sessions_ended: 1, deleted_by_id: root.uuid });
    expect(await view(await call('GET', `${users}/${u.uuid}`))).toMatchObject({ status: 'deleted' });
    expect(((await call('GET', `${users}?search=gone.user`)).json() as Page).users).toEqual([]);
    expect(((await call('GET', `${users}?search=gone.user&status=deleted`)).json() as Page).users.map((x) => x.username)).toEqual(['gone.user']);
    expectError(await call('PATCH', `${users}/${u.uuid}`, { active: true }), 409, 'ACCOUNT_DELETED');
    expectError(await call('DELETE', `${users}/${u.uuid}`), 409, 'ACCOUNT_DELETED');
    expectError(await call('POST', `${users}/${u.uuid}/reset-password`), 409, 'ACCOUNT_DELETED');
    expectError(await call('POST', users, { username: 'gone.user', roles: ['customer'] }), 409, 'USER_EXISTS');
  });

  it('threat: an administrator cannot disable or delete their own account (409 CANNOT_DISABLE_SELF)', async () => {
    expectError(await call('PATCH', `${users}/${root.uuid}`, { active: false }), 409, 'CANNOT_DISABLE_SELF');
    expectError(await call('DELETE', `${users}/${root.uuid}`), 409, 'CANNOT_DISABLE_SELF');
    expect((await validate(rootToken)).statusCode).toBe(200);
  });

  it('threat: deleting while the user signs in leaves no live session of the deleted account', async () => {
    const u = await seedUser(t.s, 'racing.signin');
    const [signin, deleted] = await Promise.all([login(t.app, 'racing.signin', STRONG_PASSWORD), call('DELETE', `${users}/${u.uuid}`)]);
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect([200, 403]).toContain(signin.statusCode);
    if (signin.statusCode === 200) expectError(await validate((signin.json() as { access_token: string }).access_token), 401, 'SESSION_INVALID');
    else expectError(signin, 403, 'ACCOUNT_DISABLED');
    const live = await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', u.id).where('is_active', '=', true).execute();
    expect(live).toEqual([]);
  });
});

describe('roles in tokens', () => {
  it('threat: a change of roles that takes a permission away ends the user\'s sessions at once (401 SESSION_INVALID)', async () => {
    const u = await seedUser(t.s, 'demoted.admin', { roles: ['admin'] });
    const s = await signIn(t.app, 'demoted.admin');
    expect((await call('GET', users, undefined, s.access_token)).statusCode).toBe(200);
    const res = await call('PATCH', `${users}/${u.uuid}`, { roles: ['staff'] });
    expect(res.json()).toMatchObject({ user: { roles: ['staff'] }, sessions_ended: 1 });
    expectError(await call('GET', users, undefined, s.access_token), 401, 'SESSION_INVALID');
    expect((await auditOf(u.uuid, 'USER_UPDATED'))[0]?.details).toMatchObject({ permissions_removed: expect.arrayContaining(['users.read', 'users.update']), sessions_ended: 1 });
    const again = await signIn(t.app, 'demoted.admin');
    expectError(await call('GET', users, undefined, again.access_token), 403, 'PERMISSION_DENIED');
  });

  it('threat: a promotion ends the sessions too, so a password-only session never carries a role that needs more (second factor, channel access)', async () => {
    const u = await seedUser(t.s, 'promoted.user', { roles: ['customer'] });
    const s = await signIn(t.app, 'promoted.user');
    expect((await call('PATCH', `${users}/${u.uuid}`, { roles: ['customer', 'admin'] })).json()).toMatchObject({ sessions_ended: 1 });
    expectError(await call('GET', users, undefined, s.access_token), 401, 'SESSION_INVALID');
    expectError(await refresh(s.refresh_token), 401, 'TOKEN_REVOKED');
    const again = await signIn(t.app, 'promoted.user');
    expect((await call('GET', users, undefined, again.access_token)).statusCode).toBe(200);
  });

  it('a change that leaves the roles as they were ends nothing', async () => {
    const u = await seedUser(t.s, 'same.roles', { roles: ['staff', 'customer'] });
    const s = await signIn(t.app, 'same.roles');
    expect((await call('PATCH', `${users}/${u.uuid}`, { roles: ['customer', 'staff'], full_name: 'Same Roles' })).json()).toMatchObject({ sessions_ended: 0 });
    expect((await call('POST', '/api/v1/auth/validate', undefined, s.access_token)).statusCode).toBe(200);
  });

  it('a parallel burst of role changes to one user leaves one whole set, never a mix', async () => {
    const u = await seedUser(t.s, 'burst.roles', { roles: ['customer'] });
    const sets = [['staff'], ['operator'], ['agent', 'customer'], ['staff', 'operator']];
    const results = await Promise.all(sets.map((roles) => call('PATCH', `${users}/${u.uuid}`, { roles })));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const final = (await view(await call('GET', `${users}/${u.uuid}`))).roles;
    expect(sets.map((x) => [...x].sort().join())).toContain(final.join());
    expect(await auditTotal(t.s, u.uuid, 'USER_UPDATED')).toBe(4); // each change applied whole, one after another
  });
});

describe('sessions of a user', () => {
  it('threat: ending one session twice at once ends it once: one 200, one 404 SESSION_NOT_FOUND, one audit entry', async () => {
    const u = await seedUser(t.s, 'twice.ended');
    const web = await signIn(t.app, 'twice.ended');
    const end = () => call('DELETE', `${users}/${u.uuid}/sessions/${web.session_id}`);
    const results = await Promise.all([end(), end(), end()]);
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 404, 'SESSION_NOT_FOUND');
    expect(await auditTotal(t.s, u.uuid, 'SESSION_ENDED')).toBe(1);
    expectError(await validate(web.access_token), 401, 'SESSION_INVALID');
  });

  it('lists active sessions without tokens or keys, ends one, then all; each audited', async () => {
    const u = await seedUser(t.s, 'many.sessions');
    const web = await signIn(t.app, 'many.sessions');
    const other = await signIn(t.app, 'many.sessions');
    const res = await call('GET', `${users}/${u.uuid}/sessions`);
    expect(res.statusCode, res.body).toBe(200);
    const list = res.json() as { user_id: string; sessions: SessionView[] };
    expect(list.user_id).toBe(u.uuid);
    expect(list.sessions.map((x) => x.session_id).sort()).toEqual([web.session_id, other.session_id].sort());
    expect(list.sessions[0]).toMatchObject({ channel: 'web', device_tag: null, ip_address: expect.any(String) });
    for (const secret of [web.access_token, web.refresh_token, other.access_token]) expect(res.body).not.toContain(secret);
    expect(res.body).not.toContain('aes');

    const one = await call('DELETE', `${users}/${u.uuid}/sessions/${web.session_id}`);
    expect(one.json()).toEqual({ status: 'success', sessions_ended: [web.session_id] });
    expectError(await validate(web.access_token), 401, 'SESSION_INVALID');
    expect((await validate(other.access_token)).statusCode).toBe(200);
    expectError(await call('DELETE', `${users}/${u.uuid}/sessions/${web.session_id}`), 404, 'SESSION_NOT_FOUND');
    // Another user's session is not this user's.
    const staffSession = (await signIn(t.app, 'sam.staff')).session_id;
    expectError(await call('DELETE', `${users}/${u.uuid}/sessions/${staffSession}`), 404, 'SESSION_NOT_FOUND');

    expect((await call('DELETE', `${users}/${u.uuid}/sessions`)).json()).toEqual({ status: 'success', sessions_ended: [other.session_id] });
    expectError(await validate(other.access_token), 401, 'SESSION_INVALID');
    expect(((await call('GET', `${users}/${u.uuid}/sessions`)).json() as { sessions: unknown[] }).sessions).toEqual([]);
    const ended = await auditOf(u.uuid, 'SESSION_ENDED');
    expect(ended.map((e) => e.details.all_sessions).sort()).toEqual([false, true]); // one clock tick: order is not asserted
    await signIn(t.app, 'many.sessions'); // the account itself is untouched
  });

  it('threat: an administrator reading sessions could replay a device fingerprint: a bound device shows as a keyed hash (the same for the same device), never the fingerprint or its plain hash', async () => {
    const u = await seedUser(t.s, 'mobile.user');
    const fingerprint = 'device-fp-0123456789abcdef';
    const res = await login(t.app, 'mobile.user', STRONG_PASSWORD, { channel: 'mobile', device_fingerprint: fingerprint }, { 'x-device-fingerprint': fingerprint });
    expect(res.statusCode, res.body).toBe(200);
    const list = await call('GET', `${users}/${u.uuid}/sessions`);
    expect(list.body).not.toContain(fingerprint);
    expect(list.body).not.toContain(createHash('sha256').update(fingerprint).digest('hex'));
    const tag = (list.json() as { sessions: SessionView[] }).sessions[0]?.device_tag;
    expect(tag).toMatch(/^[0-9a-f]{64}$/);
    await login(t.app, 'mobile.user', STRONG_PASSWORD, { channel: 'mobile', device_fingerprint: fingerprint }, { 'x-device-fingerprint': fingerprint });
    const both = ((await call('GET', `${users}/${u.uuid}/sessions`)).json() as { sessions: SessionView[] }).sessions;
    expect(both.map((x) => x.device_tag)).toEqual([tag, tag]);
  });
});

describe('permissions', () => {
  it('a user without the permission gets 403 PERMISSION_DENIED naming it on every lifecycle route', async () => {
    const id = root.uuid;
    const routes: Array<['GET' | 'PATCH' | 'DELETE', string, string, Record<string, unknown>?]> = [
      ['GET', users, 'users.read'], ['GET', `${users}/${id}`, 'users.read'], ['PATCH', `${users}/${id}`, 'users.update', { full_name: 'X' }],
      ['DELETE', `${users}/${id}`, 'users.delete'], ['GET', `${users}/${id}/sessions`, 'users.read'], ['DELETE', `${users}/${id}/sessions`, 'users.update'],
      ['DELETE', `${users}/${id}/sessions/${id}`, 'users.update'],
    ];
    for (const [method, url, permission, payload] of routes) {
      const body = expectError(await call(method, url, payload, staffToken), 403, 'PERMISSION_DENIED');
      expect(body.details, `${method} ${url}`).toMatchObject({ required_permission: permission });
    }
    expect((await validate(rootToken)).statusCode).toBe(200); // nothing happened to the administrator
  });
});

describe('two nodes', () => {
  const nodes = useTwoNodes();

  // On PostgreSQL the ended session crosses by NOTIFY; on PGlite the nodes share one database and its in-process bus.
  it('threat: a user disabled on node a is refused on node b, which had their session cached, as soon as b hears of it', async () => {
    const { a, b } = nodes;
    await seedUser(a.s, 'nodes.admin', { roles: ['admin'] });
    const leaver = await seedUser(a.s, 'nodes.leaver');
    const admin = (await signIn(a.app, 'nodes.admin')).access_token;
    const s = await signIn(b.app, 'nodes.leaver');
    expect((await b.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(s.access_token) })).statusCode).toBe(200); // cached on b
    const heard = signal();
    b.s.bus.subscribe((e) => {
      if (e.type === 'session.ended' && e.sessionId === s.session_id) heard.fire();
    });
    const res = await a.app.inject({ method: 'PATCH', url: `${users}/${leaver.uuid}`, headers: bearer(admin), payload: { active: false } });
    expect(res.statusCode, res.body).toBe(200);
    await heard.promise;
    expectError(await b.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(s.access_token) }), 401, 'SESSION_INVALID');
  });
});

describe('no escalation through user administration', () => {
  it('threat: a holder of users.create and users.update alone cannot give anyone (themselves included) a role granting permissions they lack: 403 PERMISSION_NOT_HELD', async () => {
    const db = t.s.database.db;
    const role = await db.insertInto('roles').values({ name: 'help.desk', description: 'Help desk' }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').columns(['role_id', 'permission_id'])
      .expression((eb) => eb.selectFrom('permissions').select([eb.val(role.id).as('role_id'), 'id']).where('name', 'in', ['users.read', 'users.create', 'users.update'])).execute();
    const desk = await seedUser(t.s, 'desk.agent', { roles: ['help.desk'] });
    const token = (await signIn(t.app, 'desk.agent')).access_token;
    const target = await seedUser(t.s, 'desk.target', { roles: ['operator'] });

    const self = expectError(await call('PATCH', `${users}/${desk.uuid}`, { roles: ['help.desk', 'admin'] }, token), 403, 'PERMISSION_NOT_HELD');
    expect(self.details).toMatchObject({ roles: ['admin'], permissions: expect.arrayContaining(['audit.read', 'users.delete']) });
    expectError(await call('PATCH', `${users}/${target.uuid}`, { roles: ['admin'] }, token), 403, 'PERMISSION_NOT_HELD');
    expectError(await call('POST', users, { username: 'desk.made.admin', roles: ['admin'] }, token), 403, 'PERMISSION_NOT_HELD');
    expect(await t.s.users.findByLogin('desk.made.admin')).toBeUndefined();
    expect((await t.s.users.grants(desk.id)).roles).toEqual(['help.desk']);
    // Roles within what they hold are theirs to give; taking one away needs nothing held.
    expect((await call('PATCH', `${users}/${target.uuid}`, { roles: ['operator', 'help.desk'] }, token)).statusCode).toBe(200);
    expect((await call('PATCH', `${users}/${target.uuid}`, { roles: ['operator'] }, token)).statusCode).toBe(200);
    expect((await call('POST', users, { username: 'desk.made.operator', roles: ['operator'] }, token)).statusCode).toBe(201);
  });

  it('threat: a holder of users.update cannot take over a more privileged account: re-addressing, resetting the password or PIN, unlocking, disabling, deleting or signing out an administrator is 403 ACCOUNT_MORE_PRIVILEGED, and nothing changes', async () => {
    const db = t.s.database.db;
    // A teller: user administration, and whatever a customer may do (so customers are within reach).
    const customerPermissions = (await db.selectFrom('role_permissions').innerJoin('roles', 'roles.id', 'role_permissions.role_id').innerJoin('permissions', 'permissions.id', 'role_permissions.permission_id').select('permissions.name').where('roles.name', '=', 'customer').execute()).map((p) => p.name);
    const role = await db.insertInto('roles').values({ name: 'teller.desk', description: 'Teller desk' }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').columns(['role_id', 'permission_id'])
      .expression((eb) => eb.selectFrom('permissions').select([eb.val(role.id).as('role_id'), 'id']).where('name', 'in', ['users.read', 'users.update', 'users.delete', ...customerPermissions])).execute();
    await seedUser(t.s, 'teller.one', { roles: ['teller.desk'] });
    const token = (await signIn(t.app, 'teller.one')).access_token;
    const boss = await seedUser(t.s, 'branch.boss', { roles: ['admin'], email: 'boss@bank.example' });
    const bossSession = await signIn(t.app, 'branch.boss');
    const refused = [
      await call('PATCH', `${users}/${boss.uuid}`, { email: 'teller@evil.example' }, token),
      await call('PATCH', `${users}/${boss.uuid}`, { active: false }, token),
      await call('POST', `${users}/${boss.uuid}/reset-password`, undefined, token),
      await call('POST', `${users}/${boss.uuid}/reset-pin`, undefined, token),
      await call('POST', `${users}/${boss.uuid}/unlock`, undefined, token),
      await call('DELETE', `${users}/${boss.uuid}/sessions`, undefined, token),
      await call('DELETE', `${users}/${boss.uuid}`, undefined, token),
    ];
    for (const r of refused) expect(expectError(r, 403, 'ACCOUNT_MORE_PRIVILEGED').details).toMatchObject({ permissions: expect.arrayContaining(['audit.read', 'roles.manage']) });
    const after = await view(await call('GET', `${users}/${boss.uuid}`));
    expect(after).toMatchObject({ email: 'boss@bank.example', status: 'active' });
    expect((await call('POST', '/api/v1/auth/validate', undefined, bossSession.access_token)).statusCode).toBe(200);
    await signIn(t.app, 'branch.boss'); // the password is unchanged
    // An account within what the teller holds is theirs to manage.
    const customer = await seedUser(t.s, 'teller.customer', { roles: ['customer'] });
    expect((await call('PATCH', `${users}/${customer.uuid}`, { full_name: 'Kofi Mensah' }, token)).statusCode).toBe(200);
  });
});

describe('the last administrator', () => {
  let a: TestApp;
  beforeAll(async () => {
    a = await createTestApp();
  });
  afterAll(async () => a.close());

  it('threat: a parallel burst of two administrators disabling each other leaves exactly one active administrator', async () => {
    const one = await seedUser(a.s, 'admin.one', { roles: ['admin'] });
    const two = await seedUser(a.s, 'admin.two', { roles: ['admin'] });
    const t1 = (await signIn(a.app, 'admin.one')).access_token;
    const t2 = (await signIn(a.app, 'admin.two')).access_token;
    const patch = (token: string, uuid: string) => a.app.inject({ method: 'PATCH', url: `${users}/${uuid}`, headers: bearer(token), payload: { active: false } });
    const results = await Promise.all([patch(t1, two.uuid), patch(t2, one.uuid)]);
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    const refused = results.find((r) => r.statusCode !== 200)!;
    // Refused by the rule (409 LAST_ADMIN), or earlier, when the winner's change ended the
    // loser's session before its request was checked (401 SESSION_INVALID): either way one stands.
    const code = (refused.json() as { error_code: string }).error_code;
    if (code === 'LAST_ADMIN') expectError(refused, 409, 'LAST_ADMIN');
    else expectError(refused, 401, 'SESSION_INVALID');
    const active = await a.s.database.db.selectFrom('users').select('username').where('is_active', '=', true).where('username', 'in', ['admin.one', 'admin.two']).execute();
    expect(active).toHaveLength(1);
    expect(await auditTotal(a.s, two.uuid, 'USER_DISABLED') + await auditTotal(a.s, one.uuid, 'USER_DISABLED')).toBe(1);
  });

  it('threat: the same burst past the sessions (two administrators\' changes already authorised): the last-admin rule alone leaves one, the other 409 LAST_ADMIN', async () => {
    await a.s.database.db.updateTable('users').set({ is_active: false }).where('username', 'in', ['admin.one', 'admin.two']).execute();
    const three = await seedUser(a.s, 'admin.three', { roles: ['admin'] });
    const four = await seedUser(a.s, 'admin.four', { roles: ['admin'] });
    const as = (u: { uuid: string }, name: string) => ({ actor: { uuid: u.uuid, username: name }, context: {} });
    const results = await Promise.allSettled([
      a.s.userLifecycle.update(four.uuid, { active: false }, as(three, 'admin.three')),
      a.s.userLifecycle.update(three.uuid, { active: false }, as(four, 'admin.four')),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect(rejected.reason).toMatchObject({ code: 'LAST_ADMIN', statusCode: 409 });
    const active = await a.s.database.db.selectFrom('users').select('username').where('is_active', '=', true).where('username', 'in', ['admin.three', 'admin.four']).execute();
    expect(active).toHaveLength(1);
    expect(await auditTotal(a.s, three.uuid, 'USER_DISABLED') + await auditTotal(a.s, four.uuid, 'USER_DISABLED')).toBe(1);
  });

  it('refuses to demote, disable or delete the only active administrator (409 LAST_ADMIN)', async () => {
    const survivor = await seedUser(a.s, 'solo.admin', { roles: ['admin'] });
    const token = (await signIn(a.app, 'solo.admin')).access_token;
    // The only active administrator: every other account is disabled.
    await a.s.database.db.updateTable('users').set({ is_active: false }).where('id', '!=', survivor.id).execute();
    const body = expectError(await a.app.inject({ method: 'PATCH', url: `${users}/${survivor.uuid}`, headers: bearer(token), payload: { roles: ['staff'] } }), 409, 'LAST_ADMIN');
    expect(body.details).toMatchObject({ role: 'admin' });
    // With another active administrator, the same change goes through.
    await seedUser(a.s, 'helper.admin', { roles: ['admin'] });
    const res = await a.app.inject({ method: 'PATCH', url: `${users}/${survivor.uuid}`, headers: bearer(token), payload: { roles: ['staff'] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user: { roles: ['staff'] } });
    expect((res.json() as { sessions_ended: number }).sessions_ended).toBe(1); // its one sign-in
  });
});
