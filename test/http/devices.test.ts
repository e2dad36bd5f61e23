/**
 * The device push-token registry (issue 14 section 1; SPEC "Device tokens"): the seven routes,
 * each user's tokens their own (another's id is 404), registering again reactivates, a phone
 * that changed hands moves its token (audited), the token encrypted at rest and unique by its
 * blind index (parallel registrations make one row), and tokens go with their user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENCRYPTED_COLUMNS } from '../../src/platform/crypto/columns.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

let t: TestApp;
let amina: string;
let kofi: string;
let aminaUuid: string;
let kofiUuid: string;
const BASE = '/api/v1/notifications/devices';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Device = { id: string; push_token: string; platform: string; device_name: string | null; is_active: boolean; last_used_at: string | null; created_on: string; updated_on: string };

function token(n: number): string {
  return `fcm${n.toString().padStart(4, '0')}:APA91bH2x7k3Lq9Zr0Xc3A_${'x'.repeat(120)}-${n}`;
}

function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, who: string, payload?: Record<string, unknown>) {
  return t.app.inject({ method, url, headers: bearer(who), ...(payload === undefined ? {} : { payload }) });
}

const register = (who: string, body: Record<string, unknown>) => call('POST', `${BASE}/register`, who, body);

beforeAll(async () => {
  t = await createTestApp({ env: { DB_FIELD_ENCRYPTION: '1' } });
  aminaUuid = (await seedUser(t.s, 'device.amina')).uuid;
  kofiUuid = (await seedUser(t.s, 'device.kofi')).uuid;
  amina = (await signIn(t.app, 'device.amina')).access_token;
  kofi = (await signIn(t.app, 'device.kofi')).access_token;
});
afterAll(async () => t.close());

describe('device tokens', () => {
  it('registers a token (201) with SPEC\'s fields, the token masked in the answer and encrypted at rest', async () => {
    const res = await register(amina, { push_token: token(1), platform: 'mobile', device_name: ' Amina\'s Pixel 8 ' });
    expect(res.statusCode, res.body).toBe(201);
    const d = res.json() as Device;
    expect(d).toMatchObject({ platform: 'mobile', device_name: 'Amina\'s Pixel 8', is_active: true, last_used_at: null });
    expect(d.id).toMatch(UUID); // the public id: the uuid, never the internal integer
    expect(d.push_token).toBe(`${token(1).slice(0, 6)}…${token(1).slice(-4)}`);
    expect(res.body).not.toContain(token(1));
    const row = await t.s.db.selectFrom('device_tokens').selectAll().where('uuid', '=', d.id).executeTakeFirstOrThrow();
    expect(Object.keys(d)).not.toContain('uuid');
    expect(row.push_token).not.toContain('APA91b');
    expect(t.s.sensitive.reveal(row.push_token, ENCRYPTED_COLUMNS.devicePushToken.context)).toBe(token(1));
    expect(row.push_token_bidx).toMatch(/^[0-9a-f]{8}:[0-9a-f]{64}$/);
    expect(await auditTotal(t.s, aminaUuid, 'DEVICE_TOKEN_REGISTERED')).toBe(1);
  });

  it('registering the same token again reactivates it (200), never a second row', async () => {
    const first = (await register(amina, { push_token: token(2), platform: 'mobile' })).json() as Device;
    expect((await call('PUT', `${BASE}/${first.id}/deactivate`, amina)).json()).toMatchObject({ is_active: false });
    const again = await register(amina, { push_token: token(2), platform: 'web', device_name: 'Browser' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ id: first.id, is_active: true, platform: 'web', device_name: 'Browser' });
    expect(await t.s.db.selectFrom('device_tokens').select('id').where('user_id', '=', (await t.s.users.findByUuid(aminaUuid))!.id).execute()).toHaveLength(2);
    expect(await auditTotal(t.s, aminaUuid, 'DEVICE_TOKEN_REACTIVATED')).toBe(1);
  });

  it('a phone that changed hands: its token moves to the new owner, audited with both; the old owner no longer sees it', async () => {
    const old = (await register(amina, { push_token: token(3), platform: 'mobile', device_name: 'Old phone' })).json() as Device;
    const moved = await register(kofi, { push_token: token(3), platform: 'mobile' });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ id: old.id, device_name: null, is_active: true }); // the old owner's label does not follow
    expectError(await call('GET', `${BASE}/${old.id}`, amina), 404, 'DEVICE_TOKEN_NOT_FOUND');
    const [entry] = (await t.s.audit.query({ userId: kofiUuid, eventType: 'DEVICE_TOKEN_TRANSFERRED', limit: 1, offset: 0 })).entries;
    expect(entry!.details).toMatchObject({ device_token_id: old.id, from_user_id: aminaUuid, from_username: 'device.amina' });
    // The previous owner's history says so too (their notifications stopped going there).
    const [theirs] = (await t.s.audit.query({ userId: aminaUuid, eventType: 'DEVICE_TOKEN_TRANSFERRED', limit: 1, offset: 0 })).entries;
    expect(theirs!.details).toMatchObject({ device_token_id: old.id, to_user_id: kofiUuid, to_username: 'device.kofi' });
  });

  it('threat: a token that changes hands shows nothing of its previous owner\'s use (last_used_at cleared, created_on anew)', async () => {
    const old = (await register(amina, { push_token: token(13), platform: 'mobile' })).json() as Device;
    await t.s.db.updateTable('device_tokens').set({ last_used_at: new Date(t.clock.now() - 60_000), created_on: new Date(t.clock.now() - 86_400_000) }).where('uuid', '=', old.id).execute();
    t.clock.advance(1000);
    const moved = (await register(kofi, { push_token: token(13), platform: 'mobile' })).json() as Device;
    expect(moved.last_used_at).toBeNull();
    expect(Date.parse(moved.created_on)).toBe(t.clock.now());
  });

  it('tokens are case-sensitive: a token differing only in case is another token, never the first one\'s row', async () => {
    const lower = (await register(amina, { push_token: `abcdefghijklmnopqrstu:${'q'.repeat(40)}`, platform: 'mobile' })).json() as Device;
    const upper = await register(kofi, { push_token: `ABCDEFGHIJKLMNOPQRSTU:${'Q'.repeat(40)}`, platform: 'mobile' });
    expect(upper.statusCode).toBe(201);
    expect((upper.json() as Device).id).not.toBe(lower.id);
    expect((await call('GET', `${BASE}/${lower.id}`, amina)).statusCode).toBe(200);
  });

  it('concurrency: ten parallel registrations of one new token by two users make one row', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => register(i % 2 === 0 ? amina : kofi, { push_token: token(4), platform: 'mobile' })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const ids = new Set(results.map((r) => (r.json() as Device).id));
    expect(ids.size).toBe(1);
    const rows = await t.s.db.selectFrom('device_tokens').select('id').where('push_token_bidx', 'in', t.s.keys.blindIndex('blind-index').candidatesExact(token(4))).execute();
    expect(rows).toHaveLength(1);
  });

  it('lists only the user\'s own tokens, masked; active_only filters', async () => {
    const inactive = (await register(kofi, { push_token: token(5), platform: 'web' })).json() as Device;
    await call('PUT', `${BASE}/${inactive.id}/deactivate`, kofi);
    const all = (await call('GET', BASE, kofi)).json() as { devices: Device[]; total: number };
    expect(all.total).toBe(all.devices.length);
    expect(all.devices.map((d) => d.id)).toContain(inactive.id);
    for (const d of all.devices) expect(d.push_token).toMatch(/^.{6}….{4}$/);
    const active = (await call('GET', `${BASE}?active_only=true`, kofi)).json() as { devices: Device[] };
    expect(active.devices.every((d) => d.is_active)).toBe(true);
    expect(active.devices.map((d) => d.id)).not.toContain(inactive.id);
    const aminas = (await call('GET', BASE, amina)).json() as { devices: Device[] };
    expect(aminas.devices.map((d) => d.id)).not.toContain(inactive.id);
  });

  it('threat: another user\'s token id is 404 DEVICE_TOKEN_NOT_FOUND on every route, and nothing changes', async () => {
    const mine = (await register(kofi, { push_token: token(6), platform: 'mobile' })).json() as Device;
    for (const [method, url] of [['GET', `${BASE}/${mine.id}`], ['PUT', `${BASE}/${mine.id}/deactivate`], ['PUT', `${BASE}/${mine.id}/activate`], ['DELETE', `${BASE}/${mine.id}`]] as const) {
      expectError(await call(method, url, amina), 404, 'DEVICE_TOKEN_NOT_FOUND');
    }
    expectError(await call('GET', `${BASE}/00000000-0000-4000-8000-000000000000`, amina), 404, 'DEVICE_TOKEN_NOT_FOUND');
    expect((await call('GET', `${BASE}/${mine.id}`, kofi)).json()).toMatchObject({ id: mine.id, is_active: true });
    await call('DELETE', BASE, amina); // all of amina's: none of kofi's
    expect((await call('GET', `${BASE}/${mine.id}`, kofi)).statusCode).toBe(200);
  });

  it('threat: an integer device token id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming the field, and changes nothing', async () => {
    const mine = (await register(kofi, { push_token: token(14), platform: 'mobile' })).json() as Device;
    const row = await t.s.db.selectFrom('device_tokens').select(['id', 'is_active', 'updated_on']).where('uuid', '=', mine.id).executeTakeFirstOrThrow();
    const before = await t.s.db.selectFrom('audit_log').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    // The owner's own integer id and another user's alike: refused before any lookup.
    for (const who of [kofi, amina]) {
      for (const [method, url] of [['GET', `${BASE}/${row.id}`], ['PUT', `${BASE}/${row.id}/deactivate`], ['PUT', `${BASE}/${row.id}/activate`], ['DELETE', `${BASE}/${row.id}`], ['POST', `${BASE}/${row.id}/test`]] as const) {
        const body = expectError(await call(method, url, who), 422, 'VALIDATION_ERROR') as { message: string; details: { expected: string; fields: Array<{ location: string; field: string; message: string }> } };
        expect(body.details.expected, `${method} ${url}`).toBe('uuid');
        expect(body.details.fields[0]).toMatchObject({ location: 'params', field: 'id' });
        expect(body.message).toContain('GET /api/v1/notifications/devices');
      }
    }
    const after = await t.s.db.selectFrom('device_tokens').select(['id', 'is_active', 'updated_on']).where('uuid', '=', mine.id).executeTakeFirstOrThrow();
    expect(after).toEqual(row);
    expect(await t.s.db.selectFrom('audit_log').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).toEqual(before);
    expect((await call('GET', `${BASE}/${mine.id}`, kofi)).json()).toMatchObject({ id: mine.id, is_active: true });
  });

  it('deactivates, activates and deletes one token, each audited; DELETE / deletes all of the user\'s', async () => {
    const { uuid } = await seedUser(t.s, 'device.lindiwe');
    const who = (await signIn(t.app, 'device.lindiwe')).access_token;
    const a = (await register(who, { push_token: token(7), platform: 'mobile' })).json() as Device;
    const b = (await register(who, { push_token: token(8), platform: 'web' })).json() as Device;
    expect((await call('PUT', `${BASE}/${a.id}/deactivate`, who)).json()).toMatchObject({ is_active: false });
    expect((await call('PUT', `${BASE}/${a.id}/activate`, who)).json()).toMatchObject({ is_active: true });
    expect((await call('DELETE', `${BASE}/${a.id}`, who)).json()).toEqual({ status: 'success', deleted: 1 });
    expectError(await call('DELETE', `${BASE}/${a.id}`, who), 404, 'DEVICE_TOKEN_NOT_FOUND');
    await register(who, { push_token: token(9), platform: 'mobile' });
    expect((await call('DELETE', BASE, who)).json()).toEqual({ status: 'success', deleted: 2 });
    expect((await call('DELETE', BASE, who)).json()).toEqual({ status: 'success', deleted: 0 });
    expect(((await call('GET', BASE, who)).json() as { total: number }).total).toBe(0);
    for (const e of ['DEVICE_TOKEN_DEACTIVATED', 'DEVICE_TOKEN_ACTIVATED'] as const) expect(await auditTotal(t.s, uuid, e)).toBe(1);
    expect(await auditTotal(t.s, uuid, 'DEVICE_TOKEN_DELETED')).toBe(2);
    const deleted = await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', 'DEVICE_TOKEN_DELETED').where('username', '=', 'device.lindiwe').execute();
    expect(deleted.map((r) => r.details)).toEqual(expect.arrayContaining([{ device_token_ids: [a.id] }, { device_token_ids: expect.arrayContaining([b.id]), all: true }])); // named by uuid
  });

  it('refuses bad input with 422 naming the field: token characters and length, platform, device name; no token, 401', async () => {
    for (const [body, field] of [
      [{ push_token: 'short', platform: 'mobile' }, 'push_token'],
      [{ push_token: `${'a'.repeat(30)} ; DROP TABLE`, platform: 'mobile' }, 'push_token'],
      [{ push_token: 'a'.repeat(4097), platform: 'mobile' }, 'push_token'],
      [{ push_token: token(10), platform: 'ios' }, 'platform'],
      [{ push_token: token(10) }, 'platform'],
      [{ push_token: token(10), platform: 'mobile', device_name: 'x'.repeat(101) }, 'device_name'],
      [{ push_token: token(10), platform: 'mobile', device_name: 'bell\u0007' }, 'device_name'],
      [{ push_token: token(10), platform: 'mobile', device_name: '    ' }, 'device_name'],
      [{ push_token: token(10), platform: 'mobile', user_id: 1 }, 'user_id'],
    ] as const) {
      const { details } = expectError(await register(amina, body), 422, 'VALIDATION_ERROR') as { details: { fields: Array<{ field: string }> } };
      expect(details.fields.map((f) => f.field), JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    expectError(await t.app.inject({ method: 'GET', url: BASE }), 401, 'TOKEN_MISSING');
    expectError(await t.app.inject({ method: 'POST', url: `${BASE}/register`, payload: { push_token: token(11), platform: 'mobile' } }), 401, 'TOKEN_MISSING');
    expect(await t.s.db.selectFrom('device_tokens').select('id').where('push_token_bidx', 'in', t.s.keys.blindIndex('blind-index').candidatesExact(token(10))).execute()).toHaveLength(0);
  });

  it('tokens are deleted with their user', async () => {
    const user = await seedUser(t.s, 'device.leaver');
    const who = (await signIn(t.app, 'device.leaver')).access_token;
    await register(who, { push_token: token(12), platform: 'mobile' });
    const row = await t.s.users.findByUuid(user.uuid);
    await t.s.db.deleteFrom('sessions').where('user_id', '=', row!.id).execute();
    await t.s.db.deleteFrom('audit_log').where('user_id', '=', user.uuid).execute();
    await t.s.db.deleteFrom('users').where('id', '=', row!.id).execute();
    expect(await t.s.db.selectFrom('device_tokens').select('id').where('user_id', '=', row!.id).execute()).toHaveLength(0);
  });

  it('fan-out amplification: at most 10 active tokens and 30 in all per user, the least recently used retired first (audited), even in a parallel burst', async () => {
    await seedUser(t.s, 'device.hoarder');
    const who = (await signIn(t.app, 'device.hoarder')).access_token;
    const ids: string[] = [];
    for (let n = 100; n < 110; n++) {
      ids.push((await register(who, { push_token: token(n), platform: 'mobile' })).json().id as string);
      t.clock.advance(1000);
    }
    const eleventh = await register(who, { push_token: token(110), platform: 'mobile' });
    expect(eleventh.statusCode).toBe(201);
    const active = async () => ((await call('GET', `${BASE}?active_only=true`, who)).json() as { devices: Device[] }).devices.map((d) => d.id);
    expect(await active()).toEqual([...ids.slice(1), eleventh.json().id]); // the oldest, ids[0], turned off
    const retired = await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', 'DEVICE_TOKEN_DEACTIVATED').where('username', '=', 'device.hoarder').execute();
    expect(retired.map((r) => r.details)).toEqual([{ device_token_ids: [ids[0]], by: 'device_limit', limit: 10 }]);
    // Turning the old one back on retires the least recently used of the others instead.
    expect((await call('PUT', `${BASE}/${ids[0]}/activate`, who)).statusCode).toBe(200);
    expect((await active()).sort()).toEqual([ids[0]!, ...ids.slice(2), eleventh.json().id].sort());
    // A burst of 40 registrations at once: 10 active, 30 rows, whatever the interleaving.
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => register(who, { push_token: token(200 + i), platform: 'web' })));
    expect(burst.every((r) => r.statusCode === 201)).toBe(true);
    const uid = (await t.s.users.findByUuid((await t.s.db.selectFrom('users').select('uuid').where('username', '=', 'device.hoarder').executeTakeFirstOrThrow()).uuid))!.id;
    const rows = await t.s.db.selectFrom('device_tokens').select(['is_active']).where('user_id', '=', uid).execute();
    expect(rows).toHaveLength(30);
    expect(rows.filter((r) => r.is_active)).toHaveLength(10);
  });

  it('the cap holds when a user turns many tokens back on at once', async () => {
    const { uuid } = await seedUser(t.s, 'device.switcher');
    const who = (await signIn(t.app, 'device.switcher')).access_token;
    const ids: string[] = [];
    for (let n = 300; n < 315; n++) {
      const id = (await register(who, { push_token: token(n), platform: 'mobile' })).json().id as string;
      await call('PUT', `${BASE}/${id}/deactivate`, who);
      ids.push(id);
    }
    const results = await Promise.all(ids.map((id) => call('PUT', `${BASE}/${id}/activate`, who)));
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    const uid = (await t.s.users.findByUuid(uuid))!.id;
    const active = await t.s.db.selectFrom('device_tokens').select('id').where('user_id', '=', uid).where('is_active', '=', true).execute();
    expect(active).toHaveLength(10);
  });
});

