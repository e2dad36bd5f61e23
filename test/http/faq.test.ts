/**
 * The FAQ's search and feedback (issue 13 sections 1 to 3), on PGlite and on PostgreSQL alike:
 * the starter set loaded, then what a customer types. The done-when: "lost my card" puts the
 * card-blocking article first, and an administrator's edit is what the next search finds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { starterArticles } from '../../src/faq/starter.js';
import type { FaqInputItem } from '../../src/faq/admin.js';
import type { App } from '../../src/platform/http/app.js';
import { sql } from 'kysely';
import { Vocabulary } from '../../src/faq/vocabulary.js';
import { createTestApp, createTwoNodes, type TestApp } from '../harness/app.js';
import { signal } from '../harness/comparisons.js';
import { bearer, botnetAddress, expectError, seedUser, signIn } from '../harness/fixtures.js';

let t: TestApp;
const SYSTEM = { actor: { uuid: null, username: 'test' }, context: {} };

type Hit = { id: string; question: string; answer: string; snippet: string; category: string; helpful_count: number; unhelpful_count: number };
type Search = { query: string; category_filter: string | null; total_matches: number; results: Hit[]; match: 'exact' | 'fuzzy'; did_you_mean: string | null };

function search(app: App, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/api/v1/faq/search', payload: body });
}

async function found(body: Record<string, unknown>): Promise<Search> {
  const res = await search(t.app, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Search;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** Creates an article; its public id (uuid). */
async function add(item: FaqInputItem): Promise<string> {
  return (await t.s.faqAdmin.create(SYSTEM, item)).uuid;
}

/** The internal integer id of an article (the votes' key), which no route takes or gives. */
async function internalId(uuid: string): Promise<number> {
  return (await t.s.faqStore.byUuid(uuid, { activeOnly: false }))!.id;
}

function vote(id: string | number, kind: 'helpful' | 'unhelpful', opts: { remoteAddress?: string; headers?: Record<string, string> } = {}) {
  return t.app.inject({ method: 'POST', url: `/api/v1/faq/${id}/${kind}`, remoteAddress: opts.remoteAddress, headers: opts.headers });
}

beforeAll(async () => {
  t = await createTestApp();
  const seeded = await t.s.faqAdmin.seed(SYSTEM, starterArticles());
  expect(seeded.created).toBeGreaterThanOrEqual(100);
});
afterAll(async () => t.close());

