/**
 * The settings an operator reads: GET /api/v1/admin/rate-limits (each group's limits as configured,
 * their variables, and the routes each group counts, collected as they were registered) and
 * GET /api/v1/admin/keys (ids, ages and rotation of every key, never key material). Both need
 * config.manage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

const DAY = 86_400_000;
const secrets = testSecrets();
const previousFieldKey = Buffer.alloc(32, 7);
let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await createTestApp({
    secrets: { ...secrets, previousFieldKeys: [previousFieldKey] },
    env: { RATE_LIMIT_RECOVERY_IP: '7/5m', RATE_LIMIT_TOKEN_IP: 'off', JWT_KEY_ROTATION_DAYS: '30', FIELD_ENCRYPTION_KEYS_PREVIOUS: previousFieldKey.toString('base64') },
    clock: new ManualClock(Date.UTC(2026, 5, 1, 9)),
  });
  await seedUser(t.s, 'settings.admin', { roles: ['admin'] });
  await seedUser(t.s, 'settings.staff', { roles: ['staff'] });
  token = (await signIn(t.app, 'settings.admin')).access_token;
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string, as = token) => t.app.inject({ method: 'GET', url, headers: bearer(as) });

describe('GET /api/v1/admin/rate-limits and /keys: who may read them', () => {
  it.each(['/api/v1/admin/rate-limits', '/api/v1/admin/keys'])('threat: %s without a token is 401 TOKEN_MISSING, for staff without config.manage 403 PERMISSION_DENIED', async (url) => {
    expectError(await t.app.inject({ method: 'GET', url }), 401, 'TOKEN_MISSING');
    expectError(await get(url, (await signIn(t.app, 'settings.staff')).access_token), 403, 'PERMISSION_DENIED');
  });
});

describe('GET /api/v1/admin/rate-limits', () => {
  it('lists every group with its limits as configured, their variables, and the routes it counts', async () => {
    const res = await get('/api/v1/admin/rate-limits');
    expect(res.statusCode, res.body).toBe(200);
    const groups = res.json().groups as Array<{ group: string; per_client: unknown; per_account: unknown; routes: Array<{ method: string; url: string }> }>;
    const by = (g: string) => groups.find((x) => x.group === g)!;
    expect(by('recovery').per_client).toEqual({ limit: 7, window_sec: 300, variable: 'RATE_LIMIT_RECOVERY_IP', source: 'configured' });
    expect(by('token').per_client).toBeNull();
    expect(by('signin').routes).toEqual(expect.arrayContaining([{ method: 'POST', url: '/api/v1/auth/login' }, { method: 'POST', url: '/api/v1/auth/ldap/login' }]));
    expect(by('token').routes).toEqual(expect.arrayContaining([{ method: 'POST', url: '/api/v1/auth/refresh' }]));
    // The directory connection test reaches out from the server: counted per address and per administrator.
    expect(by('account').routes).toEqual(expect.arrayContaining([{ method: 'POST', url: '/api/v1/admin/ldap/test' }]));
    // Every rate-limited route is in exactly one group, and no HEAD twin is listed.
    const all = groups.flatMap((g) => g.routes.map((r) => `${r.method} ${r.url}`));
    expect(new Set(all).size).toBe(all.length);
    expect(all.some((r) => r.startsWith('HEAD '))).toBe(false);
  });
});

describe('GET /api/v1/admin/keys', () => {
  it('lists each key with its id, algorithm, age and rotation; a JWT key older than JWT_KEY_ROTATION_DAYS is due', async () => {
    const first = (await get('/api/v1/admin/keys')).json().keys as Array<Record<string, unknown>>;
    const jwt = first.find((k) => k.kind === 'jwt_signing' && k.status === 'current')!;
    expect(jwt).toMatchObject({ algorithm: 'HS256', age_days: 0, rotation_due: false, rotation: 'automatic', rotate_command: 'strongroom rotate-keys' });
    expect(jwt.id).toBe((await t.s.database.db.selectFrom('jwt_signing_keys').select('kid').orderBy('version', 'desc').executeTakeFirstOrThrow()).kid);
    expect(first.find((k) => k.kind === 'transport' && k.status === 'current')).toMatchObject({ id: t.s.transportKeys.current().keyId, algorithm: 'RSA-2048', rotate_command: 'strongroom rotate-transport-key' });
    expect(first.filter((k) => k.kind === 'field_encryption').map((k) => k.status)).toEqual(['current', 'previous']);
    expect(first.find((k) => k.kind === 'blind_index')).toMatchObject({ id: t.s.keys.blindIndex('blind-index').currentKeyId, created_at: null, rotate_command: 'strongroom rotate-field-key' });
    expect(first.find((k) => k.kind === 'ip_hash')).toMatchObject({ rotation: 'none', rotate_command: null });

    t.clock.advance(31 * DAY);
    token = (await signIn(t.app, 'settings.admin')).access_token; // the earlier session is long over
    const later = (await get('/api/v1/admin/keys')).json().keys as Array<Record<string, unknown>>;
    expect(later.find((k) => k.kind === 'jwt_signing' && k.status === 'current')).toMatchObject({ age_days: 31, rotation_due: true });

    await t.s.samlSpKeys.rotate();
    const saml = ((await get('/api/v1/admin/keys')).json().keys as Array<Record<string, unknown>>).find((k) => k.kind === 'saml_sp')!;
    expect(saml).toMatchObject({ status: 'current', algorithm: 'RSA-2048', rotation: 'manual', rotate_command: 'strongroom rotate-saml-sp-key' });
  });

  it('a SAML SP key whose stored certificate does not parse: still 200, that key listed with its id and dates, flagged certificate_unreadable', async () => {
    await t.s.samlSpKeys.rotate();
    const db = t.s.database.db;
    const row = await db.selectFrom('saml_sp_keys').select(['key_id', 'certificate', 'created_at']).where('retired_at', 'is', null).orderBy('seq', 'desc').executeTakeFirstOrThrow();
    await db.updateTable('saml_sp_keys').set({ certificate: '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n' }).where('key_id', '=', row.key_id).execute();
    try {
      const res = await get('/api/v1/admin/keys');
      expect(res.statusCode, res.body).toBe(200);
      const saml = (res.json().keys as Array<Record<string, unknown>>).filter((k) => k.kind === 'saml_sp');
      expect(saml.find((k) => k.id === row.key_id)).toMatchObject({ status: 'current', algorithm: 'unknown', created_at: new Date(row.created_at).toISOString(), certificate_unreadable: true, rotate_command: 'strongroom rotate-saml-sp-key' });
      // The readable ones are listed as before, without the flag.
      for (const k of saml.filter((x) => x.id !== row.key_id)) {
        expect(k.algorithm).toBe('RSA-2048');
        expect(k).not.toHaveProperty('certificate_unreadable');
      }
      expect(saml.length).toBeGreaterThan(1);
    } finally {
      await db.updateTable('saml_sp_keys').set({ certificate: row.certificate }).where('key_id', '=', row.key_id).execute();
    }
  });

  it('threat: no key material in the answer: no secret, no PEM, nothing base64 of key length', async () => {
    const res = await get('/api/v1/admin/keys');
    const body = res.body;
    for (const secret of [secrets.fieldKey, secrets.ipHashKey, previousFieldKey]) {
      expect(body).not.toContain(secret.toString('base64'));
      expect(body).not.toContain(secret.toString('hex'));
    }
    expect(body).not.toMatch(/BEGIN|PRIVATE|[A-Za-z0-9+/]{40,}/);
    for (const row of await t.s.database.db.selectFrom('jwt_signing_keys').select('secret_enc').execute()) expect(body).not.toContain(row.secret_enc);
  });
});
