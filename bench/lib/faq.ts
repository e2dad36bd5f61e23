/**
 * The FAQ search row (issue 13 section 5): 5,000 active articles in the bench's PostgreSQL, the
 * service's search (src/faq/search.ts, the SQL the route runs) and a naive `ILIKE` scan of the
 * same rows, one query at a time, in turns, over the same mix of what customers type. Latency is
 * the query's own (no HTTP): the target is about the search, not the web stack.
 */
import pino from 'pino';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/database.js';
import { FAQ_CATEGORIES } from '../../src/faq/categories.js';
import { normaliseKeywords } from '../../src/faq/store.js';
import { refreshVocabulary, searchFaqs } from '../../src/faq/search.js';
import { starterArticles } from '../../src/faq/starter.js';
import { Vocabulary } from '../../src/faq/vocabulary.js';
import { systemClock } from '../../src/platform/clock.js';
import { closedLoop, type Rate } from './load.js';

export const FAQ_ARTICLES = 5000;

/** What customers type: plain questions, single words, phrases, and typos (the fuzzy path). */
export const FAQ_QUERIES = [
  'lost my card', 'transfer limit', 'how do I open an account', 'statement', 'block card', 'loan repayment',
  'wallet top up', 'atm did not give cash', 'change my phone number', 'reset password', 'international transfer fees',
  'dispute a charge', '"standing order"', 'one-time code not received', 'overdraft interest', 'agent cash out',
  'trasnfer limt', 'blok my crad', 'statment', 'pasword reset',
];

/** A deterministic pseudo-random sequence (the same articles every run). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * `n` articles made from the starter set: each takes a starter article of a category and mixes
 * in sentences of two others of the same category, so that words recur as in a real help centre
 * and the rank has real work to do.
 */
export function benchArticles(n: number): Array<{ question: string; answer: string; category: string; keywords: string; order: number }> {
  const rnd = random(13);
  const starter = starterArticles();
  const byCategory = new Map(FAQ_CATEGORIES.map((c) => [c, starter.filter((a) => a.category === c)]));
  const sentences = (text: string): string[] => text.split(/(?<=[.!?])\s+/).filter(Boolean);
  return Array.from({ length: n }, (_, i) => {
    const base = starter[i % starter.length]!;
    const peers = byCategory.get(base.category)!;
    const mix = [0, 1].map(() => peers[Math.floor(rnd() * peers.length)]!);
    const answer = [...sentences(base.answer), ...mix.flatMap((p) => sentences(p.answer).filter(() => rnd() < 0.3))].join(' ');
    return { question: i < starter.length ? base.question : `${base.question} (${Math.floor(i / starter.length)})`, answer, category: base.category, keywords: normaliseKeywords(base.keywords ?? ''), order: (base.order ?? 0) + (i % 7) };
  });
}

/** The naive scan a first version would write: every word somewhere in the text, case-insensitive, no index. */
async function ilikeSearch(db: DatabaseHandle['db'], query: string): Promise<number> {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const pattern = (w: string) => `%${w.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const conditions = words.map((w) => sql`(question ILIKE ${pattern(w)} OR keywords ILIKE ${pattern(w)} OR answer ILIKE ${pattern(w)})`);
  const where = conditions.length === 0 ? sql`true` : sql.join(conditions, sql` AND `);
  const { rows } = await sql<{ id: number; total: string }>`
    SELECT id, question, answer, category, helpful_count, unhelpful_count, count(*) OVER () AS total
    FROM faqs WHERE is_active AND ${where} ORDER BY "order", id LIMIT 10`.execute(db);
  return rows.length;
}

export interface FaqBench {
  search: Rate;
  ilike: Rate;
  articles: number;
  /** How many of the query mix found something: the service's search, and the scan. */
  found: { search: number; ilike: number };
}

/** Loads the articles into `url` (a database of its own), then measures both, in `rounds` turns of `seconds`. */
export async function faqSearchBench(url: string, opts: { rounds: number; seconds: number }): Promise<FaqBench> {
  const handle = await openDatabase({ kind: 'postgres', url, poolSize: 4 }, pino({ level: 'warn' }));
  try {
    await handle.migrate();
    const now = new Date();
    const articles = benchArticles(FAQ_ARTICLES);
    for (let i = 0; i < articles.length; i += 500) {
      await handle.db.insertInto('faqs').values(articles.slice(i, i + 500).map((a) => ({ ...a, created_on: now, updated_on: now }))).execute();
    }
    await refreshVocabulary(handle.db);
    await sql`ANALYZE faqs`.execute(handle.db);
    // The service's node-wide copy of the vocabulary (src/faq/vocabulary.ts), as a server holds it.
    const vocabulary = new Vocabulary({ db: handle.db, clock: systemClock, bus: handle.bus, log: pino({ level: 'warn' }) });
    const found = { search: 0, ilike: 0 };
    for (const q of FAQ_QUERIES) {
      if ((await searchFaqs(handle.db, vocabulary, { query: q, limit: 10 }, handle.indexScans)).total > 0) found.search++;
      if ((await ilikeSearch(handle.db, q)) > 0) found.ilike++;
    }
    const loop = (step: (q: string) => Promise<unknown>) => closedLoop({
      workers: 1, warmupMs: 300, seconds: opts.seconds,
      makeWorker: () => {
        let i = 0;
        return async () => {
          await step(FAQ_QUERIES[i++ % FAQ_QUERIES.length]!);
          return true;
        };
      },
    });
    const search: Rate[] = [];
    const ilike: Rate[] = [];
    for (let r = 0; r < opts.rounds; r++) {
      search.push(await loop((q) => searchFaqs(handle.db, vocabulary, { query: q, limit: 10 }, handle.indexScans)));
      ilike.push(await loop((q) => ilikeSearch(handle.db, q)));
    }
    // p99 over the turns: the worst turn's (each turn's p99 is over its own thousands of queries).
    const join = (rs: Rate[]): Rate => ({ ...rs[0]!, perSec: rs.reduce((n, x) => n + x.perSec, 0) / rs.length, p50Ms: Math.max(...rs.map((x) => x.p50Ms)), p99Ms: Math.max(...rs.map((x) => x.p99Ms)), ok: rs.reduce((n, x) => n + x.ok, 0), all: rs.reduce((n, x) => n + x.all, 0), seconds: rs.reduce((n, x) => n + x.seconds, 0) });
    return { search: join(search), ilike: join(ilike), articles: articles.length, found };
  } finally {
    await handle.close();
  }
}
