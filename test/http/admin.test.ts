/**
 * Administration (issue 2, section 3): creating and listing users, the audit trail, and the
 * permission each route needs (users.create, users.read, users.update, audit.read).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/service.js';
import type { UserRow } from '../../src/users/store.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

const MINUTE = 60_000;

let t: TestApp;
let rootToken: string;
let rootUser: UserRow;
let staffToken: string;
let customerToken: string;
let customer: UserRow;

beforeAll(async () => {
  t = await createTestApp();
  rootUser = await seedUser(t.s, 'root.admin', { roles: ['admin'], email: 'root@bank.example' });
  await seedUser(t.s, 'sam.staff', { roles: ['staff'] });
  customer = await seedUser(t.s, 'cathy.customer', { roles: ['customer'], email: 'cathy@bank.example' });
  rootToken = (await signIn(t.app, 'root.admin')).access_token;
  staffToken = (await signIn(t.app, 'sam.staff')).access_token;
  customerToken = (await signIn(t.app, 'cathy.customer')).access_token;
});
afterAll(async () => t.close());

type Res = Awaited<ReturnType<typeof login>>;

function createUser(payload: Record<string, unknown>, token = rootToken): Promise<Res> {
  return t.app.inject({ method: 'POST', url: '/api/v1/admin/users', headers: bearer(token), payload });
}

function get(url: string, token = rootToken): Promise<Res> {
  return t.app.inject({ method: 'GET', url, headers: bearer(token) });
}

interface UserList { users: Array<{ id: string; username: string; roles: string[] }>; next_cursor: string | null; limit: number }
interface AuditPage { entries: AuditEntry[]; page: number; page_size: number; total: number }

function invalidFields(res: Res): string[] {
  const body = expectError(res, 422, 'VALIDATION_ERROR');
  return (body.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
}

describe('POST /api/v1/admin/users', () => {
  it('creates a user (201) and returns the temporary password once', async () => {
    const res = await createUser({ username: 'amina.otieno', email: 'Amina@Bank.example', phone: '+254700000012', full_name: 'Amina Otieno', roles: ['staff', 'customer'] });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as { user: Record<string, unknown>; temporary_password: string };
    expect(body.user).toMatchObject({
      username: 'amina.otieno', email: 'Amina@Bank.example', phone: '+254700000012', full_name: 'Amina Otieno',
      roles: ['customer', 'staff'], is_active: true, must_change_password: true, last_login_at: null,
    });
    expect(body.user.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.temporary_password.length).toBeGreaterThanOrEqual(12);

    // Never shown again: not in the listing, and stored only as a hash (plus the encrypted copy).
    const list = await get('/api/v1/admin/users?search=amina.otieno');
    expect(list.body).not.toContain(body.temporary_password);
    expect(body.user.id).toBe(body.user.uuid); // the one public id
    const internal = (await t.s.users.findByUuid(body.user.id as string))!.id;
    const cred = await t.s.database.db.selectFrom('credentials').selectAll().where('user_id', '=', internal).executeTakeFirstOrThrow();
    expect(cred.is_temporary).toBe(true);
    expect(JSON.stringify(cred)).not.toContain(body.temporary_password);

    expectError(await login(t.app, 'amina.otieno', body.temporary_password), 403, 'PASSWORD_CHANGE_REQUIRED');
  });

  it('audits USER_CREATED with the new user and the administrator who created it', async () => {
    const res = await createUser({ username: 'audited.user', roles: ['customer'] });
    expect(res.statusCode).toBe(201);
    const uuid = (res.json() as { user: { uuid: string } }).user.uuid;
    const page = (await get(`/api/v1/admin/audit?event_type=USER_CREATED&user_id=${uuid}`)).json() as AuditPage;
    expect(page.total).toBe(1);
    expect(page.entries[0]).toMatchObject({
      event_type: 'USER_CREATED', status: 'SUCCESS', user_id: uuid, username: 'audited.user', ip_address: '127.0.0.1',
      timestamp: new Date(t.clock.now()).toISOString(), location: { internal: true }, risk_score: null, security_events: [], suspicious_indicators: [],
      details: { roles: ['customer'], created_by_id: rootUser.uuid },
    });
  });

  it('refuses a duplicate username or email, case-insensitively, with 409 USER_EXISTS', async () => {
    await createUser({ username: 'dup.user', email: 'dup@bank.example', roles: ['customer'] });
    const byName = expectError(await createUser({ username: 'DUP.User', roles: ['customer'] }), 409, 'USER_EXISTS');
    expect(byName.details).toMatchObject({ fields: ['username'] });
    const byEmail = expectError(await createUser({ username: 'other.dup', email: 'DUP@BANK.example', roles: ['customer'] }), 409, 'USER_EXISTS');
    expect(byEmail.details).toMatchObject({ fields: ['email'] });
    const list = (await get('/api/v1/admin/users?search=dup')).json() as UserList;
    expect(list.users.map((u) => u.username)).toEqual(['dup.user']);
  });

  it('threat: a username that shadows another account\'s email is refused with 409 IDENTIFIER_CONFLICT, and sign-in by that email still reaches its owner', async () => {
    await createUser({ username: 'victim.owner', email: 'victim@bank.example', roles: ['customer'] });
    const shadow = expectError(await createUser({ username: 'Victim@Bank.example', roles: ['customer'] }), 409, 'IDENTIFIER_CONFLICT');
    expect(withoutRequestId(shadow.details)).toEqual({ fields: ['username'] });
    // The other way round: an email that is another account's username.
    await createUser({ username: 'ops@bank.example', roles: ['customer'] });
    expect(withoutRequestId(expectError(await createUser({ username: 'ops.second', email: 'OPS@bank.example', roles: ['customer'] }), 409, 'IDENTIFIER_CONFLICT').details)).toEqual({ fields: ['email'] });
    const list = (await get('/api/v1/admin/users?search=victim')).json() as UserList;
    expect(list.users.map((u) => u.username)).toEqual(['victim.owner']);
    expect((await t.s.users.findByLogin('victim@bank.example'))?.username).toBe('victim.owner');
    // An address that names no other account is still a fine username.
    expect((await createUser({ username: 'zawadi.k@bank.example', email: 'zawadi.k@bank.example', roles: ['customer'] })).statusCode).toBe(201);
  });

  it('threat: parallel creations racing to shadow one address make exactly one account, and the rest answer 409', async () => {
    // Half claim `race@bank.example` as a username, half as an email: the unique indexes alone
    // would let one of each through, and sign-in by that address would then pick one of them.
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => createUser(i % 2 === 0
      ? { username: 'Race@bank.example', roles: ['customer'] }
      : { username: `race.${i}`, email: 'race@BANK.example', roles: ['customer'] })));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 201)) {
      expect(r.statusCode, r.body).toBe(409);
      expect(['USER_EXISTS', 'IDENTIFIER_CONFLICT']).toContain((r.json() as { error_code: string }).error_code);
    }
    const holders = await t.s.database.db.selectFrom('users').select('username').where('username', 'ilike', 'race%').execute();
    expect(holders).toHaveLength(1);
    expect((await t.s.users.findByLogin('race@bank.example'))?.username).toBe(holders[0]!.username); // the email reaches the one account
  });

  it('refuses a role that does not exist with 422 UNKNOWN_ROLE', async () => {
    const body = expectError(await createUser({ username: 'role.less', roles: ['customer', 'wizard'] }), 422, 'UNKNOWN_ROLE');
    expect(body.details).toMatchObject({ unknown_roles: ['wizard'] });
    expect(await t.s.users.findByLogin('role.less')).toBeUndefined();
  });

  const bad: Array<[string, Record<string, unknown>]> = [
    ['username', { username: 'a b', roles: ['customer'] }],
    ['username', { username: 'x', roles: ['customer'] }],
    ['username', { username: '-leading.dash', roles: ['customer'] }],
    ['username', { username: 'u'.repeat(65), roles: ['customer'] }],
    ['email', { username: 'bad.email', email: 'not-an-email', roles: ['customer'] }],
    ['phone', { username: 'bad.phone', phone: '0712345678', roles: ['customer'] }],
    ['phone', { username: 'bad.phone', phone: '+254 700 000 012', roles: ['customer'] }],
    ['roles', { username: 'no.roles', roles: [] }],
    ['roles', { username: 'no.roles' }],
  ];
  it.each(bad)('answers a bad %s with 422 VALIDATION_ERROR naming it: %j', async (field, payload) => {
    expect(invalidFields(await createUser(payload))).toContain(field);
  });
});

describe('GET /api/v1/admin/users', () => {
  beforeAll(async () => {
    for (let i = 1; i <= 5; i++) await seedUser(t.s, `page.user.${i}`, { email: `pager${i}@example.org` });
  });

  it('pages with limit and next_cursor (keyset, in username order)', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (const size of [2, 2, 1]) {
      const body = (await get(`/api/v1/admin/users?search=page.user&limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json() as UserList;
      expect(body.limit).toBe(2);
      expect(body.users).toHaveLength(size);
      seen.push(...body.users.map((u) => u.username));
      cursor = body.next_cursor;
    }
    expect(cursor).toBeNull();
    expect(seen).toEqual(['page.user.1', 'page.user.2', 'page.user.3', 'page.user.4', 'page.user.5']);

    const all = (await get('/api/v1/admin/users')).json() as UserList;
    expect(all).toMatchObject({ limit: 50, next_cursor: null });
    expect(all.users).toHaveLength(await t.s.users.count());
    expect(all.users.find((u) => u.username === 'root.admin')?.roles).toEqual(['admin']);
  });

  it('searches username and full name by substring and email by whole address, case-insensitively, with no wildcards', async () => {
    const names = async (q: string): Promise<string[]> => ((await get(`/api/v1/admin/users?search=${encodeURIComponent(q)}`)).json() as UserList).users.map((u) => u.username);
    expect(await names('PAGE.USER.3')).toEqual(['page.user.3']);
    expect(await names('PAGER4@Example.org')).toEqual(['page.user.4']);
    expect(await names('PAGER4@')).toEqual([]); // emails are stored encrypted: matched by blind index, whole (docs/decisions.md)
    expect(await names('Amina Otieno')).toEqual(['amina.otieno']);
    expect(await names('%')).toEqual([]);
    expect(await names('page_user')).toEqual([]);
  });

  it('refuses out-of-range paging with 422 VALIDATION_ERROR', async () => {
    expect(invalidFields(await get('/api/v1/admin/users?limit=0'))).toContain('limit');
    expect(invalidFields(await get('/api/v1/admin/users?limit=201'))).toContain('limit');
    expect(invalidFields(await get('/api/v1/admin/users?page=2'))).toContain('page'); // keyset pages: page/page_size are gone
  });
});

describe('GET /api/v1/admin/audit', () => {
  it('filters by user_id and pages newest first', async () => {
    const path = `/api/v1/admin/audit?user_id=${customer.uuid}`;
    const all = (await get(path)).json() as AuditPage;
    expect(all.total).toBeGreaterThanOrEqual(2); // USER_CREATED and USER_LOGIN at least
    expect(all.entries.every((e) => e.user_id === customer.uuid)).toBe(true);
    expect(all.entries.map((e) => e.event_type)).toEqual(expect.arrayContaining(['USER_CREATED', 'USER_LOGIN']));

    const p1 = (await get(`${path}&page_size=1`)).json() as AuditPage;
    const p2 = (await get(`${path}&page_size=1&page=2`)).json() as AuditPage;
    expect(p1).toMatchObject({ page: 1, page_size: 1, total: all.total });
    expect(p2).toMatchObject({ page: 2, page_size: 1, total: all.total });
    expect(p1.entries[0]!.audit_id).toBe(all.entries[0]!.audit_id);
    expect(p2.entries[0]!.audit_id).toBe(all.entries[1]!.audit_id);
    const times = all.entries.map((e) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('filters by event_type and a [from, to) time range', async () => {
    t.clock.advance(MINUTE);
    const t1 = new Date(t.clock.now()).toISOString();
    expect((await createUser({ username: 'range.a', roles: ['customer'] })).statusCode).toBe(201);
    t.clock.advance(MINUTE);
    const t2 = new Date(t.clock.now()).toISOString();
    expect((await createUser({ username: 'range.b', roles: ['customer'] })).statusCode).toBe(201);
    t.clock.advance(MINUTE);

    const names = async (query: string): Promise<string[]> => ((await get(`/api/v1/admin/audit?event_type=USER_CREATED&${query}`)).json() as AuditPage).entries.map((e) => e.username!);
    expect(await names(`from=${encodeURIComponent(t1)}&to=${encodeURIComponent(t2)}`)).toEqual(['range.a']);
    expect(await names(`from=${encodeURIComponent(t2)}`)).toEqual(['range.b']);
    expect(await names(`to=${encodeURIComponent(t2)}`)).not.toContain('range.b');
    const logins = (await get('/api/v1/admin/audit?event_type=USER_LOGIN')).json() as AuditPage;
    expect(logins.total).toBeGreaterThanOrEqual(3);
    expect(logins.entries.every((e) => e.event_type === 'USER_LOGIN')).toBe(true);
  });

  it('filters by status and channel', async () => {
    const subject = randomUUID();
    await t.s.db.insertInto('audit_log').values([
      t.s.audit.row({ eventType: 'USER_LOGIN', status: 'SUCCESS', userId: subject, channel: 'web' }),
      t.s.audit.row({ eventType: 'FAILED_LOGIN_ATTEMPT', status: 'FAILURE', userId: subject, channel: 'web' }),
      t.s.audit.row({ eventType: 'FAILED_LOGIN_ATTEMPT', status: 'FAILURE', userId: subject, channel: 'mobile' }),
    ]).execute();
    const events = async (query: string): Promise<string[]> => ((await get(`/api/v1/admin/audit?user_id=${subject}&${query}`)).json() as AuditPage).entries.map((e) => `${e.event_type} ${e.channel}`).sort();
    expect(await events('status=FAILURE')).toEqual(['FAILED_LOGIN_ATTEMPT mobile', 'FAILED_LOGIN_ATTEMPT web']);
    expect(await events('channel=web')).toEqual(['FAILED_LOGIN_ATTEMPT web', 'USER_LOGIN web']);
    expect(await events('status=SUCCESS&channel=mobile')).toEqual([]);
    expect(invalidFields(await get('/api/v1/admin/audit?status=failure'))).toContain('status');
    expect(invalidFields(await get('/api/v1/admin/audit?channel=WEB%27'))).toContain('channel');
  });

  it('pages with next_cursor through entries sharing a timestamp (to the microsecond), each once and in the order page numbers give; total stops counting at 1,000', async () => {
    const subject = randomUUID();
    const at = new Date(t.clock.now() - 5 * MINUTE);
    const rows = Array.from({ length: 1005 }, (_, i) => ({ ...t.s.audit.row({ eventType: 'USER_LOGIN', status: 'SUCCESS', userId: subject }), timestamp: new Date(at.getTime() + (i % 5) * 1000) }));
    await t.s.db.insertInto('audit_log').values(rows).execute();
    // Ties, and timestamps apart by microseconds only (which a millisecond cursor would lose).
    await sql`UPDATE audit_log SET timestamp = timestamp + (ascii(substr(audit_id::text, 1, 1)) % 3) * interval '1 microsecond' WHERE user_id = ${subject}`.execute(t.s.db);
    const path = `/api/v1/admin/audit?user_id=${subject}&page_size=200`;
    const byCursor: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = (await get(cursor === null ? path : `${path}&cursor=${cursor}`)).json() as AuditPage & { total_exact: boolean; next_cursor: string | null };
      expect(page).toMatchObject({ page: 1, page_size: 200, total: 1000, total_exact: false });
      byCursor.push(...page.entries.map((e) => e.audit_id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(6);
    expect(new Set(byCursor).size).toBe(1005);
    const byNumber: string[] = [];
    for (let n = 1; n <= 6; n++) byNumber.push(...((await get(`${path}&page=${n}`)).json() as AuditPage).entries.map((e) => e.audit_id));
    expect(byCursor).toEqual(byNumber);
    const few = (await get(`/api/v1/admin/audit?user_id=${customer.uuid}`)).json() as AuditPage & { total_exact: boolean; next_cursor: string | null };
    expect(few).toMatchObject({ total_exact: true, next_cursor: null });
    expect(few.total).toBe(few.entries.length);
  });

  it('a cursor the service did not issue (malformed, injected, an impossible date) is 422 VALIDATION_ERROR naming cursor, never a 500', async () => {
    const forged = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    for (const cursor of ['not-a-cursor', forged({ v: 1, at: "2026-01-01T00:00:00.000000Z' OR 1=1 --", id: randomUUID() }), forged({ v: 1, at: '2026-01-01T00:00:00.000000Z', id: 'x' }), forged({ v: 2, at: '2026-01-01T00:00:00.000000Z', id: randomUUID() }), forged({ v: 1, after: 'alice' }),
      forged({ v: 1, at: '2026-13-45T10:00:00.000000Z', id: randomUUID() }), forged({ v: 1, at: '2026-02-30T25:61:00.000000Z', id: randomUUID() }), forged({ v: 1, at: '0000-01-01T00:00:00.000000Z', id: randomUUID() })]) {
      const res = await get(`/api/v1/admin/audit?cursor=${encodeURIComponent(cursor)}`);
      expectError(res, 422, 'VALIDATION_ERROR');
      expect(invalidFields(res), cursor).toEqual(['cursor']);
    }
  });

  it('refuses malformed filters with 422 VALIDATION_ERROR', async () => {
    expect(invalidFields(await get('/api/v1/admin/audit?user_id=not-a-uuid'))).toContain('user_id');
    expect(invalidFields(await get('/api/v1/admin/audit?event_type=user_login'))).toContain('event_type');
    expect(invalidFields(await get('/api/v1/admin/audit?from=yesterday'))).toContain('from');
  });

  it('impossible dates are 422 VALIDATION_ERROR naming the field, never a 500: leap second, February 30, offset +24:00', async () => {
    for (const [field, value] of [['from', '2021-03-04T23:59:60Z'], ['to', '2026-02-30T00:00:00Z'], ['from', '2026-04-31T10:00:00Z'], ['to', '2026-01-01T00:00:00+24:00'], ['from', '2026-01-01T24:00:00Z']] as const) {
      const res = await get(`/api/v1/admin/audit?${field}=${encodeURIComponent(value)}`);
      expectError(res, 422, 'VALIDATION_ERROR');
      expect(invalidFields(res), value).toEqual([field]);
    }
    expect((await get(`/api/v1/admin/audit?from=${encodeURIComponent('2024-02-29T23:59:59+03:00')}`)).statusCode).toBe(200);
  });
});

describe('permissions', () => {
  const routes = (): Array<{ method: 'GET' | 'POST'; url: string; payload?: Record<string, unknown>; permission: string }> => [
    { method: 'POST', url: '/api/v1/admin/users', payload: { username: 'perm.probe', roles: ['admin'] }, permission: 'users.create' },
    { method: 'GET', url: '/api/v1/admin/users', permission: 'users.read' },
    { method: 'POST', url: `/api/v1/admin/users/${customer.uuid}/reset-password`, permission: 'users.update' },
    { method: 'POST', url: `/api/v1/admin/users/${customer.uuid}/unlock`, permission: 'users.update' },
    { method: 'GET', url: '/api/v1/admin/audit', permission: 'audit.read' },
  ];

  it.each(['staff', 'customer'])('a %s user gets 403 PERMISSION_DENIED on every admin route', async (who) => {
    const token = who === 'staff' ? staffToken : customerToken;
    for (const r of routes()) {
      const res = await t.app.inject({ method: r.method, url: r.url, headers: bearer(token), ...(r.payload ? { payload: r.payload } : {}) });
      const body = expectError(res, 403, 'PERMISSION_DENIED');
      expect(body.details, r.url).toMatchObject({ required_permission: r.permission });
    }
    // Nothing happened: no user created, the customer's password and session untouched.
    expect(await t.s.users.findByLogin('perm.probe')).toBeUndefined();
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(customerToken) })).statusCode).toBe(200);
    await signIn(t.app, 'cathy.customer');
  });

  it('no token gives 401 TOKEN_MISSING on every admin route', async () => {
    for (const r of routes()) {
      const res = await t.app.inject({ method: r.method, url: r.url, ...(r.payload ? { payload: r.payload } : {}) });
      expectError(res, 401, 'TOKEN_MISSING');
    }
  });

  it('the admin role holds every one of them', async () => {
    const me = await t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(rootToken) });
    expect((me.json() as { permissions: string[] }).permissions).toEqual(expect.arrayContaining(routes().map((r) => r.permission)));
    expect((await get('/api/v1/admin/users')).statusCode).toBe(200);
    expect((await get('/api/v1/admin/audit')).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/admin/users/${customer.uuid}/unlock`, headers: bearer(rootToken) })).statusCode).toBe(200);
  });
});
