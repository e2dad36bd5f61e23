/**
 * Data-subject rights, export part (issue 28): the export (JSON and a ZIP of CSV files, sealed
 * under the session key when asked and opened by the SDK), the SCIM portability document checked
 * as a validator would, the request log, and the registry's completeness against the migrated
 * schema. Two people throughout: nothing of one ever appears in the other's answers.
 */
import { inflateRawSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StrongroomClient, type FetchLike } from '../../packages/client/src/index.js';
import { PERSONAL_DATA_REGISTRY } from '../../src/gdpr/export/registry.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn, STRONG_PASSWORD, type SignedIn } from '../harness/fixtures.js';
import { ENCRYPTED, fetchServerPem, openPreAuth, openSession, preAuthBody } from '../harness/transport-client.js';

let t: TestApp;
let amina: SignedIn;
let kofi: SignedIn;
let operator: SignedIn;
let admin: SignedIn;
let aminaUuid: string;
let kofiUuid: string;
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const EXPORT = '/api/v1/auth/gdpr/export';
const PORTABILITY = '/api/v1/auth/gdpr/portability';
const REQUESTS = '/api/v1/admin/gdpr/requests';

const get = (url: string, token: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers: bearer(token, headers) });

/** A tiny ZIP reader (central directory, deflate or stored): name -> bytes. */
function unzip(buf: Buffer): Map<string, Buffer> {
  const end = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  expect(end).toBeGreaterThan(0);
  const count = buf.readUInt16LE(end + 10);
  let p = buf.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    expect(buf.readUInt32LE(p)).toBe(0x02014b50);
    const method = buf.readUInt16LE(p + 10);
    const compressed = buf.readUInt32LE(p + 20);
    const size = buf.readUInt32LE(p + 24);
    const nameLength = buf.readUInt16LE(p + 28);
    const extra = buf.readUInt16LE(p + 30);
    const comment = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.subarray(p + 46, p + 46 + nameLength).toString('utf8');
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + compressed);
    const data = method === 8 ? inflateRawSync(raw) : raw;
    expect(data.length).toBe(size);
    files.set(name, data);
    p += 46 + nameLength + extra + comment;
  }
  return files;
}

async function serverKey(sessionId: string): Promise<Buffer> {
  return (await t.s.sessions.get(sessionId))!.aesKey!;
}

async function giveData(userUuid: string, tag: string): Promise<void> {
  const user = (await t.s.users.findByUuid(userUuid))!;
  const db = t.s.db;
  const now = new Date(t.clock.now());
  await db.insertInto('mfa_factors').values({ user_id: user.id, method: 'totp', status: 'active', secret_enc: t.s.sensitive.protect(TOTP_SECRET, 'mfa_factors.secret'), algorithm: 'SHA1', created_at: now, confirmed_at: now }).execute();
  await db.insertInto('mfa_backup_codes').values({ user_id: user.id, code_hash: `backup-hash-${tag}`, created_at: now, used_at: null }).execute();
  await db.insertInto('recovery_workflows').values({
    handle_hash: `handle-hash-${tag}`, kind: 'password', state: 'cancelled', user_id: user.id, decoy: false, account_hash: `account-hash-${tag}`, holds_slot: false,
    login_key: `u:${user.id}`, subject_masked: 'a***', created_at: now, expires_at: now, verified_at: null, completed_at: null, ended_at: now, reference: `REF${tag}`.slice(0, 8),
    initiated_by: null, waiting_until: null, cooling_off_hours: null,
  }).execute();
  const purpose = (await sql<{ id: number; sha256: string }>`SELECT p.id, t.sha256 FROM consent_purposes p JOIN consent_texts t ON t.purpose_id = p.id AND t.version = 1 AND t.language = 'en' WHERE p.key = 'marketing_email'`.execute(db)).rows[0]!;
  const h = (await sql<{ id: number }>`INSERT INTO consent_history (user_id, purpose_id, version, language, text_hash, given, at, channel, client_address, user_agent)
    VALUES (${user.id}, ${purpose.id}, 1, 'en', ${purpose.sha256}, true, ${now}, 'web', '203.0.113.7', ${`agent-${tag}`}) RETURNING id`.execute(db)).rows[0]!;
  await sql`INSERT INTO user_consents (user_id, purpose_id, history_id, given, version, changed_at) VALUES (${user.id}, ${purpose.id}, ${h.id}, true, 1, ${now})`.execute(db);
}

