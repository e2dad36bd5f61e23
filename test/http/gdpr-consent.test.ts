/**
 * Consent per purpose (issue 28): a person reads their consents, gives and withdraws several in
 * one call (withdrawal as easy as giving), every change kept as history with the version and
 * hash of the text, the channel, address and user agent; a new version of a text leaves the
 * consents given to the old one recorded against it and shows that a newer one awaits; the
 * errors with their codes; parallel changes for one person and purpose keep the current answer
 * equal to the last history row; administrators configure purposes and texts, and list who
 * consented to a purpose with nothing but uuids, versions and times.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentsOf } from '../../src/gdpr/consent/store.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

let t: TestApp;
let amina: string;
let kofi: string;
let lena: string;
let root: string;
let reader: string;
let campaigns: string;
let campaignsUuid: string;
const ids: Record<string, { id: number; uuid: string }> = {};
const BASE = '/api/v1/auth/consent';
const ADMIN = '/api/v1/admin/consent/purposes';
const SEEDED = ['terms_of_service', 'marketing_email', 'marketing_sms', 'analytics', 'partner_sharing'];

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
interface Consent { purpose: string; title: string; required: boolean; given: boolean; version: number | null; current_version: number; newer_version: boolean; changed_at: string | null; channel: string | null; text: { version: number; language: string; body: string; sha256: string } }
interface HistoryRow { purpose: string; given: boolean; version: number; language: string; text_hash: string; at: string; channel: string | null; client_address: string | null; user_agent: string | null }
interface Changed { purpose: string; given: boolean; version: number; changed: boolean }

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

function call(method: 'GET' | 'POST', url: string, token: string | undefined, payload?: unknown): Promise<Res> {
  return t.app.inject({ method, url, headers: { ...(token ? bearer(token) : {}), 'user-agent': 'StrongroomBank/5.2 (test)' }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
}
const answer = (token: string, consents: unknown[]): Promise<Res> => call('POST', BASE, token, { consents });
async function consents(token: string, query = ''): Promise<{ consents: Consent[]; history?: HistoryRow[] }> {
  const res = await call('GET', `${BASE}${query}`, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { consents: Consent[]; history?: HistoryRow[] };
}
const of = (list: Consent[], purpose: string): Consent => list.find((c) => c.purpose === purpose)!;
const historyRows = (user: string) => t.s.db.selectFrom('consent_history').selectAll().where('user_id', '=', ids[user]!.id).orderBy('id').execute();

beforeAll(async () => {
  t = await createTestApp();
  for (const [name, roles] of [['amina', ['customer']], ['kofi', ['customer']], ['lena', ['customer']], ['root', ['admin']]] as const) {
    const u = await seedUser(t.s, `consent.${name}`, { roles: [...roles], email: `${name}@bank.example` });
    ids[name] = { id: (await t.s.users.findByUuid(u.uuid))!.id, uuid: u.uuid };
  }
  await t.s.db.updateTable('users').set({ language: 'pt' }).where('id', '=', ids.lena!.id).execute();
  root = (await signIn(t.app, 'consent.root')).access_token;
  // An administrator of users who holds neither consent permission, and a campaign officer who holds consent.read only.
  for (const [role, permissions] of [['user.reader', ['users.read']], ['campaigns', ['consent.read']]] as const) {
    const res = await call('POST', '/api/v1/admin/roles', root, { name: role, description: role, permissions });
    expect(res.statusCode, res.body).toBe(201);
  }
  await seedUser(t.s, 'consent.reader', { roles: ['user.reader'] });
  campaignsUuid = (await seedUser(t.s, 'consent.campaigns', { roles: ['campaigns'] })).uuid;
  reader = (await signIn(t.app, 'consent.reader')).access_token;
  campaigns = (await signIn(t.app, 'consent.campaigns')).access_token;
  amina = (await signIn(t.app, 'consent.amina')).access_token;
  kofi = (await signIn(t.app, 'consent.kofi')).access_token;
  lena = (await signIn(t.app, 'consent.lena')).access_token;
});
afterAll(async () => t.close());

describe('GET /api/v1/auth/consent', () => {
  it('lists the seeded purposes, none answered, each with its current text in the person\'s language and the SHA-256 of that text', async () => {
    const { consents: list, history } = await consents(amina);
    expect(history).toBeUndefined();
    expect(list.map((c) => c.purpose)).toEqual(SEEDED);
    expect(of(list, 'terms_of_service')).toMatchObject({ required: true, given: false, version: null, current_version: 1, newer_version: false, changed_at: null, channel: null });
    expect(list.filter((c) => c.required).map((c) => c.purpose)).toEqual(['terms_of_service']);
    for (const c of list) {
      expect(c.text).toMatchObject({ version: 1, language: 'en' });
      expect(c.text.sha256).toBe(sha256(c.text.body));
    }
    // Lena's language is Portuguese; `language` asks for another.
    expect(of((await consents(lena)).consents, 'marketing_email').text).toMatchObject({ language: 'pt', body: expect.stringContaining('Aceito que o banco') });
    expect(of((await consents(lena, '?language=fr')).consents, 'marketing_email').text).toMatchObject({ language: 'fr', body: expect.stringContaining('J\'accepte') });
  });
});

describe('POST /api/v1/auth/consent', () => {
  it('gives consent to several purposes in one call: a history row each (version, text hash, channel, address, user agent), the current state, audited', async () => {
    const res = await answer(amina, [{ purpose: 'terms_of_service', given: true, version: 1 }, { purpose: 'marketing_email', given: true, version: 1 }, { purpose: 'analytics', given: true, version: 1 }]);
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { consents: Changed[] }).consents.map((c) => [c.purpose, c.given, c.version, c.changed])).toEqual([
      ['terms_of_service', true, 1, true], ['marketing_email', true, 1, true], ['analytics', true, 1, true],
    ]);
    const list = (await consents(amina)).consents;
    expect(of(list, 'marketing_email')).toMatchObject({ given: true, version: 1, current_version: 1, newer_version: false, channel: 'web', changed_at: new Date(t.clock.now()).toISOString() });
    expect(of(list, 'marketing_sms')).toMatchObject({ given: false, version: null });
    const rows = await historyRows('amina');
    expect(rows).toHaveLength(3);
    const email = rows.find((r) => r.purpose_id === rows[1]!.purpose_id)!;
    expect(email).toMatchObject({ given: true, version: 1, language: 'en', channel: 'web', client_address: '127.0.0.1', user_agent: 'StrongroomBank/5.2 (test)' });
    expect(email.text_hash).toBe(of(list, 'marketing_email').text.sha256);
    expect(await auditTotal(t.s, ids.amina!.uuid, 'CONSENT_GIVEN')).toBe(3);
    const [entry] = (await t.s.audit.query({ userId: ids.amina!.uuid, eventType: 'CONSENT_GIVEN', limit: 3, offset: 0 })).entries.filter((e) => e.details.purpose === 'marketing_email');
    expect(entry!.details).toEqual({ purpose: 'marketing_email', version: 1, language: 'en', text_hash: email.text_hash });
  });

  it('records the text of the language shown: Lena (Portuguese) agrees to the Portuguese text, and its hash is kept', async () => {
    expect((await answer(lena, [{ purpose: 'marketing_sms', given: true, version: 1 }, { purpose: 'analytics', given: true, version: 1, language: 'fr' }])).statusCode).toBe(200);
    const shown = (await consents(lena)).consents;
    const rows = await historyRows('lena');
    expect(rows.map((r) => r.language)).toEqual(['pt', 'fr']);
    expect(rows[0]!.text_hash).toBe(of(shown, 'marketing_sms').text.sha256);
    expect(rows[1]!.text_hash).toBe(of((await consents(lena, '?language=fr')).consents, 'analytics').text.sha256);
  });

  it('withdraws with the same call and no version, recorded against the version agreed to; withdrawing again records nothing', async () => {
    const res = await answer(amina, [{ purpose: 'marketing_email', given: false }]);
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { consents: Changed[] }).consents).toEqual([expect.objectContaining({ purpose: 'marketing_email', given: false, version: 1, changed: true })]);
    expect(of((await consents(amina)).consents, 'marketing_email')).toMatchObject({ given: false, version: 1 });
    expect(await auditTotal(t.s, ids.amina!.uuid, 'CONSENT_WITHDRAWN')).toBe(1);
    const again = await answer(amina, [{ purpose: 'marketing_email', given: false }, { purpose: 'analytics', given: true, version: 1 }]);
    expect((again.json() as { consents: Changed[] }).consents.map((c) => c.changed)).toEqual([false, false]);
    expect(await historyRows('amina')).toHaveLength(4);
    expect(await auditTotal(t.s, ids.amina!.uuid, 'CONSENT_WITHDRAWN')).toBe(1);
  });

  it('history=true: every answer, oldest first, with what each was given to, from where', async () => {
    const { history } = await consents(amina, '?history=true');
    expect(history!.map((h) => [h.purpose, h.given, h.version])).toEqual([
      ['terms_of_service', true, 1], ['marketing_email', true, 1], ['analytics', true, 1], ['marketing_email', false, 1],
    ]);
    expect(history![3]).toMatchObject({ language: 'en', channel: 'web', client_address: '127.0.0.1', user_agent: 'StrongroomBank/5.2 (test)' });
    expect(history![3]!.text_hash).toBe(history![1]!.text_hash);
    // What the data export reads is the same.
    const exported = await consentsOf(t.s.db, ids.amina!.id);
    expect(exported.history.map((h) => [h.purpose, h.given, h.version, h.text_hash])).toEqual(history!.map((h) => [h.purpose, h.given, h.version, h.text_hash]));
    expect(exported.current.map((c) => [c.purpose, c.given, c.version])).toEqual([['terms_of_service', true, 1], ['marketing_email', false, 1], ['analytics', true, 1]]);
  });
});

describe('a new version of a purpose\'s text', () => {
  const V2 = { en: 'I agree that the bank may analyse how I use its apps, including crash reports, to improve them. I can withdraw this consent at any time.', pt: 'Aceito que o banco analise a utilização das suas aplicações, incluindo relatórios de falhas. Posso retirar este consentimento a qualquer momento.' };

  it('is published by an administrator (201, audited); consents given stay recorded against version 1 and a newer version awaits agreement', async () => {
    const res = await call('POST', `${ADMIN}/analytics/versions`, root, { texts: V2 });
    expect(res.statusCode, res.body).toBe(201);
    const published = res.json() as { current_version: number; versions: Array<{ version: number; texts: Array<{ language: string; body: string; sha256: string }> }> };
    expect(published.current_version).toBe(2);
    expect(published.versions.map((v) => v.version)).toEqual([1, 2]);
    expect(published.versions[1]!.texts).toEqual([{ language: 'en', body: V2.en, sha256: sha256(V2.en) }, { language: 'pt', body: V2.pt, sha256: sha256(V2.pt) }]);
    const [entry] = (await t.s.audit.query({ eventType: 'CONSENT_TEXT_PUBLISHED', limit: 1, offset: 0 })).entries;
    expect(entry).toMatchObject({ user_id: ids.root!.uuid, details: { purpose: 'analytics', version: 2, previous_version: 1, texts: { en: sha256(V2.en), pt: sha256(V2.pt) } } });

    expect(of((await consents(amina)).consents, 'analytics')).toMatchObject({ given: true, version: 1, current_version: 2, newer_version: true, text: { version: 2, sha256: sha256(V2.en) } });
    expect(of((await consents(lena)).consents, 'analytics')).toMatchObject({ given: true, version: 1, newer_version: true, text: { version: 2, language: 'pt' } });
    const kept = (await historyRows('amina')).filter((r) => r.version === 1 && r.given);
    expect(kept).toHaveLength(3); // nothing rewritten
  });

  it('threat: consent to a superseded text is refused (409 CONSENT_VERSION_STALE, naming the current version); the current one is recorded next to the old', async () => {
    const stale = expectError(await answer(amina, [{ purpose: 'analytics', given: true, version: 1 }]), 409, 'CONSENT_VERSION_STALE');
    expect(stale.details).toMatchObject({ purpose: 'analytics', version: 1, current_version: 2 });
    expectError(await answer(amina, [{ purpose: 'analytics', given: true, version: 3 }]), 409, 'CONSENT_VERSION_STALE');
    const res = await answer(amina, [{ purpose: 'analytics', given: true, version: 2 }]);
    expect((res.json() as { consents: Changed[] }).consents[0]).toMatchObject({ version: 2, changed: true });
    expect(of((await consents(amina)).consents, 'analytics')).toMatchObject({ given: true, version: 2, newer_version: false });
    const analytics = (await consents(amina, '?history=true')).history!.filter((h) => h.purpose === 'analytics');
    expect(analytics.map((h) => [h.version, h.text_hash])).toEqual([[1, analytics[0]!.text_hash], [2, sha256(V2.en)]]);
    expect(analytics[0]!.text_hash).not.toBe(sha256(V2.en));
  });

  it('a version identical to the current one is refused (409 CONSENT_TEXT_UNCHANGED); an unknown purpose is 404 CONSENT_PURPOSE_NOT_FOUND', async () => {
    expect(expectError(await call('POST', `${ADMIN}/analytics/versions`, root, { texts: V2 }), 409, 'CONSENT_TEXT_UNCHANGED').details).toMatchObject({ purpose: 'analytics', current_version: 2 });
    expectError(await call('POST', `${ADMIN}/lottery/versions`, root, { texts: V2 }), 404, 'CONSENT_PURPOSE_NOT_FOUND');
  });
});

describe('errors', () => {
  it('an unknown purpose is 422 CONSENT_PURPOSE_UNKNOWN naming it, and nothing of the call is recorded', async () => {
    const before = (await historyRows('kofi')).length;
    const body = expectError(await answer(kofi, [{ purpose: 'marketing_sms', given: true, version: 1 }, { purpose: 'lottery', given: true, version: 1 }]), 422, 'CONSENT_PURPOSE_UNKNOWN');
    expect(body.details).toMatchObject({ purposes: ['lottery'] });
    expect(await historyRows('kofi')).toHaveLength(before);
  });

  it('threat: withdrawing the terms of service through the consent route is refused (409 CONSENT_REQUIRED_PURPOSE), the other answers of the call with it', async () => {
    expect((await answer(kofi, [{ purpose: 'terms_of_service', given: true, version: 1 }])).statusCode).toBe(200);
    expectError(await answer(kofi, [{ purpose: 'marketing_email', given: true, version: 1 }, { purpose: 'terms_of_service', given: false }]), 409, 'CONSENT_REQUIRED_PURPOSE');
    expect(of((await consents(kofi)).consents, 'terms_of_service').given).toBe(true);
    expect(of((await consents(kofi)).consents, 'marketing_email').given).toBe(false);
  });

  it('the same purpose twice, consent without a version, or a bad body is 422 VALIDATION_ERROR', async () => {
    expectError(await answer(kofi, [{ purpose: 'analytics', given: true, version: 2 }, { purpose: 'analytics', given: false }]), 422, 'VALIDATION_ERROR');
    expectError(await answer(kofi, [{ purpose: 'analytics', given: true }]), 422, 'VALIDATION_ERROR');
    expectError(await answer(kofi, []), 422, 'VALIDATION_ERROR');
    expectError(await answer(kofi, [{ purpose: 'Analytics!', given: true, version: 1 }]), 422, 'VALIDATION_ERROR');
  });

  it('threat: without a bearer token the routes answer 401', async () => {
    expectError(await call('GET', BASE, undefined), 401, 'TOKEN_MISSING');
    expectError(await call('POST', BASE, undefined, { consents: [{ purpose: 'analytics', given: false }] }), 401, 'TOKEN_MISSING');
    expectError(await call('GET', `${ADMIN}/marketing_email/subjects`, undefined), 401, 'TOKEN_MISSING');
  });

  it('threat: an administrator without consent.manage or consent.read is refused every administrative route (403 PERMISSION_DENIED)', async () => {
    const denied = async (res: Res, permission: string) => expect(expectError(res, 403, 'PERMISSION_DENIED').details).toMatchObject({ required_permission: permission });
    for (const token of [reader, campaigns, amina]) {
      await denied(await call('GET', ADMIN, token), 'consent.manage');
      await denied(await call('POST', ADMIN, token, { key: 'sneaky', title: 'Sneaky', required: false, texts: { en: 'x' } }), 'consent.manage');
      await denied(await call('POST', `${ADMIN}/analytics/versions`, token, { texts: { en: 'I agree to everything.' } }), 'consent.manage');
    }
    for (const token of [reader, amina]) await denied(await call('GET', `${ADMIN}/marketing_email/subjects`, token), 'consent.read');
    expect(await t.s.db.selectFrom('consent_purposes').select('key').where('key', '=', 'sneaky').execute()).toEqual([]);
  });
});

describe('purposes the bank configures', () => {
  it('lists every purpose with every version of its texts, creates one (201, audited; 409 CONSENT_PURPOSE_EXISTS for its key again), and people are asked it', async () => {
    const list = (await call('GET', ADMIN, root)).json() as { purposes: Array<{ purpose: string; current_version: number; versions: unknown[] }> };
    expect(list.purposes.map((p) => p.purpose)).toEqual(SEEDED);
    expect(list.purposes.find((p) => p.purpose === 'analytics')).toMatchObject({ current_version: 2, versions: [expect.anything(), expect.anything()] });
    const body = { key: 'marketing_push', title: 'Offers by push notification', required: false, texts: { en: 'I agree to offers by push notification.', fr: 'J\'accepte des offres par notification.' } };
    const res = await call('POST', ADMIN, root, body);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ purpose: 'marketing_push', current_version: 1, versions: [{ version: 1, texts: [{ language: 'en', sha256: sha256(body.texts.en) }, { language: 'fr' }] }] });
    expect(expectError(await call('POST', ADMIN, root, body), 409, 'CONSENT_PURPOSE_EXISTS').details).toMatchObject({ purpose: 'marketing_push' });
    expect(await auditTotal(t.s, ids.root!.uuid, 'CONSENT_PURPOSE_CREATED')).toBe(1);
    // Lena reads Portuguese: this purpose has none, so English.
    expect(of((await consents(lena)).consents, 'marketing_push')).toMatchObject({ given: false, version: null, current_version: 1, text: { language: 'en', body: body.texts.en } });
  });
});

describe('threat: parallel changes for one person and purpose', () => {
  it('a burst of gives and withdrawals (some naming two purposes in opposite orders) leaves the current answer equal to the last history row, and the history alternating', async () => {
    const calls = Array.from({ length: 30 }, (_, i) => {
      const given = i % 2 === 0;
      const sms = { purpose: 'marketing_sms', given, ...(given ? { version: 1 } : {}) };
      const email = { purpose: 'marketing_email', given: !given, ...(!given ? { version: 1 } : {}) };
      return answer(kofi, i % 3 === 0 ? [sms] : i % 3 === 1 ? [sms, email] : [email, sms]);
    });
    const results = await Promise.all(calls);
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const recorded = results.flatMap((r) => (r.json() as { consents: Changed[] }).consents).filter((c) => c.changed);
    const rows = await historyRows('kofi');
    const purposes = new Map((await t.s.db.selectFrom('consent_purposes').select(['id', 'key']).execute()).map((p) => [p.key, p.id]));
    for (const key of ['marketing_sms', 'marketing_email']) {
      const mine = rows.filter((r) => r.purpose_id === purposes.get(key));
      const state = await t.s.db.selectFrom('user_consents').selectAll().where('user_id', '=', ids.kofi!.id).where('purpose_id', '=', purposes.get(key)!).executeTakeFirstOrThrow();
      const last = mine.at(-1)!;
      expect(state).toMatchObject({ history_id: last.id, given: last.given, version: last.version });
      // Only changes are recorded: each row differs from the one before it.
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.given, `${key} row ${i}`).toBe(!mine[i - 1]!.given);
      expect(mine.length).toBeGreaterThan(1);
    }
    const burstRows = rows.filter((r) => [purposes.get('marketing_sms'), purposes.get('marketing_email')].includes(r.purpose_id));
    // kofi answered nothing about these two before the burst (the refused calls recorded nothing).
    expect(burstRows).toHaveLength(recorded.length);
    const given = await auditTotal(t.s, ids.kofi!.uuid, 'CONSENT_GIVEN');
    const withdrawn = await auditTotal(t.s, ids.kofi!.uuid, 'CONSENT_WITHDRAWN');
    expect(given + withdrawn).toBe((await historyRows('kofi')).length);
  });
});

describe('GET /api/v1/admin/consent/purposes/{purpose}/subjects', () => {
  it('lists who consented now: uuids, version and time only, a page at a time by cursor, audited', async () => {
    for (const name of ['kofi', 'lena']) {
      const token = name === 'kofi' ? kofi : lena;
      const current = of((await consents(token)).consents, 'marketing_email');
      if (!current.given) expect((await answer(token, [{ purpose: 'marketing_email', given: true, version: 1 }])).statusCode).toBe(200);
    }
    // Amina withdrew: she is not listed.
    const seen: Array<Record<string, unknown>> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Res = await call('GET', `${ADMIN}/marketing_email/subjects?limit=1${cursor ? `&cursor=${cursor}` : ''}`, campaigns);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { subjects: Array<Record<string, unknown>>; next_cursor: string | null; limit: number };
      expect(Object.keys(page).sort()).toEqual(['limit', 'next_cursor', 'subjects']);
      for (const s of page.subjects) expect(Object.keys(s).sort()).toEqual(['given_at', 'user_id', 'version']);
      expect(res.body).not.toMatch(/consent\.(kofi|lena)|@bank\.example|127\.0\.0\.1|StrongroomBank/);
      seen.push(...page.subjects);
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(seen.map((s) => s.user_id).sort()).toEqual([ids.kofi!.uuid, ids.lena!.uuid].sort());
    expect(seen.every((s) => s.version === 1 && typeof s.given_at === 'string')).toBe(true);
    expect(await auditTotal(t.s, campaignsUuid, 'CONSENT_SUBJECTS_LISTED')).toBe(pages);
    // min_version: nobody consented to a version 2 of this text.
    expect(((await call('GET', `${ADMIN}/marketing_email/subjects?min_version=2`, root)).json() as { subjects: unknown[] }).subjects).toEqual([]);
    expect(((await call('GET', `${ADMIN}/analytics/subjects?min_version=2`, root)).json() as { subjects: Array<{ user_id: string }> }).subjects.map((s) => s.user_id)).toEqual([ids.amina!.uuid]);
  });

  it('an unknown purpose is 404 CONSENT_PURPOSE_NOT_FOUND; a cursor it did not issue is 422 VALIDATION_ERROR', async () => {
    expectError(await call('GET', `${ADMIN}/lottery/subjects`, root), 404, 'CONSENT_PURPOSE_NOT_FOUND');
    expectError(await call('GET', `${ADMIN}/marketing_email/subjects?cursor=bm90YWN1cnNvcg`, root), 422, 'VALIDATION_ERROR');
    const forged = Buffer.from(JSON.stringify({ v: 1, after: '00000000-0000-4000-8000-000000000000' })).toString('base64url');
    expectError(await call('GET', `${ADMIN}/marketing_email/subjects?cursor=${forged}`, root), 422, 'VALIDATION_ERROR');
  });
});
