/**
 * Roles and their permissions (issue 25, section 1): the catalogue, role administration, the
 * built-in roles' protection, what a change does to the holders' tokens, and the permission each
 * route needs (roles.read, roles.manage).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/service.js';
import { createTestApp, dbKind, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

let t: TestApp;
let rootToken: string;
let staffToken: string;

beforeAll(async () => {
  t = await createTestApp();
  await seedUser(t.s, 'root.admin', { roles: ['admin'] });
  await seedUser(t.s, 'sam.staff', { roles: ['staff'] });
  rootToken = (await signIn(t.app, 'root.admin')).access_token;
  staffToken = (await signIn(t.app, 'sam.staff')).access_token;
});
afterAll(async () => t.close());

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
interface Role { name: string; description: string; built_in: boolean; permissions: string[]; holders: number }

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, token = rootToken): Promise<Res> =>
  t.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
const createRole = (payload: Record<string, unknown>, token = rootToken): Promise<Res> => call('POST', '/api/v1/admin/roles', payload, token);
const roleNamed = async (name: string): Promise<Role> => (await call('GET', `/api/v1/admin/roles/${name}`)).json() as Role;

async function auditOf(eventType: string, role: string): Promise<AuditEntry[]> {
  const page = (await call('GET', `/api/v1/admin/audit?event_type=${eventType}&page_size=200`)).json() as { entries: AuditEntry[] };
  return page.entries.filter((e) => e.details.role === role);
}

describe('GET /api/v1/admin/roles and /permissions', () => {
  it('lists every role with its description, built-in marker, permissions and holder count', async () => {
    const res = await call('GET', '/api/v1/admin/roles');
    expect(res.statusCode, res.body).toBe(200);
    const { roles } = res.json() as { roles: Role[] };
    expect(roles.map((r) => r.name)).toEqual(expect.arrayContaining(['admin', 'agent', 'customer', 'operator', 'staff']));
    const admin = roles.find((r) => r.name === 'admin')!;
    expect(admin).toMatchObject({ built_in: true, description: expect.stringContaining('Administrator') });
    expect(admin.permissions).toEqual(expect.arrayContaining(['roles.manage', 'roles.read', 'users.create', 'audit.read']));
    expect(admin.permissions).toEqual([...admin.permissions].sort());
    expect(admin.holders).toBe(1);
    expect(roles.find((r) => r.name === 'staff')).toMatchObject({ built_in: true, holders: 1 });
  });

  it('lists every permission with what it allows and the roles that grant it', async () => {
    const res = await call('GET', '/api/v1/admin/permissions');
    expect(res.statusCode, res.body).toBe(200);
    const { permissions } = res.json() as { permissions: Array<{ name: string; description: string; roles: string[] }> };
    const stored = await t.s.database.db.selectFrom('permissions').select('name').execute();
    expect(permissions.map((p) => p.name)).toEqual(stored.map((p) => p.name).sort());
    for (const p of permissions) {
      expect(p.description.length, p.name).toBeGreaterThan(0);
      expect(p.roles, p.name).toContain('admin'); // the admin role holds every permission
    }
    expect(permissions.find((p) => p.name === 'access_ai_chat')!.roles).toEqual(['admin', 'agent', 'customer', 'staff']);
  });

  it('reads one role by name; an unknown name is 404 ROLE_NOT_FOUND', async () => {
    expect(await roleNamed('customer')).toMatchObject({ name: 'customer', built_in: true });
    expectError(await call('GET', '/api/v1/admin/roles/no.such.role'), 404, 'ROLE_NOT_FOUND');
  });

  it('threat: a user without roles.read cannot read the roles (403 PERMISSION_DENIED)', async () => {
    for (const url of ['/api/v1/admin/roles', '/api/v1/admin/roles/admin', '/api/v1/admin/permissions']) {
      const body = expectError(await call('GET', url, undefined, staffToken), 403, 'PERMISSION_DENIED');
      expect(body.details).toMatchObject({ required_permission: 'roles.read' });
    }
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/roles' }), 401, 'TOKEN_MISSING');
  });
});

describe('role administration', () => {
  it('creates a role from permissions (201), changes it, deletes it; each change audited', async () => {
    const created = await createRole({ name: 'teller.supervisor', description: 'Teller supervisor', permissions: ['users.update', 'users.read'] });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toEqual({ name: 'teller.supervisor', description: 'Teller supervisor', built_in: false, permissions: ['users.read', 'users.update'], holders: 0 });

    const changed = await call('PATCH', '/api/v1/admin/roles/teller.supervisor', { description: 'Branch teller supervisor', permissions: ['users.read', 'audit.read'] });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toEqual({ role: { name: 'teller.supervisor', description: 'Branch teller supervisor', built_in: false, permissions: ['audit.read', 'users.read'], holders: 0 }, users_signed_out: 0 });

    const deleted = await call('DELETE', '/api/v1/admin/roles/teller.supervisor');
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toMatchObject({ status: 'deleted', role: { name: 'teller.supervisor', permissions: ['audit.read', 'users.read'] } });
    expectError(await call('GET', '/api/v1/admin/roles/teller.supervisor'), 404, 'ROLE_NOT_FOUND');

    const [c] = await auditOf('ROLE_CREATED', 'teller.supervisor');
    expect(c).toMatchObject({ status: 'SUCCESS', username: 'root.admin', details: { permissions: ['users.read', 'users.update'] } });
    const [u] = await auditOf('ROLE_UPDATED', 'teller.supervisor');
    expect(u).toMatchObject({ status: 'SUCCESS', details: { added: ['audit.read'], removed: ['users.update'], previous_description: 'Teller supervisor', users_signed_out: 0 } });
    expect(await auditOf('ROLE_DELETED', 'teller.supervisor')).toHaveLength(1);
  });

  it('a taken name is 409 ROLE_EXISTS; a malformed name or an empty change is 422 VALIDATION_ERROR', async () => {
    expect((await createRole({ name: 'auditor', description: 'Reads the audit trail', permissions: ['audit.read'] })).statusCode).toBe(201);
    expect(expectError(await createRole({ name: 'auditor', description: 'Again', permissions: [] }), 409, 'ROLE_EXISTS').details).toMatchObject({ role: 'auditor' });
    expectError(await createRole({ name: 'staff', description: 'Again', permissions: [] }), 409, 'ROLE_EXISTS');
    for (const name of ['Auditor', 'a', '9lives', 'has space', 'x'.repeat(65)]) {
      expectError(await createRole({ name, description: 'Bad name', permissions: [] }), 422, 'VALIDATION_ERROR');
    }
    expectError(await call('PATCH', '/api/v1/admin/roles/auditor', {}), 422, 'VALIDATION_ERROR');
    expectError(await call('PATCH', '/api/v1/admin/roles/no.such.role', { description: 'x' }), 404, 'ROLE_NOT_FOUND');
  });

  it('an unknown permission is 422 UNKNOWN_PERMISSION naming it, and nothing is created', async () => {
    const body = expectError(await createRole({ name: 'wishful', description: 'x', permissions: ['users.read', 'money.print'] }), 422, 'UNKNOWN_PERMISSION');
    expect(body.details).toMatchObject({ unknown_permissions: ['money.print'], known_permissions: expect.arrayContaining(['users.read']) });
    expectError(await call('GET', '/api/v1/admin/roles/wishful'), 404, 'ROLE_NOT_FOUND');
    expect(expectError(await call('PATCH', '/api/v1/admin/roles/auditor', { permissions: ['money.print'] }), 422, 'UNKNOWN_PERMISSION').details).toMatchObject({ unknown_permissions: ['money.print'] });
  });

  it('threat: a built-in role cannot be deleted or have its permissions changed (409 ROLE_BUILT_IN); its description can change', async () => {
    const before = await roleNamed('customer');
    expect(expectError(await call('DELETE', '/api/v1/admin/roles/admin'), 409, 'ROLE_BUILT_IN').details).toMatchObject({ role: 'admin', refused: 'delete' });
    expect(expectError(await call('PATCH', '/api/v1/admin/roles/customer', { permissions: ['users.read', ...before.permissions] }), 409, 'ROLE_BUILT_IN').details).toMatchObject({ refused: 'permissions' });
    expectError(await call('PATCH', '/api/v1/admin/roles/admin', { permissions: [] }), 409, 'ROLE_BUILT_IN');
    expect((await roleNamed('customer')).permissions).toEqual(before.permissions);
    expect((await roleNamed('admin')).permissions).toContain('roles.manage');

    const res = await call('PATCH', '/api/v1/admin/roles/customer', { description: 'Retail bank customer' });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { role: Role }).role).toMatchObject({ description: 'Retail bank customer', built_in: true, permissions: before.permissions });
  });

  it('a role is not deleted while users hold it or a setting names it (409 ROLE_IN_USE)', async () => {
    expect((await createRole({ name: 'held.role', description: 'Held', permissions: [] })).statusCode).toBe(201);
    await seedUser(t.s, 'holder.one', { roles: ['held.role'] });
    const holder = await seedUser(t.s, 'holder.two', { roles: ['held.role'] });
    expect(expectError(await call('DELETE', '/api/v1/admin/roles/held.role'), 409, 'ROLE_IN_USE').details).toMatchObject({ holders: 2, references: [] });
    // A deleted account keeps its roles but can no longer change: it does not hold the role up.
    await t.s.users.markDeleted(t.s.database.db, holder.id, null, new Date(t.clock.now()));
    expect((await roleNamed('held.role')).holders).toBe(1);
    expect(expectError(await call('DELETE', '/api/v1/admin/roles/held.role'), 409, 'ROLE_IN_USE').details).toMatchObject({ holders: 1 });

    expect((await createRole({ name: 'named.role', description: 'Named by a channel rule', permissions: [] })).statusCode).toBe(201);
    await sql`INSERT INTO channel_access (channel, allowed_roles, updated_at) VALUES ('agent', '["agent", "named.role"]'::jsonb, now())`.execute(t.s.database.db);
    const body = expectError(await call('DELETE', '/api/v1/admin/roles/named.role'), 409, 'ROLE_IN_USE');
    expect(body.details).toMatchObject({ holders: 0, references: [{ setting: 'channel_access', name: 'agent' }] });
    await sql`DELETE FROM channel_access WHERE channel = 'agent'`.execute(t.s.database.db);

    // An LDAP group mapping (written as the LDAP settings write it) and an access policy.
    const db = t.s.database.db;
    await t.s.ldapSettings.save(db, {
      uri: 'ldaps://ldap.bank.example', bindDn: 'cn=svc,dc=bank,dc=example', bindPassword: 'bind-secret', baseDn: 'dc=bank,dc=example', userFilter: '(uid={username})',
      attrMail: 'mail', attrName: 'cn', groupMemberAttr: 'memberOf', startTls: false, caCert: undefined,
      groupRoles: { 'cn=tellers,ou=groups,dc=bank,dc=example': ['staff', 'named.role'] }, groupsBaseDn: undefined,
    } as Parameters<typeof t.s.ldapSettings.save>[1], null);
    await sql`INSERT INTO access_policies (name, channel, role, rules, created_at, updated_at) VALUES ('named hours', 'web', 'named.role', '{}'::jsonb, now(), now())`.execute(db);
    expect(expectError(await call('DELETE', '/api/v1/admin/roles/named.role'), 409, 'ROLE_IN_USE').details).toMatchObject({
      references: [{ setting: 'access_policy', name: 'named hours' }, { setting: 'ldap_group_roles', name: 'cn=tellers,ou=groups,dc=bank,dc=example' }],
    });
    await sql`DELETE FROM access_policies WHERE name = 'named hours'`.execute(db);
    await sql`DELETE FROM ldap_config`.execute(db);
    expect((await call('DELETE', '/api/v1/admin/roles/named.role')).statusCode).toBe(200);
  });

  it('threat: a user without roles.manage cannot create, change or delete roles (403 PERMISSION_DENIED)', async () => {
    const denied = [
      await createRole({ name: 'staff.escalated', description: 'x', permissions: ['users.create'] }, staffToken),
      await call('PATCH', '/api/v1/admin/roles/auditor', { permissions: ['users.create'] }, staffToken),
      await call('DELETE', '/api/v1/admin/roles/auditor', undefined, staffToken),
    ];
    for (const res of denied) expect(expectError(res, 403, 'PERMISSION_DENIED').details).toMatchObject({ required_permission: 'roles.manage' });
    expectError(await call('GET', '/api/v1/admin/roles/staff.escalated'), 404, 'ROLE_NOT_FOUND');
  });

  it('threat: privilege escalation through role administration: a role manager cannot grant a permission they do not hold (403 PERMISSION_NOT_HELD)', async () => {
    expect((await createRole({ name: 'role.manager', description: 'Manages roles only', permissions: ['roles.manage', 'roles.read'] })).statusCode).toBe(201);
    await seedUser(t.s, 'rita.roles', { roles: ['role.manager'] });
    const rita = (await signIn(t.app, 'rita.roles')).access_token;

    const created = expectError(await createRole({ name: 'rita.power', description: 'x', permissions: ['users.update'] }, rita), 403, 'PERMISSION_NOT_HELD');
    expect(created.details).toMatchObject({ permissions: ['users.update'] });
    expectError(await call('PATCH', '/api/v1/admin/roles/role.manager', { permissions: ['roles.manage', 'roles.read', 'users.create'] }, rita), 403, 'PERMISSION_NOT_HELD');
    expect((await roleNamed('role.manager')).permissions).toEqual(['roles.manage', 'roles.read']);
    expect((await auditOf('ROLE_UPDATED', 'role.manager')).filter((e) => e.status === 'FAILURE')).toHaveLength(1);
    // What they hold they may grant.
    expect((await createRole({ name: 'rita.readers', description: 'Read roles', permissions: ['roles.read'] }, rita)).statusCode).toBe(201);
  });

  it('two creates of one name in a parallel burst: one 201, one 409 ROLE_EXISTS, exactly one role', async () => {
    const burst = await Promise.all([0, 1, 2, 3].map((i) => createRole({ name: 'burst.role', description: `Burst ${i}`, permissions: ['users.read'] })));
    expect(burst.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
    for (const r of burst.filter((x) => x.statusCode === 409)) expectError(r, 409, 'ROLE_EXISTS');
    const rows = await t.s.database.db.selectFrom('roles').select('name').where('name', '=', 'burst.role').execute();
    expect(rows).toHaveLength(1);
    expect(await auditOf('ROLE_CREATED', 'burst.role')).toHaveLength(1);
  });

  it('threat: a role deleted between a change\'s check and its write (the delete holding the role\'s row): the change is 422 UNKNOWN_ROLE, never a 500 from a foreign key, and links nothing', async () => {
    expect((await createRole({ name: 'vanishing.role', description: 'Deleted mid-change', permissions: ['users.read'] })).statusCode).toBe(201);
    const target = await seedUser(t.s, 'vanishing.target', { roles: ['staff'] });
    const db = t.s.database.db;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    // A delete in progress: the role's row locked, the row gone when it commits.
    const deleter = db.transaction().execute(async (trx) => {
      await sql`SELECT id FROM roles WHERE name = 'vanishing.role' FOR UPDATE`.execute(trx);
      holding();
      await released;
      await sql`DELETE FROM roles WHERE name = 'vanishing.role'`.execute(trx);
    });
    await held;
    const change = call('PATCH', `/api/v1/admin/users/${target.uuid}`, { roles: ['staff', 'vanishing.role'] });
    // On PostgreSQL the change gets past its existence check and waits for the role's row; PGlite runs one transaction at a time.
    if (dbKind() === 'postgres') {
      while (Number((await sql<{ n: string }>`SELECT count(*) AS n FROM pg_locks WHERE NOT granted`.execute(db)).rows[0]!.n) === 0) await new Promise((r) => setImmediate(r));
    }
    release();
    await deleter;
    expectError(await change, 422, 'UNKNOWN_ROLE');
    const roles = await db.selectFrom('user_roles').innerJoin('roles', 'roles.id', 'user_roles.role_id').select('roles.name').where('user_roles.user_id', '=', target.id).execute();
    expect(roles.map((r) => r.name)).toEqual(['staff']);
  });
});

describe('what a role change does to its holders\' tokens', () => {
  it('a permission the role gains reaches its holders at their next refresh (refresh re-reads the grants)', async () => {
    expect((await createRole({ name: 'growing.role', description: 'Gains a permission', permissions: [] })).statusCode).toBe(201);
    await seedUser(t.s, 'gina.grows', { roles: ['growing.role'] });
    const session = await signIn(t.app, 'gina.grows');
    expectError(await call('GET', '/api/v1/admin/roles', undefined, session.access_token), 403, 'PERMISSION_DENIED');

    expect((await call('PATCH', '/api/v1/admin/roles/growing.role', { permissions: ['roles.read'] })).json()).toMatchObject({ users_signed_out: 0 });
    // The token already issued carries the old claims ...
    expectError(await call('GET', '/api/v1/admin/roles', undefined, session.access_token), 403, 'PERMISSION_DENIED');
    // ... the next one carries the new.
    const refreshed = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: session.refresh_token } });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const next = refreshed.json() as { access_token: string; permissions: string[] };
    expect(next.permissions).toContain('roles.read');
    expect((await call('GET', '/api/v1/admin/roles', undefined, next.access_token)).statusCode).toBe(200);
  });

  it('threat: a removed permission outliving its removal in issued tokens: holders who lost it are signed out at once (401 SESSION_INVALID)', async () => {
    expect((await createRole({ name: 'shrinking.role', description: 'Loses a permission', permissions: ['roles.read', 'audit.read'] })).statusCode).toBe(201);
    await seedUser(t.s, 'lara.loses', { roles: ['shrinking.role'] });
    await seedUser(t.s, 'kofi.keeps', { roles: ['shrinking.role', 'admin'] }); // holds roles.read through admin too
    const lara = await signIn(t.app, 'lara.loses');
    const kofi = await signIn(t.app, 'kofi.keeps');
    expect((await call('GET', '/api/v1/admin/roles', undefined, lara.access_token)).statusCode).toBe(200);

    const res = await call('PATCH', '/api/v1/admin/roles/shrinking.role', { permissions: ['audit.read'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ users_signed_out: 1 });

    expectError(await call('GET', '/api/v1/admin/roles', undefined, lara.access_token), 401, 'SESSION_INVALID');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: lara.refresh_token } }), 401, 'TOKEN_REVOKED');
    expect((await call('GET', '/api/v1/admin/roles', undefined, kofi.access_token)).statusCode).toBe(200); // lost nothing: still signed in
    const [u] = await auditOf('ROLE_UPDATED', 'shrinking.role');
    expect(u!.details).toMatchObject({ removed: ['roles.read'], users_signed_out: 1, sessions_ended: 1 });

    const again = await signIn(t.app, 'lara.loses');
    expect(again.permissions).toEqual(['audit.read']);
  });
});