beforeAll(async () => {
  t = await createTestApp({ env: { DB_FIELD_ENCRYPTION: '1' } });
  aminaUuid = (await seedUser(t.s, 'gdpr.amina', { email: 'amina.gdpr@example.com', phone: '+254712000111' })).uuid;
  kofiUuid = (await seedUser(t.s, 'gdpr.kofi', { email: 'kofi.gdpr@example.com', phone: '+254712000222' })).uuid;
  await seedUser(t.s, 'gdpr.operator');
  await seedUser(t.s, 'gdpr.admin', { roles: ['admin'] });
  amina = await signIn(t.app, 'gdpr.amina');
  kofi = await signIn(t.app, 'gdpr.kofi');
  operator = await signIn(t.app, 'gdpr.operator');
  admin = await signIn(t.app, 'gdpr.admin');
  for (const [who, name] of [[amina, 'Amina phone'], [kofi, 'Kofi phone']] as const) {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(who.access_token), payload: { push_token: `fcm:${name.replace(' ', '_')}_APA91bH2x7k3Lq9Zr0Xc3A_token`, platform: 'mobile', device_name: name } });
    expect(res.statusCode, res.body).toBe(201);
  }
  await giveData(aminaUuid, 'amina');
  await giveData(kofiUuid, 'kofi');
});
afterAll(async () => t.close());

describe('the personal-data registry', () => {
  it('names every table and column of the migrated schema that refers to a user (foreign keys to users, user_id, *_user_id, user_uuid, *_by)', async () => {
    const fks = await sql<{ t: string; c: string }>`
      SELECT cl.relname AS t, a.attname AS c FROM pg_constraint k
      JOIN pg_class cl ON cl.oid = k.conrelid JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey)
      WHERE k.contype = 'f' AND k.confrelid = 'users'::regclass AND NOT cl.relispartition`.execute(t.s.db);
    const named = await sql<{ t: string; c: string }>`
      SELECT c.table_name AS t, c.column_name AS c FROM information_schema.columns c
      JOIN pg_class cl ON cl.relname = c.table_name AND cl.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
      WHERE c.table_schema = current_schema() AND NOT cl.relispartition AND cl.relkind IN ('r', 'p')
        AND (c.column_name ~ '^(.+_)?user_(id|uuid)$' OR c.column_name ~ '_by$')`.execute(t.s.db);
    const found = new Set([...fks.rows, ...named.rows].map((r) => `${r.t}.${r.c}`));
    expect(found.size).toBeGreaterThan(20);
    expect(found).toContain('sessions.user_id'); // the detection itself works
    const covered = new Set(PERSONAL_DATA_REGISTRY.flatMap((e) => Object.keys(e.references).map((c) => `${e.table}.${c}`)));
    const missing = [...found].filter((x) => !covered.has(x)).sort();
    expect(missing, `tables or columns naming a user with no registry entry: ${missing.join(', ')}`).toEqual([]);
    // No stale entry either: every table and column the registry names exists.
    const columns = await sql<{ t: string; c: string }>`SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema()`.execute(t.s.db);
    const existing = new Set(columns.rows.map((r) => `${r.t}.${r.c}`));
    expect([...covered].filter((x) => !existing.has(x))).toEqual([]);
  });

  it('every entry is exported (a section with columns) or excluded with a reason; sections are unique', () => {
    const sections: string[] = [];
    for (const e of PERSONAL_DATA_REGISTRY) {
      if ('read' in e.export) {
        sections.push(e.export.section);
        expect(e.export.columns.length, e.table).toBeGreaterThan(0);
      } else if ('excluded' in e.export) expect(e.export.excluded.length, e.table).toBeGreaterThan(40);
      else expect(sections, e.table).toContain(e.export.within);
    }
    expect(new Set(sections).size).toBe(sections.length);
    expect(new Set(PERSONAL_DATA_REGISTRY.map((e) => e.table)).size).toBe(PERSONAL_DATA_REGISTRY.length);
  });

  it('every entry says what erasure does with its rows (delete, erase columns, pseudonymise, or keep with the ground), and all but keep act', () => {
    const missing: string[] = [];
    for (const e of PERSONAL_DATA_REGISTRY) {
      const x = (e as { erasure?: { action?: string; why?: string; apply?: unknown } }).erasure;
      const ok = x !== undefined && ['delete', 'erase columns', 'pseudonymise', 'keep'].includes(x.action ?? '') && (x.why ?? '').length > 30
        && (x.action === 'keep') === (typeof x.apply !== 'function');
      if (!ok) missing.push(e.table);
    }
    expect(missing, `registry entries without a valid erasure decision: ${missing.join(', ')}`).toEqual([]);
    // The decisions the law and the brief fix: the account a tombstone, the audit trail pseudonymised, credentials deleted.
    const action = (t: string) => PERSONAL_DATA_REGISTRY.find((e) => e.table === t)?.erasure.action;
    expect([action('users'), action('audit_log'), action('audit_log_held'), action('credentials'), action('sessions')]).toEqual(['erase columns', 'pseudonymise', 'pseudonymise', 'delete', 'delete']);
  });
});

