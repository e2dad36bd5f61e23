/**
 * FAQ administration (issue 13 section 1): permission `faq.manage`, create, edit, soft delete and
 * restore, reorder, import and export in JSON and CSV, every change audited; and the public
 * routes' surroundings: the feedback rate limit, and no transport encryption demanded of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kysely, PostgresDialect, sql, type KyselyPlugin } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { FaqService } from '../../src/faq/service.js';
import { Vocabulary } from '../../src/faq/vocabulary.js';
import type { Database } from '../../src/platform/db/schema.js';
import type { App } from '../../src/platform/http/app.js';
import { createTestApp, freshPostgresDatabase, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

let t: TestApp;
let adminToken: string;
let customerToken: string;

type AdminFaq = { id: string; question: string; answer: string; category: string; keywords: string; order: number; is_active: boolean; helpful_count: number; unhelpful_count: number };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

function call(app: App, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, token = adminToken) {
  return app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
}

async function create(body: Record<string, unknown>): Promise<AdminFaq> {
  const res = await call(t.app, 'POST', '/api/v1/admin/faqs', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as AdminFaq;
}

async function auditCount(eventType: 'FAQ_CREATED' | 'FAQ_UPDATED' | 'FAQ_DELETED' | 'FAQ_RESTORED' | 'FAQ_REORDERED' | 'FAQ_IMPORTED' | 'FAQ_EXPORTED'): Promise<number> {
  return (await t.s.audit.query({ eventType, limit: 1, offset: 0 })).total;
}

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_FAQ_FEEDBACK_IP: '3/1m' } });
  await seedUser(t.s, 'faq.admin', { roles: ['admin'] });
  await seedUser(t.s, 'faq.customer', { roles: ['customer'] });
  adminToken = (await signIn(t.app, 'faq.admin')).access_token;
  customerToken = (await signIn(t.app, 'faq.customer')).access_token;
});
afterAll(async () => t.close());

describe('FAQ administration', () => {
  it('threat: needs faq.manage: a customer gets 403 PERMISSION_DENIED, no token 401, and nothing is written', async () => {
    expectError(await call(t.app, 'POST', '/api/v1/admin/faqs', { question: 'Sneaky question?', answer: 'x', category: 'general' }, customerToken), 403, 'PERMISSION_DENIED');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/admin/faqs' }), 401, 'TOKEN_MISSING');
    expectError(await call(t.app, 'GET', '/api/v1/admin/faqs/export', undefined, customerToken), 403, 'PERMISSION_DENIED');
    expect((await t.s.faqStore.questions()).includes('Sneaky question?')).toBe(false);
  });

  it('creates, edits, soft-deletes and restores, each audited; keywords are normalised; the public side follows', async () => {
    const before = { created: await auditCount('FAQ_CREATED'), updated: await auditCount('FAQ_UPDATED'), deleted: await auditCount('FAQ_DELETED'), restored: await auditCount('FAQ_RESTORED') };
    const faq = await create({ question: '  How do I add a nominee?  ', answer: 'In the app: Accounts, then Nominees.\nOr at a branch.', category: 'accounts', keywords: ' Nominee, beneficiary ,, NOMINEE ', order: 40 });
    expect(faq).toMatchObject({ question: 'How do I add a nominee?', answer: 'In the app: Accounts, then Nominees.\nOr at a branch.', keywords: 'nominee, beneficiary', order: 40, is_active: true, helpful_count: 0 });
    expect(faq.id).toMatch(UUID);
    const edited = (await call(t.app, 'PATCH', `/api/v1/admin/faqs/${faq.id}`, { answer: 'Accounts, then Nominees, then Add.' })).json() as AdminFaq;
    expect(edited.answer).toBe('Accounts, then Nominees, then Add.');
    const deleted = (await call(t.app, 'DELETE', `/api/v1/admin/faqs/${faq.id}`)).json() as AdminFaq;
    expect(deleted.is_active).toBe(false);
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/faq/${faq.id}` }), 404, 'FAQ_NOT_FOUND');
    expect(((await call(t.app, 'GET', `/api/v1/admin/faqs/${faq.id}`)).json() as AdminFaq).is_active).toBe(false); // administrators still see it
    expect(((await call(t.app, 'POST', `/api/v1/admin/faqs/${faq.id}/restore`)).json() as AdminFaq).is_active).toBe(true);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/faq/${faq.id}` })).statusCode).toBe(200);
    expect({ created: await auditCount('FAQ_CREATED'), updated: await auditCount('FAQ_UPDATED'), deleted: await auditCount('FAQ_DELETED'), restored: await auditCount('FAQ_RESTORED') })
      .toEqual({ created: before.created + 1, updated: before.updated + 1, deleted: before.deleted + 1, restored: before.restored + 1 });
    const [entry] = (await t.s.audit.query({ eventType: 'FAQ_UPDATED', limit: 1, offset: 0 })).entries;
    expect(entry).toMatchObject({ username: 'faq.admin', details: { faq_id: faq.id, fields: ['answer'] } });
  });

  it('refuses bad articles with 422 naming the field: control characters, too long, unknown category, unknown fields, empty patch; unknown ids are 404', async () => {
    for (const [body, field] of [
      [{ question: 'Bell\u0007 question?', answer: 'x', category: 'general' }, 'question'],
      [{ question: 'Tab\tin question?', answer: 'x', category: 'general' }, 'question'],
      [{ question: 'Null in answer?', answer: 'a\u0000b', category: 'general' }, 'answer'],
      [{ question: 'Long answer?', answer: 'x'.repeat(10_001), category: 'general' }, 'answer'],
      [{ question: 'Cat?', answer: 'x', category: 'cards' }, 'category'],
      [{ question: 'Extra?', answer: 'x', category: 'general', helpful_count: 1000 }, 'helpful_count'],
      [{ question: 'Order?', answer: 'x', category: 'general', order: -1 }, 'order'],
    ] as const) {
      const { details } = expectError(await call(t.app, 'POST', '/api/v1/admin/faqs', body), 422, 'VALIDATION_ERROR') as { details: { fields: Array<{ field: string }> } };
      expect(details.fields.map((f) => f.field), JSON.stringify(body)).toContain(field);
    }
    const faq = await create({ question: 'Patch target question?', answer: 'x', category: 'general' });
    expectError(await call(t.app, 'PATCH', `/api/v1/admin/faqs/${faq.id}`, {}), 422, 'VALIDATION_ERROR');
    expectError(await call(t.app, 'GET', `/api/v1/admin/faqs/${UNKNOWN_ID}`), 404, 'FAQ_NOT_FOUND');
    expectError(await call(t.app, 'PATCH', `/api/v1/admin/faqs/${UNKNOWN_ID}`, { answer: 'y' }), 404, 'FAQ_NOT_FOUND');
    expectError(await call(t.app, 'DELETE', `/api/v1/admin/faqs/${UNKNOWN_ID}`), 404, 'FAQ_NOT_FOUND');
    expectError(await call(t.app, 'POST', `/api/v1/admin/faqs/${UNKNOWN_ID}/restore`), 404, 'FAQ_NOT_FOUND');
  });

  it('threat: an integer FAQ article id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming the field, and changes nothing', async () => {
    const faq = await create({ question: 'Integer id admin target?', answer: 'unchanged', category: 'loans', order: 7 });
    const other = await create({ question: 'Integer id admin second?', answer: 'unchanged', category: 'loans', order: 8 });
    const internal = (await t.s.faqStore.byUuid(faq.id, { activeOnly: false }))!.id;
    const audited = (await t.s.audit.query({ limit: 1, offset: 0 })).total;
    for (const [res, location, field] of [
      [await call(t.app, 'GET', `/api/v1/admin/faqs/${internal}`), 'params', 'id'],
      [await call(t.app, 'PATCH', `/api/v1/admin/faqs/${internal}`, { answer: 'changed' }), 'params', 'id'],
      [await call(t.app, 'DELETE', `/api/v1/admin/faqs/${internal}`), 'params', 'id'],
      [await call(t.app, 'POST', `/api/v1/admin/faqs/${internal}/restore`), 'params', 'id'],
      [await call(t.app, 'POST', '/api/v1/admin/faqs/reorder', { category: 'loans', ids: [other.id, internal] }), 'body', 'ids.1'],
      [await call(t.app, 'POST', '/api/v1/admin/faqs/reorder', { category: 'loans', ids: [String(internal)] }), 'body', 'ids.0'],
      [await call(t.app, 'POST', '/api/v1/admin/faqs/import', { faqs: [{ question: 'Fine new row?', answer: 'x', category: 'loans' }, { id: internal, question: faq.question, answer: 'changed', category: 'loans' }] }), 'body', 'faqs.1.id'],
    ] as const) {
      const body = expectError(res, 422, 'VALIDATION_ERROR');
      const details = body.details as { expected: string; fields: Array<{ location: string; field: string; message: string }> };
      expect(details.expected, res.body).toBe('uuid');
      expect(details.fields[0]).toMatchObject({ location, field });
      expect(body.message).toContain('GET /api/v1/admin/faqs');
    }
    const csv = expectError(await call(t.app, 'POST', '/api/v1/admin/faqs/import', { csv: `id,question,answer,category\r\n${internal},${faq.question},changed,loans\r\n` }), 422, 'FAQ_IMPORT_INVALID');
    expect((csv.details as { problems: Array<{ row: number; field: string; message: string }> }).problems).toEqual([{ row: 1, field: 'id', message: expect.stringContaining('uuid') }]);
    expect((await call(t.app, 'GET', `/api/v1/admin/faqs/${faq.id}`)).json()).toMatchObject({ answer: 'unchanged', order: 7, is_active: true });
    expect((await t.s.faqStore.questions()).includes('Fine new row?')).toBe(false);
    expect((await t.s.audit.query({ limit: 1, offset: 0 })).total).toBe(audited);
  });

  it('reorders a category: the listed articles get 10, 20, 30 in that order; an id of another category, unknown or repeated is 422 and changes nothing', async () => {
    const a = await create({ question: 'Reorder loan A?', answer: 'x', category: 'loans', order: 1 });
    const b = await create({ question: 'Reorder loan B?', answer: 'x', category: 'loans', order: 2 });
    const c = await create({ question: 'Reorder loan C?', answer: 'x', category: 'loans', order: 3 });
    const other = await create({ question: 'Reorder fee D?', answer: 'x', category: 'fees', order: 4 });
    const res = await call(t.app, 'POST', '/api/v1/admin/faqs/reorder', { category: 'loans', ids: [c.id, a.id, b.id] });
    expect(res.json()).toEqual({ status: 'success', category: 'loans', reordered: 3 });
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/faq/category/loans?limit=50' })).json() as { faqs: Array<{ id: string; order: number }> };
    const mine = listed.faqs.filter((f) => [a.id, b.id, c.id].includes(f.id));
    expect(mine.map((f) => [f.id, f.order])).toEqual([[c.id, 10], [a.id, 20], [b.id, 30]]);

    const wrong = expectError(await call(t.app, 'POST', '/api/v1/admin/faqs/reorder', { category: 'loans', ids: [a.id, other.id] }), 422, 'FAQ_REORDER_INVALID');
    expect(withoutRequestId(wrong.details)).toEqual({ other_category_ids: [other.id] });
    expect(withoutRequestId((expectError(await call(t.app, 'POST', '/api/v1/admin/faqs/reorder', { category: 'loans', ids: [a.id, UNKNOWN_ID] }), 422, 'FAQ_REORDER_INVALID')).details)).toEqual({ unknown_ids: [UNKNOWN_ID] });
    expect(withoutRequestId((expectError(await call(t.app, 'POST', '/api/v1/admin/faqs/reorder', { category: 'loans', ids: [a.id, a.id] }), 422, 'FAQ_REORDER_INVALID')).details)).toEqual({ repeated_ids: [a.id] });
    expect(((await call(t.app, 'GET', `/api/v1/admin/faqs/${a.id}`)).json() as AdminFaq).order).toBe(20); // unchanged by the refusals
    const [entry] = (await t.s.audit.query({ eventType: 'FAQ_REORDERED', limit: 1, offset: 0 })).entries;
    expect(entry!.details).toMatchObject({ category: 'loans', ids: [c.id, a.id, b.id] });
    // A uuid in capitals names the same article.
    expect((await call(t.app, 'POST', '/api/v1/admin/faqs/reorder', { category: 'loans', ids: [a.id.toUpperCase(), b.id, c.id] })).statusCode).toBe(200);
    expect(((await call(t.app, 'GET', `/api/v1/admin/faqs/${a.id.toUpperCase()}`)).json() as AdminFaq)).toMatchObject({ id: a.id, order: 10 });
  });

  it('imports JSON all or nothing: creates and updates; one bad row or an unknown id names the row and imports nothing', async () => {
    const existing = await create({ question: 'Import target question?', answer: 'old answer', category: 'general' });
    const total = async () => (await t.s.faqStore.questions()).length;
    const n = await total();
    const bad = expectError(await call(t.app, 'POST', '/api/v1/admin/faqs/import', { faqs: [
      { question: 'Imported one?', answer: 'x', category: 'general' },
      { question: 'Imported two?', answer: 'x', category: 'cards' },
    ] }), 422, 'VALIDATION_ERROR');
    expect(JSON.stringify(bad.details)).toContain('faqs.1.category');
    const unknown = expectError(await call(t.app, 'POST', '/api/v1/admin/faqs/import', { faqs: [
      { question: 'Imported three?', answer: 'x', category: 'general' },
      { id: UNKNOWN_ID, question: 'Imported four?', answer: 'x', category: 'general' },
    ] }), 422, 'FAQ_IMPORT_INVALID');
    expect(withoutRequestId(unknown.details)).toEqual({ problems: [{ row: 2, field: 'id', message: `no article has id ${UNKNOWN_ID}` }], problem_count: 1 });
    expect(await total()).toBe(n);

    const res = await call(t.app, 'POST', '/api/v1/admin/faqs/import', { faqs: [
      { question: 'Imported five?', answer: 'x', category: 'general', keywords: 'five', order: 5 },
      { id: existing.id, question: existing.question, answer: 'new answer', category: 'general' },
    ] });
    expect(res.json()).toEqual({ status: 'success', created: 1, updated: 1 });
    expect(await total()).toBe(n + 1);
    expect(((await call(t.app, 'GET', `/api/v1/admin/faqs/${existing.id}`)).json() as AdminFaq).answer).toBe('new answer');
  });

  it('an import row that updates an article changes only the fields it gives (JSON without keywords, CSV with an empty order cell) and is audited with its ids', async () => {
    const kept = await create({ question: 'Partial update target?', answer: 'old', category: 'loans', keywords: 'keep, these', order: 70, is_active: false });
    const res = await call(t.app, 'POST', '/api/v1/admin/faqs/import', { faqs: [{ id: kept.id, question: kept.question, answer: 'new', category: 'loans' }] });
    expect(res.json()).toEqual({ status: 'success', created: 0, updated: 1 });
    expect((await call(t.app, 'GET', `/api/v1/admin/faqs/${kept.id}`)).json()).toMatchObject({ answer: 'new', keywords: 'keep, these', order: 70, is_active: false });
    const csv = `id,question,answer,category,order,is_active\r\n${kept.id},${kept.question},newer,loans,,TRUE\r\n`;
    expect((await call(t.app, 'POST', '/api/v1/admin/faqs/import', { csv })).json()).toEqual({ status: 'success', created: 0, updated: 1 });
    expect((await call(t.app, 'GET', `/api/v1/admin/faqs/${kept.id}`)).json()).toMatchObject({ answer: 'newer', order: 70, is_active: true });
    const entries = (await t.s.audit.query({ eventType: 'FAQ_IMPORTED', limit: 100, offset: 0 })).entries; // one frozen clock: the order of equal times is the database's
    expect(entries.filter((e) => JSON.stringify((e.details as { updated_ids?: string[] }).updated_ids) === JSON.stringify([kept.id])).map((e) => e.details))
      .toEqual(expect.arrayContaining([expect.objectContaining({ format: 'json', created: 0, updated: 1, created_ids: [] }), expect.objectContaining({ format: 'csv', created: 0, updated: 1, created_ids: [] })]));
  });

  it('refuses a question or answer that is blank once trimmed: 422 naming the field, on create, edit and import, nothing written', async () => {
    const { details } = expectError(await call(t.app, 'POST', '/api/v1/admin/faqs', { question: '        ', answer: 'x', category: 'general' }), 422, 'VALIDATION_ERROR') as { details: { fields: Array<{ field: string }> } };
    expect(details.fields.map((f) => f.field)).toEqual(['question']);
    const faq = await create({ question: 'Blank edit target?', answer: 'x', category: 'general' });
    expectError(await call(t.app, 'PATCH', `/api/v1/admin/faqs/${faq.id}`, { answer: '   ' }), 422, 'VALIDATION_ERROR');
    const bad = expectError(await call(t.app, 'POST', '/api/v1/admin/faqs/import', { faqs: [{ question: 'Fine question here?', answer: 'x', category: 'general' }, { question: 'Blank answer row?', answer: ' \n ', category: 'general' }] }), 422, 'FAQ_IMPORT_INVALID');
    expect((bad.details as { problems: unknown[] }).problems).toEqual([{ row: 2, field: 'answer', message: 'must not be blank' }]);
    expect((await t.s.faqStore.questions()).includes('Fine question here?')).toBe(false);
  });

  it('exports CSV that imports back unchanged (quotes, commas, line breaks, a formula-looking cell) and JSON in the import\'s shape', async () => {
    const tricky = await create({ question: '=HYPERLINK("http://evil.example") is this safe?', answer: 'He said "no", then\nleft; -1 is not a fee, @all', category: 'disputes', keywords: 'formula, csv' });
    const quoted = await create({ question: "'=SUM(A1) typed with its quote?", answer: "'+ a quote first", category: 'disputes' });
    const csvRes = await call(t.app, 'GET', '/api/v1/admin/faqs/export?format=csv');
    expect(csvRes.statusCode).toBe(200);
    expect(csvRes.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csvRes.headers['content-disposition']).toBe('attachment; filename="faqs.csv"');
    expect(csvRes.body.split('\r\n')[0]).toBe('id,question,answer,category,keywords,order,is_active,helpful_count,unhelpful_count');
    expect(csvRes.body.split('\r\n').find((line) => line.startsWith(`${quoted.id},`))).toBeDefined(); // the id column: the article's uuid
    expect(csvRes.body).toContain(`"'=HYPERLINK(""http://evil.example"") is this safe?"`);

    await call(t.app, 'PATCH', `/api/v1/admin/faqs/${tricky.id}`, { answer: 'changed meanwhile' });
    const back = await call(t.app, 'POST', '/api/v1/admin/faqs/import', { csv: csvRes.body });
    expect(back.statusCode, back.body).toBe(200);
    expect((back.json() as { created: number }).created).toBe(0);
    const restored = (await call(t.app, 'GET', `/api/v1/admin/faqs/${tricky.id}`)).json() as AdminFaq;
    expect(restored).toMatchObject({ question: tricky.question, answer: tricky.answer, keywords: 'formula, csv' });
    expect((await call(t.app, 'GET', `/api/v1/admin/faqs/${quoted.id}`)).json()).toMatchObject({ question: quoted.question, answer: quoted.answer });

    const json = (await call(t.app, 'GET', '/api/v1/admin/faqs/export')).json() as { faqs: AdminFaq[] };
    expect(json.faqs.find((f) => f.id === tricky.id)).toMatchObject({ question: tricky.question, is_active: true });
    expect(await auditCount('FAQ_EXPORTED')).toBeGreaterThanOrEqual(2);
  });

  it('refuses a broken CSV with 422 FAQ_IMPORT_INVALID naming the rows, imports nothing', async () => {
    const n = (await t.s.faqStore.questions()).length;
    for (const [csv, problem] of [
      ['question,answer\r\nQ?,A\r\n', { row: 0, field: 'category', message: 'column is missing' }],
      ['question,answer,category,colour\r\nQ?,A,general,red\r\n', { row: 0, field: 'colour', message: 'is not a column of the FAQ' }],
      ['question,answer,category\r\n"Unclosed?,A,general\r\n', { row: 1, field: '(csv)', message: 'a quoted field is not closed' }],
      ['question,answer,category\r\nShort row?,A\r\n', { row: 1, field: '(csv)', message: 'has 2 fields, the header 3' }],
      ['question,answer,category\r\nGood row here?,A,general\r\nBad row here?,A,cards\r\n', { row: 2, field: 'category' }],
      ['question,answer,category\r\nGood row here?,A,general\r\n\r\nBad row here?,A,cards\r\n', { row: 3, field: 'category' }], // counted as in the file, blank line included
    ] as const) {
      const body = expectError(await call(t.app, 'POST', '/api/v1/admin/faqs/import', { csv }), 422, 'FAQ_IMPORT_INVALID');
      expect((body.details as { problems: unknown[] }).problems, csv).toContainEqual(expect.objectContaining(problem));
    }
    expect((await t.s.faqStore.questions()).length).toBe(n);
  });
});

describe('FAQ public routes, surroundings', () => {
  it('need no transport encryption even where it is enforced (public help content, and MCP), while administration still does', async () => {
    const enforced = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1' } });
    try {
      const faq = await enforced.s.faqAdmin.create({ actor: { uuid: null, username: 'test' }, context: {} }, { question: 'Encryption exemption question?', answer: 'x', category: 'general' });
      const search = await enforced.app.inject({ method: 'POST', url: '/api/v1/faq/search', payload: { query: 'exemption' } });
      expect(search.statusCode, search.body).toBe(200);
      expect(search.headers['x-encrypted']).toBeUndefined();
      expect((await enforced.app.inject({ method: 'POST', url: `/api/v1/faq/${faq.uuid}/helpful` })).statusCode).toBe(200);
      expectError(await enforced.app.inject({ method: 'POST', url: '/mcp', payload: {} }), 401, 'TOKEN_MISSING'); // reaches authentication: not refused for want of encryption
      expectError(await enforced.app.inject({ method: 'POST', url: '/api/v1/admin/faqs', payload: { question: 'Plain write?', answer: 'x', category: 'general' } }), 422, 'ENCRYPTION_REQUIRED');
    } finally {
      await enforced.close();
    }
  });

  it('threat: ballot stuffing: feedback is rate limited per client network: the 4th vote in a minute is 429 RATE_LIMITED with Retry-After', async () => {
    const ids = (await t.s.faqAdmin.import({ actor: { uuid: null, username: 'test' }, context: {} }, [1, 2, 3, 4].map((i) => ({ question: `Rate limited article ${i}?`, answer: 'x', category: 'general' as const })), 'json'));
    expect(ids.created).toBe(4);
    const rows = (await t.s.faqStore.list({ category: 'general', limit: 200, offset: 0 })).faqs.filter((f) => f.question.startsWith('Rate limited article'));
    const statuses: number[] = [];
    for (const row of rows) statuses.push((await t.app.inject({ method: 'POST', url: `/api/v1/faq/${row.uuid}/helpful`, remoteAddress: '203.0.113.77' })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const last = await t.app.inject({ method: 'POST', url: `/api/v1/faq/${rows[3]!.uuid}/helpful`, remoteAddress: '203.0.113.77' });
    expectError(last, 429, 'RATE_LIMITED');
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
    expect((await t.s.faqStore.byUuid(rows[3]!.uuid, { activeOnly: true }))!.helpful_count).toBe(0);
  });
});

describe('FAQ search on PostgreSQL', () => {
  it('runs on a pool whose sessions never plan a sequential scan (no transaction per search), while the main pool plans as usual', async () => {
    const scans = t.s.database.indexScans!;
    const show = async (db: typeof scans) => (await sql<{ enable_seqscan: string }>`SHOW enable_seqscan`.execute(db)).rows[0]!.enable_seqscan;
    expect(await show(scans)).toBe('off');
    expect(await show(t.s.db)).toBe('on');
    // And the service searches through it, not the main pool: every statement of a search, the
    // typo fallback's included, counted on each.
    const counter = () => {
      const seen = { n: 0 };
      const plugin: KyselyPlugin = { transformQuery: (a) => (seen.n++, a.node), transformResult: async (a) => a.result };
      return { seen, plugin };
    };
    const main = counter();
    const pool = counter();
    const log = pino({ level: 'silent' });
    const db = t.s.db.withPlugin(main.plugin);
    const faq = new FaqService({ db, indexScans: scans.withPlugin(pool.plugin), vocabulary: new Vocabulary({ db, clock: t.clock, bus: t.s.database.bus, log }), store: t.s.faqStore, log });
    expect((await faq.search('blok my crad', { limit: 5 })).total).toBeGreaterThan(0);
    expect(pool.seen.n).toBeGreaterThanOrEqual(3); // the exact query, the vocabulary, the corrected query
    expect(main.seen.n).toBe(0);
  });

  it('a pooler refusing the connect option (here: a server that does not know the parameter) does not break search: it falls back to a transaction per search, with one warning', async () => {
    const url = new URL(await freshPostgresDatabase());
    url.searchParams.set('options', '-c strongroom_no_such_setting=1');
    const refusing = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }) });
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    try {
      const faq = new FaqService({ db: t.s.db, indexScans: refusing, vocabulary: new Vocabulary({ db: t.s.db, clock: t.clock, bus: t.s.database.bus, log }), store: t.s.faqStore, log });
      const first = await faq.search('lost my card', { limit: 5 });
      expect(first.total).toBeGreaterThan(0);
      expect((await faq.search('block card', { limit: 5 })).total).toBeGreaterThan(0);
      expect(warnings.filter((w) => w.includes('FAQ search pool'))).toHaveLength(1);
    } finally {
      await refusing.destroy();
    }
  });
});