describe('FAQ search', () => {
  it('done-when: "lost my card" puts the card-blocking article first', async () => {
    const r = await found({ query: 'lost my card' });
    expect(r.match).toBe('exact');
    expect(r.results[0]!.category).toBe('security');
    expect(r.results[0]!.question).toMatch(/lost my card.*block/i);
    expect(r.results[0]!.snippet).toContain('<mark>');
    expect(r).toMatchObject({ query: 'lost my card', category_filter: null, did_you_mean: null });
  });

  it('stems: "transfers" and "blocking" find articles that say "transfer" and "block"', async () => {
    const transfers = await found({ query: 'transfers limits' });
    expect(transfers.results[0]!.question).toMatch(/transfer limit/i);
    const blocking = await found({ query: 'blocking stolen cards' });
    expect(blocking.results[0]!.question).toMatch(/lost my card.*block/i);
  });

  it('tolerates typos: unknown words are corrected to the nearest word the articles use, and says so', async () => {
    const r = await found({ query: 'trasnfer limt' });
    expect(r.match).toBe('fuzzy');
    expect(r.did_you_mean).toBe('transfer limit');
    expect(r.results[0]!.question).toMatch(/transfer limit/i);
    const card = await found({ query: 'blok my crad' });
    expect(card.did_you_mean).toBe('block my card');
    expect(card.results[0]!.question).toMatch(/lost my card.*block/i);
  });

  it('ranks a question match above a keyword match above an answer-only match, whatever the order says', async () => {
    const answerOnly = await add({ question: 'Where can I read about ranking tests one?', answer: 'The word zebrafinch appears here, zebrafinch, and zebrafinch again, in the answer only.', category: 'general', order: 1 });
    const keyword = await add({ question: 'Where can I read about ranking tests two?', answer: 'Nothing special in this answer.', category: 'general', keywords: 'zebrafinch', order: 2 });
    const question = await add({ question: 'What is a zebrafinch account?', answer: 'Nothing special here either.', category: 'general', order: 3 });
    const r = await found({ query: 'zebrafinch' });
    expect(r.results.map((h) => h.id)).toEqual([question, keyword, answerOnly]);
  });

  it('breaks ties by the display order, then the id', async () => {
    const late = await add({ question: 'How does the quetzalbox tie work?', answer: 'Same words.', category: 'fees', order: 50 });
    const early = await add({ question: 'How does the quetzalbox tie work?', answer: 'Same words.', category: 'fees', order: 5 });
    const r = await found({ query: 'quetzalbox tie' });
    expect(r.results.map((h) => h.id)).toEqual([early, late]);
  });

  it('filters by category', async () => {
    const r = await found({ query: 'limit', category: 'wallets' });
    expect(r.total_matches).toBeGreaterThan(0);
    expect(r.category_filter).toBe('wallets');
    expect(new Set(r.results.map((h) => h.category))).toEqual(new Set(['wallets']));
    const all = await found({ query: 'limit' });
    expect(all.total_matches).toBeGreaterThan(r.total_matches);
  });

  it('speaks web-search syntax: "quoted phrases", or, -exclusions', async () => {
    const phrase = await found({ query: '"standing order"' });
    expect(phrase.total_matches).toBeGreaterThan(0);
    for (const h of phrase.results) expect(`${h.question} ${h.answer}`.toLowerCase()).toMatch(/standing order/);
    const without = await found({ query: 'card -atm', limit: 50 });
    for (const h of without.results) expect(`${h.question} ${h.answer}`.toLowerCase()).not.toMatch(/\batms?\b/);
  });

  it('keeps what the reader excluded when it corrects typos: "blok card -atm" is "block card -atm", never an ATM article', async () => {
    const r = await found({ query: 'blok card -atm', limit: 50 });
    expect(r.match).toBe('fuzzy');
    expect(r.did_you_mean).toBe('block card -atm');
    expect(r.total_matches).toBeGreaterThan(0);
    for (const h of r.results) expect(`${h.question} ${h.answer}`.toLowerCase()).not.toMatch(/\batms?\b/);
    const any = await found({ query: 'zzyzx crad -atm', limit: 50 }); // no article has all: any corrected word, still no ATM
    for (const h of any.results) expect(`${h.question} ${h.answer}`.toLowerCase()).not.toMatch(/\batms?\b/);
  });

  it('limit: 10 by default, up to 50; total_matches counts them all', async () => {
    const r = await found({ query: 'account' });
    expect(r.results).toHaveLength(10);
    expect(r.total_matches).toBeGreaterThan(10);
    const max = await found({ query: 'account', limit: 50 });
    expect(max.results).toHaveLength(Math.min(50, r.total_matches));
    expect((await found({ query: 'account', limit: 3 })).results.map((h) => h.id)).toEqual(r.results.slice(0, 3).map((h) => h.id));
  });

  it('refuses a bad search with 422 VALIDATION_ERROR naming the field: limit over 50 or under 1, an empty or blank or over-long query, an unknown category, wrong types, extra fields', async () => {
    for (const [body, field] of [
      [{ query: 'card', limit: 51 }, 'limit'], [{ query: 'card', limit: 0 }, 'limit'], [{ query: 'card', limit: '5' }, 'limit'],
      [{ query: '' }, 'query'], [{ query: '   ' }, 'query'], [{ query: 'x'.repeat(201) }, 'query'], [{ query: 42 }, 'query'], [{}, 'query'],
      [{ query: 'card\u0000' }, 'query'], [{ query: 'card\u001b[31m' }, 'query'],
      [{ query: 'card', category: 'cards' }, 'category'], [{ query: 'card', sort: 'new' }, 'sort'],
    ] as const) {
      const { details } = expectError(await search(t.app, body), 422, 'VALIDATION_ERROR') as { details: { fields: Array<{ field: string }> } };
      expect(details.fields.map((f) => f.field), JSON.stringify(body)).toContain(field);
    }
  });

  it('threat: hostile queries (SQL, tsquery operators, unbalanced quotes) are only words: 200, never a 500', async () => {
    for (const query of ["'; DROP TABLE faqs; --", 'card & !pin | (atm', '"unclosed', '-', 'or or or', '!!!', ':*', '\\', '<script>alert(1)</script>', 'ña ñu 中文 🚀', 'a'.repeat(200), `card${'\ufb06'.repeat(196)}`, 'card\tlimit\nnow', '-card -limit']) {
      const res = await search(t.app, { query });
      expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
    }
    expect((await found({ query: 'card' })).total_matches).toBeGreaterThan(0); // the table is still there
  });

  it('threat: stored markup: the snippet has no markup of its own (tags dropped, the rest HTML-escaped), only the <mark> elements it adds', async () => {
    await add({ question: 'Is the okapipay widget safe to embed?', answer: 'Yes. <script>alert("x")</script> & <b>okapipay</b> "quotes" <img src=x onerror=alert(1)>', category: 'technical' });
    const [hit] = (await found({ query: 'okapipay' })).results;
    expect(hit!.snippet).toContain('<mark>okapipay</mark>');
    expect(hit!.snippet).toContain('alert(&quot;x&quot;)');
    expect(hit!.snippet).toContain('&amp;');
    expect(hit!.snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
    expect(hit!.answer).toContain('<script>'); // the article itself is the administrator's text, as written
  });

  it('done-when: an administrator\'s edit is what the next search finds, typo fallback included; a soft-deleted article is gone from every public route', async () => {
    const id = await add({ question: 'How do I order a new chequebook?', answer: 'Ask in the app.', category: 'accounts' });
    expect((await found({ query: 'kingfisherform' })).total_matches).toBe(0);
    await t.s.faqAdmin.update(SYSTEM, id, { answer: 'Fill in the kingfisherform in the app, under Accounts.' });
    expect((await found({ query: 'kingfisherform' })).results[0]!.id).toBe(id);
    const typo = await found({ query: 'kingfisherfrom' });
    expect(typo.did_you_mean).toBe('kingfisherform');
    expect(typo.results[0]!.id).toBe(id);

    await t.s.faqAdmin.update(SYSTEM, id, { is_active: false });
    expect((await found({ query: 'kingfisherform' })).total_matches).toBe(0);
    expect((await found({ query: 'kingfisherfrom' })).total_matches).toBe(0);
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/faq/${id}` }), 404, 'FAQ_NOT_FOUND');
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/faq/category/accounts?limit=50' })).json() as { faqs: Array<{ id: string }> };
    expect(listed.faqs.map((f) => f.id)).not.toContain(id);
    expectError(await vote(id, 'helpful'), 404, 'FAQ_NOT_FOUND');

    await t.s.faqAdmin.update(SYSTEM, id, { is_active: true });
    expect((await found({ query: 'kingfisherform' })).results[0]!.id).toBe(id);
  });
});

describe('FAQ reading', () => {
  it('lists the ten categories in SPEC\'s order with labels and active article counts', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/faq/categories' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { categories: Array<{ name: string; label: string; article_count: number }>; total_articles: number };
    expect(body.categories.map((c) => c.name)).toEqual(['general', 'accounts', 'transactions', 'security', 'disputes', 'fees', 'transfers', 'wallets', 'loans', 'technical']);
    for (const c of body.categories) expect(c.article_count, c.name).toBeGreaterThanOrEqual(10);
    expect(body.total_articles).toBe(body.categories.reduce((n, c) => n + c.article_count, 0));
    expect(body.categories.find((c) => c.name === 'fees')!.label).toBe('Fees and charges');
  });

  it('gives a category\'s articles by display order, 10 by default, paged by offset; an unknown category is 422', async () => {
    const first = (await t.app.inject({ method: 'GET', url: '/api/v1/faq/category/security' })).json() as { category: string; total_in_category: number; faqs: Array<{ id: string; order: number; question: string }> };
    expect(first.faqs).toHaveLength(10);
    expect(first.total_in_category).toBeGreaterThanOrEqual(11);
    expect(first.faqs[0]!.question).toMatch(/lost my card/i);
    const orders = first.faqs.map((f) => f.order);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
    const next = (await t.app.inject({ method: 'GET', url: '/api/v1/faq/category/security?offset=10' })).json() as { faqs: Array<{ id: string }> };
    for (const f of [...first.faqs, ...next.faqs]) expect(f.id).toMatch(UUID);
    expect(next.faqs.map((f) => f.id)).not.toContain(first.faqs[0]!.id);
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/faq/category/cards' }), 422, 'VALIDATION_ERROR');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/faq/category/security?limit=51' }), 422, 'VALIDATION_ERROR');
  });

  it('gives one article by its uuid with SPEC\'s fields; an unknown uuid is 404 FAQ_NOT_FOUND, a non-uuid 422', async () => {
    const [hit] = (await found({ query: 'lost my card' })).results;
    expect(hit!.id).toMatch(UUID);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/faq/${hit!.id}` });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json() as object).sort()).toEqual(['answer', 'category', 'created_on', 'helpful_count', 'id', 'keywords', 'order', 'question', 'unhelpful_count', 'updated_on']);
    expect((res.json() as { id: string }).id).toBe(hit!.id);
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/faq/${UNKNOWN_ID}` }), 404, 'FAQ_NOT_FOUND');
    const bad = expectError(await t.app.inject({ method: 'GET', url: '/api/v1/faq/abc' }), 422, 'VALIDATION_ERROR');
    expect((bad.details as { fields: unknown }).fields).toEqual([expect.objectContaining({ location: 'params', field: 'faq_id', format: 'uuid' })]);
  });

  it('threat: an integer FAQ article id (the internal one earlier versions exposed) answers 422 VALIDATION_ERROR naming the field, and changes nothing', async () => {
    const id = await add({ question: 'Integer id probe article?', answer: 'Text.', category: 'general' });
    const internal = await internalId(id);
    const votesBefore = (await t.s.db.selectFrom('faq_votes').select('faq_id').execute()).length;
    for (const res of [
      await t.app.inject({ method: 'GET', url: `/api/v1/faq/${internal}` }),
      await vote(internal, 'helpful', { remoteAddress: '198.51.100.31' }),
      await vote(internal, 'unhelpful', { remoteAddress: '198.51.100.31' }),
    ]) {
      const body = expectError(res, 422, 'VALIDATION_ERROR');
      const details = body.details as { expected: string; fields: Array<{ location: string; field: string; message: string }> };
      expect(details.expected).toBe('uuid');
      expect(details.fields[0]).toMatchObject({ location: 'params', field: 'faq_id' });
      expect(details.fields[0]!.message).toContain('uuid');
      expect(body.message).toContain('GET /api/v1/admin/faqs');
    }
    expect(await t.s.faqStore.byUuid(id, { activeOnly: true })).toMatchObject({ helpful_count: 0, unhelpful_count: 0 });
    expect((await t.s.db.selectFrom('faq_votes').select('faq_id').execute()).length).toBe(votesBefore);
  });

  it('answers GET /faq/search?q= with the search (never as article "search"), the same results as POST; its errors name the parameter', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/faq/search?q=lost%20my%20card&limit=3' });
    expect(res.statusCode, res.body).toBe(200);
    const viaGet = res.json() as Search;
    const viaPost = await found({ query: 'lost my card', limit: 3 });
    expect(viaGet).toEqual(viaPost);
    expect(viaGet.results[0]!.question).toMatch(/lost my card.*block/i);
    const card = (await t.app.inject({ method: 'GET', url: '/api/v1/faq/search?q=card&category=security' })).json() as Search;
    expect(card.category_filter).toBe('security');
    expect(card.total_matches).toBeGreaterThan(0);
    const missing = expectError(await t.app.inject({ method: 'GET', url: '/api/v1/faq/search' }), 422, 'VALIDATION_ERROR');
    expect(missing.message).toContain('query parameter "q" is required');
    const tooMany = expectError(await t.app.inject({ method: 'GET', url: '/api/v1/faq/search?q=card&limit=51' }), 422, 'VALIDATION_ERROR');
    expect((tooMany.details as { fields: unknown }).fields).toEqual([expect.objectContaining({ location: 'querystring', field: 'limit', constraint: 'maximum', limit: 50 })]);
  });
});

describe('FAQ feedback', () => {
  it('counts one vote per voter: again changes nothing; a signed-in user may change theirs, an anonymous site\'s first vote stands', async () => {
    const id = await add({ question: 'Feedback counting article one?', answer: 'Text.', category: 'general' });
    const from = '203.0.113.10';
    expect((await vote(id, 'helpful', { remoteAddress: from })).json()).toMatchObject({ id, helpful_count: 1, unhelpful_count: 0, your_vote: 'helpful', counted: true });
    expect((await vote(id, 'helpful', { remoteAddress: from })).json()).toMatchObject({ helpful_count: 1, counted: false });
    // A neighbour behind the same address (a carrier's NAT) cannot flip it.
    expect((await vote(id, 'unhelpful', { remoteAddress: from })).json()).toMatchObject({ helpful_count: 1, unhelpful_count: 0, counted: false });
    await seedUser(t.s, 'faq.voter');
    const user = await signIn(t.app, 'faq.voter');
    expect((await vote(id, 'helpful', { remoteAddress: from, headers: bearer(user.access_token) })).json()).toMatchObject({ helpful_count: 2, unhelpful_count: 0, counted: true });
    expect((await vote(id, 'unhelpful', { remoteAddress: from, headers: bearer(user.access_token) })).json()).toMatchObject({ helpful_count: 1, unhelpful_count: 1, counted: true });
    const article = (await t.app.inject({ method: 'GET', url: `/api/v1/faq/${id}` })).json() as { helpful_count: number; unhelpful_count: number };
    expect(article).toMatchObject({ helpful_count: 1, unhelpful_count: 1 });
  });

  it('threat: ballot stuffing from an IPv6 /48: every address of one site is one anonymous voter', async () => {
    const id = await add({ question: 'Feedback from one IPv6 site?', answer: 'Text.', category: 'general' });
    const results = await Promise.all(['2001:db8:40:1::1', '2001:db8:40:2::2', '2001:db8:40:ffff::3'].map((remoteAddress) => vote(id, 'helpful', { remoteAddress })));
    expect(results.filter((r) => (r.json() as { counted: boolean }).counted)).toHaveLength(1);
    expect((await vote(id, 'helpful', { remoteAddress: '2001:db8:41::1' })).json()).toMatchObject({ counted: true, helpful_count: 2 });
  });

  it('threat: a forged bearer token is refused (401), not counted as an anonymous vote', async () => {
    const id = await add({ question: 'Feedback counting article two?', answer: 'Text.', category: 'general' });
    expectError(await vote(id, 'helpful', { headers: bearer('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl') }), 401, 'TOKEN_INVALID');
    expect((await t.s.faqStore.byUuid(id, { activeOnly: true }))!.helpful_count).toBe(0);
  });

  it('an unknown article is 404 FAQ_NOT_FOUND and writes no vote', async () => {
    const before = (await t.s.db.selectFrom('faq_votes').select('faq_id').execute()).length;
    expectError(await vote(UNKNOWN_ID, 'helpful'), 404, 'FAQ_NOT_FOUND');
    expect((await t.s.db.selectFrom('faq_votes').select('faq_id').execute()).length).toBe(before);
  });

  it('concurrency: 50 parallel votes from 50 voters count exactly 50; 50 parallel votes of one voter count exactly one', async () => {
    const id = await add({ question: 'Feedback burst article?', answer: 'Text.', category: 'general' });
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => vote(id, 'helpful', { remoteAddress: botnetAddress(i) })));
    expect(many.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    expect(many.filter((r) => (r.json() as { counted: boolean }).counted)).toHaveLength(50);
    const one = await Promise.all(Array.from({ length: 50 }, (_, i) => vote(id, i % 2 === 0 ? 'unhelpful' : 'unhelpful', { remoteAddress: '192.0.2.99' })));
    expect(one.filter((r) => (r.json() as { counted: boolean }).counted)).toHaveLength(1);
    const row = (await t.s.faqStore.byUuid(id, { activeOnly: true }))!;
    expect(row).toMatchObject({ helpful_count: 50, unhelpful_count: 1 });
    const votes = await t.s.db.selectFrom('faq_votes').select(['vote']).where('faq_id', '=', row.id).execute();
    expect(votes.filter((v) => v.vote === 'helpful')).toHaveLength(50);
    expect(votes.filter((v) => v.vote === 'unhelpful')).toHaveLength(1);
  });

  it('concurrency: signed-in voters flipping between the votes in parallel leave the counters matching the votes table', async () => {
    const id = await add({ question: 'Feedback flip article?', answer: 'Text.', category: 'general' });
    const tokens: string[] = [];
    for (const i of [1, 2, 3, 4]) {
      await seedUser(t.s, `faq.flipper${i}`);
      tokens.push((await signIn(t.app, `faq.flipper${i}`)).access_token);
    }
    await Promise.all(Array.from({ length: 40 }, (_, i) => vote(id, i % 2 === 0 ? 'helpful' : 'unhelpful', { headers: bearer(tokens[i % 4]!) })));
    const row = (await t.s.faqStore.byUuid(id, { activeOnly: true }))!;
    const votes = await t.s.db.selectFrom('faq_votes').select(['vote']).where('faq_id', '=', row.id).execute();
    expect(votes).toHaveLength(4);
    expect(row.helpful_count).toBe(votes.filter((v) => v.vote === 'helpful').length);
    expect(row.unhelpful_count).toBe(votes.filter((v) => v.vote === 'unhelpful').length);
  });
});

describe('the typo fallback\'s vocabulary, held by each node', () => {
  it('offers exactly the words the database\'s own Levenshtein and pg_trgm would (the rule of the SQL it replaced)', async () => {
    const vocabulary = new Vocabulary({ db: t.s.db, clock: t.clock, bus: t.s.database.bus, log: t.s.log });
    for (const input of ['crad', 'blok', 'trasnfer', 'statment', 'pasword', 'acount', 'recieve', 'overdarft', 'morgage', 'xyz', 'qqqqqqqq', 'atm', 'lmit']) {
      const { rows } = await sql<{ word: string }>`
        SELECT v.word FROM faq_words v
        WHERE v.word = ${input}
           OR (left(v.word, 1) = left(${input}, 1)
               AND length(v.word) BETWEEN length(${input}::text) - ${input.length <= 3 ? 1 : input.length <= 7 ? 2 : 3}::int AND length(${input}::text) + ${input.length <= 3 ? 1 : input.length <= 7 ? 2 : 3}::int
               AND levenshtein(v.word, ${input}) <= ${input.length <= 3 ? 1 : input.length <= 7 ? 2 : 3}::int)
           OR similarity(v.word, ${input}) >= 0.3`.execute(t.s.db);
      const mine = (await vocabulary.candidates(input)).map((w) => w.word).sort();
      expect(mine, input).toEqual(rows.map((r) => r.word).sort());
    }
  });

  it('a word added on one node is corrected to on another at once (the change crosses by the bus, after it commits)', async () => {
    const { a, b, close } = await createTwoNodes();
    try {
      await a.s.faqAdmin.create(SYSTEM, { question: 'How do I renew my card?', answer: 'In the app, under Cards.', category: 'accounts' });
      const onB = async (query: string) => (await b.app.inject({ method: 'POST', url: '/api/v1/faq/search', payload: { query } })).json() as Search;
      expect((await onB('renwe card')).did_you_mean).toBe('renew card'); // b has read its vocabulary now
      const heard = signal();
      b.s.database.bus.subscribe((e) => {
        if (e.type === 'faq.changed') heard.fire();
      });
      const id = (await a.s.faqAdmin.create(SYSTEM, { question: 'What is a zebrapass?', answer: 'A travel card for the zebrapass network.', category: 'accounts' })).uuid;
      await heard.promise; // (on PostgreSQL the notice crosses by NOTIFY)
      const typo = await onB('zebrapas');
      expect(typo.did_you_mean).toBe('zebrapass');
      expect(typo.results[0]!.id).toBe(id);
    } finally {
      await close();
    }
  });
});