describe('GET /api/v1/auth/gdpr/export', () => {
  it('unauthenticated: 401', async () => {
    expectError(await t.app.inject({ method: 'GET', url: EXPORT }), 401, 'TOKEN_MISSING');
    expectError(await t.app.inject({ method: 'GET', url: PORTABILITY }), 401, 'TOKEN_MISSING');
  });

  it('JSON: every section, contacts decrypted, factors, sessions, devices masked, consents, recovery, audit; never a secret; nothing of another person', async () => {
    const res = await get(EXPORT, amina.access_token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const doc = res.json() as Record<string, unknown> & { sections: Array<{ name: string; rows: number }> };
    expect(doc.user_id).toBe(aminaUuid);
    expect(Date.parse(doc.generated_at as string)).toBe(t.clock.now());
    for (const s of doc.sections) expect((doc[s.name] as unknown[]).length, s.name).toBe(s.rows);
    const rows = (name: string) => doc[name] as Array<Record<string, unknown>>;
    expect(rows('profile')[0]).toMatchObject({ id: aminaUuid, username: 'gdpr.amina', email: 'amina.gdpr@example.com', phone: '+254712000111' });
    expect(rows('roles')).toEqual([expect.objectContaining({ role: 'customer' })]);
    expect(rows('factors')).toEqual([expect.objectContaining({ method: 'totp', status: 'active' })]);
    expect(rows('backup_codes')).toHaveLength(1);
    expect(rows('sessions').map((s) => s.session_id)).toContain(amina.session_id);
    expect(rows('session_history').length).toBeGreaterThan(0);
    expect(rows('devices')).toEqual([expect.objectContaining({ device_name: 'Amina phone', push_token: 'fcm:Am…oken' })]);
    expect(rows('consents')).toEqual([expect.objectContaining({ purpose: 'marketing_email', given: true, version: 1 })]);
    expect(rows('consent_history')).toEqual([expect.objectContaining({ purpose: 'marketing_email', client_address: '203.0.113.7', user_agent: 'agent-amina' })]);
    expect(rows('recovery_workflows')).toEqual([expect.objectContaining({ kind: 'password', state: 'cancelled', started_at_branch: false })]);
    expect(rows('audit_events').map((e) => e.event_type)).toEqual(expect.arrayContaining(['USER_LOGIN', 'DEVICE_TOKEN_REGISTERED']));
    // Where each event placed the person, and what the risk evaluation made of it, are theirs to see too.
    expect(rows('audit_events').find((e) => e.event_type === 'USER_LOGIN')).toMatchObject({ location: { internal: true }, suspicious_indicators: [] });
    expect(rows('audit_events').every((e) => 'risk_score' in e)).toBe(true);
    expect((doc.notes as Record<string, string>).audit_events).toContain('13 months');
    // Never a secret: not the TOTP secret, hashes, the push token in full, the session key.
    for (const secret of [TOTP_SECRET, 'backup-hash-amina', 'handle-hash-amina', 'account-hash-amina', 'fcm:Amina_phone_APA91bH2x7k3Lq9Zr0Xc3A_token', (await serverKey(amina.session_id)).toString('hex')]) expect(res.body).not.toContain(secret);
    expect(res.body).not.toMatch(/"(password_hash|secret_enc|code_hash|answer_hash|aes_key|push_token_bidx|fingerprint_hash)"/);
    // Nothing of Kofi's.
    for (const theirs of [kofiUuid, 'gdpr.kofi', 'kofi.gdpr@example.com', '+254712000222', 'Kofi phone', 'agent-kofi', kofi.session_id]) expect(res.body).not.toContain(theirs);
    expect(await auditTotal(t.s, aminaUuid, 'GDPR_EXPORTED')).toBe(1);
  });

  it('CSV: a readable ZIP of one CSV per section, with README.txt and manifest.json', async () => {
    const res = await get(`${EXPORT}?format=csv`, kofi.access_token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="strongroom-export-\d{4}-\d{2}-\d{2}\.zip"$/);
    const files = unzip(res.rawPayload);
    const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8')) as { user_id: string; files: Array<{ name: string; rows: number }> };
    expect(manifest.user_id).toBe(kofiUuid);
    for (const f of manifest.files) expect(files.has(f.name), f.name).toBe(true);
    expect(files.get('README.txt')!.toString('utf8')).toContain('devices.csv (1 rows)');
    const devices = files.get('devices.csv')!.toString('utf8').replace(/^\uFEFF/, '').split('\r\n');
    expect(devices[0]).toBe('id,push_token,platform,device_name,is_active,receives_codes,last_used_at,created_on,updated_on');
    expect(devices[1]).toContain(',fcm:Ko…oken,mobile,Kofi phone,true,');
    expect(files.get('profile.csv')!.toString('utf8')).toContain('kofi.gdpr@example.com');
    const all = [...files.values()].map((b) => b.toString('utf8')).join('\n');
    for (const theirs of [aminaUuid, 'gdpr.amina', 'amina.gdpr@example.com', 'Amina phone']) expect(all).not.toContain(theirs);
    expect(all).not.toContain(TOTP_SECRET);
  });

  it('CSV under transport encryption: the ZIP leaves sealed under the session key, and the SDK opens it', async () => {
    const key = await serverKey(kofi.session_id);
    const res = await get(`${EXPORT}?format=csv`, kofi.access_token, ENCRYPTED);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-encrypted']).toBe('true');
    const sealed = res.json() as { iv: string; ciphertext: string; tag: string };
    expect(Object.keys(sealed).sort()).toEqual(['ciphertext', 'iv', 'tag']);
    expect(res.body).not.toContain('kofi');
    const opened = openSession(key, sealed) as { format: string; content_type: string; data: string; size: number };
    expect(opened).toMatchObject({ format: 'csv', content_type: 'application/zip' });
    const zipped = Buffer.from(opened.data, 'base64');
    expect(zipped.length).toBe(opened.size);
    expect(unzip(zipped).get('profile.csv')!.toString('utf8')).toContain('gdpr.kofi');

    // The SDK, with the session's key, over the same app.
    const fetch: FetchLike = async (input, init) => {
      const r = await t.app.inject({ method: (init.method ?? 'GET') as 'GET', url: new URL(input).pathname + new URL(input).search, headers: init.headers as Record<string, string> });
      return new Response(r.rawPayload.length === 0 ? null : new Uint8Array(r.rawPayload), { status: r.statusCode, headers: Object.entries(r.headers).map(([k, v]) => [k, String(v)] as [string, string]) });
    };
    const sdk = new StrongroomClient({ baseUrl: 'http://strongroom.test', fetch });
    await sdk.setSession({ accessToken: kofi.access_token, refreshToken: kofi.refresh_token, sessionId: kofi.session_id, sessionKey: key.toString('base64'), accessTokenExpiresAt: t.clock.now() + 600_000 });
    const bytes = await sdk.downloadExport('csv');
    expect(unzip(Buffer.from(bytes)).get('devices.csv')!.toString('utf8')).toContain('Kofi phone');
    const json = await sdk.downloadExport('json');
    expect(json.user_id).toBe(kofiUuid);
  });

  it('needs a recent sign-in: 403 GDPR_REAUTHENTICATION_REQUIRED eleven minutes after it, 403 STEP_UP_REQUIRED for a person with a second factor', async () => {
    const fresh = await signIn(t.app, 'gdpr.operator');
    t.clock.advance(11 * 60_000);
    try {
      const err = expectError(await get(EXPORT, fresh.access_token), 403, 'GDPR_REAUTHENTICATION_REQUIRED');
      expect(err.details).toMatchObject({ within_minutes: 10 });
      expectError(await get(PORTABILITY, fresh.access_token), 403, 'GDPR_REAUTHENTICATION_REQUIRED');
      expectError(await get(EXPORT, amina.access_token), 403, 'STEP_UP_REQUIRED'); // Amina's session, signed in before her authenticator was added
    } finally {
      t.clock.advance(-11 * 60_000);
    }
  });
});

describe('GET /api/v1/auth/gdpr/portability', () => {
  it('a SCIM 2.0 User: schemas, required attributes, multi-valued shapes, meta; application/scim+json', async () => {
    const res = await get(PORTABILITY, amina.access_token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
    const u = res.json() as Record<string, unknown> & { schemas: string[]; meta: Record<string, string> };
    const CORE = 'urn:ietf:params:scim:schemas:core:2.0:User';
    expect(u.schemas[0]).toBe(CORE);
    for (const s of u.schemas) expect(s).toMatch(/^urn:[a-z0-9][a-z0-9-]{0,31}:[\w.:-]+$/i);
    // Every extension object present is declared in `schemas`, and every non-core schema has its object.
    const extensions = Object.keys(u).filter((k) => k.startsWith('urn:'));
    expect(extensions.sort()).toEqual(u.schemas.filter((s) => s !== CORE).sort());
    expect(u).toMatchObject({ id: aminaUuid, userName: 'gdpr.amina', active: true, preferredLanguage: 'en' });
    for (const attr of ['emails', 'phoneNumbers'] as const) {
      const values = u[attr] as Array<Record<string, unknown>>;
      expect(values).toHaveLength(1);
      expect(Object.keys(values[0]!).sort()).toEqual(['primary', 'type', 'value']);
      expect(values.filter((v) => v.primary === true)).toHaveLength(1);
    }
    expect((u.emails as Array<{ value: string; type: string }>)[0]).toEqual({ value: 'amina.gdpr@example.com', type: 'home', primary: true });
    expect((u.phoneNumbers as Array<{ value: string }>)[0]!.value).toBe('tel:+254712000111');
    expect(u.meta.resourceType).toBe('User');
    for (const k of ['created', 'lastModified'] as const) expect(new Date(u.meta[k]!).toISOString()).toBe(u.meta[k]);
    expect(u.meta.location).toMatch(/^https?:\/\/[^/]+\/api\/v1\/auth\/gdpr\/portability$/);
    expect(u['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User']).toMatchObject({ organization: expect.any(String) });
    expect(u['urn:strongroom:params:scim:schemas:extension:person:1.0:User']).toMatchObject({ consents: [expect.objectContaining({ purpose: 'marketing_email', given: true })] });
    for (const theirs of [kofiUuid, 'gdpr.kofi', 'kofi.gdpr@example.com']) expect(res.body).not.toContain(theirs);
    expect(await auditTotal(t.s, aminaUuid, 'GDPR_PORTABILITY')).toBe(1);
  });
});

describe('GET /api/v1/admin/gdpr/requests', () => {
  it('lists every request (what was sent, never the data), filters by person, pages by cursor; 403 without gdpr.read', async () => {
    expectError(await get(REQUESTS, operator.access_token), 403, 'PERMISSION_DENIED');
    const all = await get(REQUESTS, admin.access_token);
    expect(all.statusCode, all.body).toBe(200);
    const page = all.json() as { requests: Array<Record<string, unknown> & { sections: Record<string, number> }>; next_cursor: string | null };
    expect(page.requests.length).toBeGreaterThanOrEqual(5);
    expect(all.body).not.toContain('amina.gdpr@example.com');
    const ofAmina = (await get(`${REQUESTS}?user_id=${aminaUuid}`, admin.access_token)).json() as typeof page;
    expect(ofAmina.requests.map((r) => `${r.kind}/${r.format}`).sort()).toEqual(['export/json', 'portability/scim']);
    expect(ofAmina.requests.find((r) => r.kind === 'export')).toMatchObject({ user_id: aminaUuid, username: 'gdpr.amina', encrypted: false, sections: expect.objectContaining({ profile: 1, devices: 1, consents: 1 }) });
    const ofKofi = (await get(`${REQUESTS}?user_id=${kofiUuid}`, admin.access_token)).json() as typeof page;
    expect(ofKofi.requests.map((r) => r.encrypted).sort()).toEqual([false, true, true, true]);
    // One at a time, by cursor: the same four, no repeats.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = (await get(`${REQUESTS}?user_id=${kofiUuid}&limit=1${cursor ? `&cursor=${cursor}` : ''}`, admin.access_token)).json() as typeof page;
      seen.push(...r.requests.map((x) => x.id as string));
      cursor = r.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ofKofi.requests.map((r) => r.id));
    expectError(await get(`${REQUESTS}?cursor=bogus`, admin.access_token), 422, 'VALIDATION_ERROR');
    // An impossible date in a well-formed cursor never reaches the database (it would answer 500).
    const impossible = Buffer.from(JSON.stringify({ v: 1, at: '2026-13-45T10:00:00.000000Z', id: kofiUuid })).toString('base64url');
    expectError(await get(`${REQUESTS}?cursor=${impossible}`, admin.access_token), 422, 'VALIDATION_ERROR');
  });
});

describe('threats', () => {
  it('personal data in the clear: with transport encryption enforced, an unflagged export or portability GET is 422 ENCRYPTION_REQUIRED; flagged, the answer is sealed', async () => {
    const e = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1' } });
    try {
      await seedUser(e.s, 'gdpr.enforced', { email: 'enforced.gdpr@example.com' });
      const login = await e.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(await fetchServerPem(e.app), { username: 'gdpr.enforced', password: STRONG_PASSWORD }) });
      expect(login.statusCode, login.body).toBe(200);
      const { body, key } = openPreAuth(login.json());
      const token = String(body.access_token);
      for (const url of [EXPORT, `${EXPORT}?format=csv`, PORTABILITY]) {
        const plain = await e.app.inject({ method: 'GET', url, headers: bearer(token) });
        expectError(plain, 422, 'ENCRYPTION_REQUIRED');
        expect(plain.body).not.toContain('enforced.gdpr@example.com');
      }
      const sealed = await e.app.inject({ method: 'GET', url: PORTABILITY, headers: bearer(token, ENCRYPTED) });
      expect(sealed.statusCode, sealed.body).toBe(200);
      expect(sealed.body).not.toContain('enforced.gdpr@example.com');
      expect(openSession(key, sealed.json())).toMatchObject({ userName: 'gdpr.enforced', emails: [{ value: 'enforced.gdpr@example.com', type: 'home', primary: true }] });
      const requests = await e.s.db.selectFrom('gdpr_requests').select(['kind', 'encrypted']).execute();
      expect(requests).toEqual([{ kind: 'portability', encrypted: true }]); // the refused ones sent nothing, so logged nothing
    } finally {
      await e.close();
    }
  });

  it('a burst of exports: each one logged and audited once, none lost', async () => {
    const before = await auditTotal(t.s, kofiUuid, 'GDPR_EXPORTED');
    const rowsBefore = (await t.s.gdprExport.requests.list({ userUuid: kofiUuid, limit: 200 })).requests.length;
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => get(`${EXPORT}?format=${i % 2 === 0 ? 'json' : 'csv'}`, kofi.access_token)));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(6).fill(200));
    expect(await auditTotal(t.s, kofiUuid, 'GDPR_EXPORTED')).toBe(before + 6);
    expect((await t.s.gdprExport.requests.list({ userUuid: kofiUuid, limit: 200 })).requests.length).toBe(rowsBefore + 6);
  });
});
