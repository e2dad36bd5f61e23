/**
 * Bank branches ("entities", issue 12 section 4) under /api/v1/admin/entities: permission
 * entities.manage; codes unique without regard to case, also under a parallel burst; the code
 * never changes; deactivation; every change audited; hostile input refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

let t: TestApp;
let token: string;
let adminUuid: string;

beforeAll(async () => {
  t = await createTestApp();
  adminUuid = (await seedUser(t.s, 'branch.admin', { roles: ['admin'] })).uuid;
  await seedUser(t.s, 'branch.teller', { roles: ['staff'] });
  token = (await signIn(t.app, 'branch.admin')).access_token;
});
afterAll(async () => t?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const create = (body: Record<string, unknown>, as = token) => t.app.inject({ method: 'POST', url: '/api/v1/admin/entities', headers: bearer(as), payload: body });
const patch = (id: string | number, body: Record<string, unknown>) => t.app.inject({ method: 'PATCH', url: `/api/v1/admin/entities/${id}`, headers: bearer(token), payload: body });

describe('/api/v1/admin/entities', () => {
  it('needs entities.manage: no token 401, a teller 403 PERMISSION_DENIED, on every route', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/entities' }), 401, 'TOKEN_MISSING');
    const teller = (await signIn(t.app, 'branch.teller')).access_token;
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/entities', headers: bearer(teller) }), 403, 'PERMISSION_DENIED');
    expectError(await create({ code: 'X-1', name: 'X' }, teller), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'PATCH', url: '/api/v1/admin/entities/00000000-0000-4000-8000-000000000001', headers: bearer(teller), payload: { is_active: false } }), 403, 'PERMISSION_DENIED');
  });

  it('creates a branch (201, audited), reads and lists it; another in any case of the same code is 409 ENTITY_EXISTS', async () => {
    const res = await create({ code: 'NBO-001', name: ' Nairobi, Kenyatta Avenue ' });
    expect(res.statusCode, res.body).toBe(201);
    const branch = res.json();
    expect(branch).toMatchObject({ id: expect.stringMatching(UUID), code: 'NBO-001', name: 'Nairobi, Kenyatta Avenue', is_active: true });
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/admin/entities/${branch.id}`, headers: bearer(token) })).json()).toEqual(branch);
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/admin/entities', headers: bearer(token) })).json();
    expect(listed.entities).toContainEqual(branch);
    expect(withoutRequestId(expectError(await create({ code: 'nbo-001', name: 'Copy' }), 409, 'ENTITY_EXISTS').details)).toEqual({ code: 'nbo-001' });
    expect(await auditTotal(t.s, adminUuid, 'ENTITY_CREATED')).toBe(1);
    const audit = await t.s.database.db.selectFrom('audit_log').select('details').where('event_type', '=', 'ENTITY_CREATED').executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ entity_id: branch.id, code: 'NBO-001' });
  });

  it('a parallel burst of ten creations of one code in several cases makes one branch and one audit row', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create({ code: i % 2 ? 'mba-002' : 'MBA-002', name: `Mombasa ${i}` })));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 201)) expectError(r, 409, 'ENTITY_EXISTS');
    const rows = await t.s.database.db.selectFrom('entities').select('id').where((eb) => eb(eb.fn('lower', ['code']), '=', 'mba-002')).execute();
    expect(rows).toHaveLength(1);
    const audits = await t.s.database.db.selectFrom('audit_log').select('details').where('event_type', '=', 'ENTITY_CREATED').execute();
    expect(audits.filter((a) => JSON.stringify(a.details).toLowerCase().includes('mba-002'))).toHaveLength(1);
  });

  it('renames and deactivates (audited); the code cannot be changed; an unknown id is 404 ENTITY_NOT_FOUND; the active filter lists what it says', async () => {
    const branch = (await create({ code: 'KSM-003', name: 'Kisumu' })).json();
    const renamed = await patch(branch.id, { name: 'Kisumu, Oginga Odinga Street' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ code: 'KSM-003', name: 'Kisumu, Oginga Odinga Street', is_active: true });
    expect((await patch(branch.id, { is_active: false })).json()).toMatchObject({ is_active: false });
    expectError(await patch(branch.id, { code: 'KSM-999' }), 422, 'VALIDATION_ERROR');
    expectError(await patch(branch.id, {}), 422, 'VALIDATION_ERROR');
    expectError(await patch('00000000-0000-4000-8000-000000000000', { is_active: true }), 404, 'ENTITY_NOT_FOUND');
    expect(await auditTotal(t.s, adminUuid, 'ENTITY_UPDATED')).toBe(2);
    const list = async (q: string) => ((await t.app.inject({ method: 'GET', url: `/api/v1/admin/entities${q}`, headers: bearer(token) })).json().entities as Array<{ code: string }>).map((e) => e.code);
    expect(await list('?active=false')).toEqual(['KSM-003']);
    expect(await list('?active=true')).not.toContain('KSM-003');
    expect(await list('?page=1&page_size=1')).toHaveLength(1);
  });

  it('hostile codes and names are 422 VALIDATION_ERROR, never 500, and create nothing', async () => {
    const before = await t.s.database.db.selectFrom('entities').select('id').execute();
    for (const body of [
      { code: "X'; DROP TABLE entities; --", name: 'x' }, { code: '', name: 'x' }, { code: 'A'.repeat(33), name: 'x' }, { code: '-lead', name: 'x' },
      { code: 'OK-1', name: 'nul\u0000name' }, { code: 'OK-1', name: '' }, { code: 'OK-1', name: 'x'.repeat(201) }, { code: 7, name: 'x' }, { code: 'OK-1' },
    ]) {
      expectError(await create(body), 422, 'VALIDATION_ERROR');
    }
    expect(await t.s.database.db.selectFrom('entities').select('id').execute()).toHaveLength(before.length);
  });

  it('threat: an integer branch id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming the field, and changes nothing', async () => {
    const branch = (await create({ code: 'ELD-004', name: 'Eldoret' })).json();
    const row = await t.s.database.db.selectFrom('entities').selectAll().where('uuid', '=', branch.id).executeTakeFirstOrThrow();
    for (const [method, payload] of [['GET', undefined], ['PATCH', { is_active: false }]] as const) {
      const body = expectError(await t.app.inject({ method, url: `/api/v1/admin/entities/${row.id}`, headers: bearer(token), payload }), 422, 'VALIDATION_ERROR');
      expect(body.details, method).toMatchObject({ expected: 'uuid', fields: [{ location: 'params', field: 'id' }] });
      expect(body.message).toContain('GET /api/v1/admin/entities');
    }
    expect(await t.s.database.db.selectFrom('entities').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()).toEqual(row);
  });
});
