/**
 * FAQ search (issue 13 section 2), in SQL that runs alike on PostgreSQL and PGlite:
 *
 * 1. Full text: `websearch_to_tsquery('english', query)` (quotes for phrases, `or`, `-word`)
 *    against the stored tsvector of active articles (question, keywords, answer). Ranked on the
 *    question and keywords alone: articles that have every word there first, then by `ts_rank`
 *    there with the question (A) weighing 1 and the keywords (B) 0.4 (partial matches count),
 *    plus 1 when the query's words stand as a phrase in the question; articles that match only
 *    with their answer last. Ties by the article's `order`, then id.
 * 2. Nothing found: each query word of three letters or more that no active article contains is
 *    replaced by its nearest word in the articles' vocabulary (fewest edits, a swap of two letters
 *    counting as one; the most common word on a tie; candidates found by Levenshtein distance
 *    and trigram similarity in the node's copy of the vocabulary, src/faq/vocabulary.ts), and the query is searched again with its words corrected (its
 *    exclusions and phrases kept), and if that finds nothing, for any of the corrected words it
 *    does not exclude. So "blok my crad" finds the card-blocking article and says
 *    `did_you_mean: "block my card"`.
 *
 * The snippet is the answer's best passage, HTML-escaped, with the matched words in `<mark>`
 * (src/faq/snippet.ts): a help page can insert it as HTML, whatever an administrator typed.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import type { FaqCategory } from './categories.js';
import { queryLexemes, snippet } from './snippet.js';
import type { Vocabulary } from './vocabulary.js';

export interface SearchHit {
  /** The article's public id (its uuid; the integer id stays internal). */
  id: string;
  question: string;
  answer: string;
  snippet: string;
  category: FaqCategory;
  keywords: string;
  helpful_count: number;
  unhelpful_count: number;
}

export interface SearchResult {
  total: number;
  hits: SearchHit[];
  /** `exact`: every word matched (full text); `fuzzy`: the typo fallback (any corrected word). */
  match: 'exact' | 'fuzzy';
  /** The corrected query when the fallback changed a word, else null. */
  didYouMean: string | null;
}

const WEIGHTS = '{0.05, 0.1, 0.4, 1.0}'; // weights of D, C, B, A, in ts_rank's order (head holds only A and B)

/** No word is longer (Levenshtein in PostgreSQL takes at most 255; no banking word comes near 40). */
const MAX_WORD = 40;
const WORD = /[\p{L}\p{N}]+/gu;

/** The words of a query as the vocabulary holds them: lower case, letters and digits only, at most 16, none over 40 letters. */
export function queryWords(query: string): string[] {
  return [...new Set(query.normalize('NFKC').toLowerCase().match(WORD) ?? [])].filter((w) => w.length <= MAX_WORD).slice(0, 16);
}

/**
 * The query with each word replaced as `fix` says (a word it maps to null is left out), its
 * web-search syntax kept: `-word` stays an exclusion and `"a phrase"` a phrase.
 */
export function rewriteQuery(query: string, fix: (word: string) => string | null): string {
  return query.normalize('NFKC').toLowerCase().replace(WORD, (w) => fix(w) ?? '').replace(/\s+/g, ' ').trim();
}

/** The words a query excludes (`-word`, `-"a phrase"`): kept out of the typo fallback's alternatives. */
export function excludedWords(query: string): Set<string> {
  const out = new Set<string>();
  for (const m of query.normalize('NFKC').toLowerCase().matchAll(/(?:^|\s)-("[^"]*"?|[\p{L}\p{N}]+)/gu)) {
    for (const w of m[1]!.match(WORD) ?? []) out.add(w);
  }
  return out;
}

type Row = Omit<SearchHit, 'snippet' | 'category'> & { category: string; lexemes: string; total: string | number };

async function run(db: Db, tsquery: ReturnType<typeof sql<unknown>>, phrase: string, category: FaqCategory | undefined, limit: number): Promise<{ total: number; hits: SearchHit[] }> {
  // Two tiers, each found through its own GIN index (exact for these queries, so no article's
  // full vector is ever read):
  // - articles with every word in the question or keywords (`head`): 1, plus ts_rank there (the
  //   question weighing 1, the keywords 0.4), plus 1 when the words stand as a phrase in the
  //   question ("I lost my card" before "replace a lost or damaged card");
  // - only when those do not fill the page, the articles that match with their answer: ts_rank
  //   on their head (the more of the words there, the higher), so below every first-tier one.
  // The total counts both. Ranked narrow (id, order, rank), then the page's articles joined back,
  // named by their public id (the uuid).
  const within = category === undefined ? sql`` : sql`AND f.category = ${category}`;
  const { rows } = await sql<Row>`
    WITH q0 AS (SELECT ${tsquery} AS query, phraseto_tsquery('english', ${phrase}) AS phrase),
    -- A query with a negation ("card -atm") can match the head and not the whole article.
    q AS (SELECT query, phrase, strpos(query::text, '!') > 0 AS negates FROM q0),
    head_hits AS (
      SELECT f.id, f."order",
             1 + ts_rank(${WEIGHTS}::float4[], f.head, q.query)
               + CASE WHEN numnode(q.phrase) > 1 AND ts_filter(f.head, '{a}') @@ q.phrase THEN 1 ELSE 0 END AS rank
      FROM faqs f, q
      WHERE f.is_active AND f.head @@ q.query AND (NOT q.negates OR f.search @@ q.query) ${within}
    ),
    answer_hits AS (
      SELECT f.id, f."order", ts_rank(${WEIGHTS}::float4[], f.head, q.query) AS rank
      FROM faqs f, q
      WHERE (SELECT count(*) FROM head_hits) < ${limit}
        AND f.is_active AND f.search @@ q.query AND NOT f.head @@ q.query ${within}
    ),
    total AS (SELECT count(*) AS n FROM faqs f, q WHERE f.is_active AND f.search @@ q.query ${within}),
    ranked AS (
      SELECT * FROM head_hits UNION ALL SELECT * FROM answer_hits
      ORDER BY rank DESC, "order", id
      LIMIT ${limit}
    )
    SELECT f.uuid AS id, f.question, f.answer, f.category, f.keywords, f.helpful_count, f.unhelpful_count, total.n AS total, q.query::text AS lexemes
    FROM ranked r JOIN faqs f ON f.id = r.id, q, total
    ORDER BY r.rank DESC, r."order", r.id`.execute(db);
  const total = rows.length === 0 ? 0 : Number(rows[0]!.total);
  const lexemes = rows.length === 0 ? [] : queryLexemes(rows[0]!.lexemes);
  const hits = rows.map(({ lexemes: _l, total: _t, ...r }) => ({ ...r, category: r.category as FaqCategory, snippet: snippet(r.answer, lexemes) }));
  return { total, hits };
}

/**
 * Optimal string alignment distance: Levenshtein, plus a swap of two neighbouring letters as one
 * edit (the commonest typo: "crad" is one edit from "card", two from "can").
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The nearest known word: fewest edits, then the most common, then the first in order. */
export function nearest(input: string, candidates: Array<{ word: string; ndoc: number }>): string | null {
  let best: { word: string; distance: number; ndoc: number } | null = null;
  for (const c of candidates) {
    const distance = editDistance(input, c.word);
    if (!best || distance < best.distance || (distance === best.distance && (c.ndoc > best.ndoc || (c.ndoc === best.ndoc && c.word < best.word)))) {
      best = { word: c.word, distance, ndoc: c.ndoc };
    }
  }
  return best?.word ?? null;
}

/** Each word of three letters or more, mapped to itself when the articles have it, else to its nearest known word (absent when none is near). */
async function correct(db: Db, vocabulary: Vocabulary, words: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const input of words.filter((w) => w.length >= 3)) {
    const best = nearest(input, await vocabulary.candidates(input, db));
    // Only plain words (a vocabulary word may hold a hyphen: "top-up"): nothing else reaches the query.
    if (best !== null && /^[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*$/u.test(best)) out.set(input, best);
  }
  return out;
}

/**
 * One search, planned never to scan the table: for a common word the sequential scan looks as
 * cheap as the index to PostgreSQL's cost model, but it must decompress every article's vector to
 * test it (8 ms at 5,000 articles, where the index takes under 1 ms; docs/benchmarks.md). On
 * `indexScans` (a pool whose sessions are set so: DatabaseHandle.indexScans) the statements run
 * as they are; otherwise (PGlite) in one transaction that sets the planner first.
 */
export async function searchFaqs(db: Db, vocabulary: Vocabulary, opts: { query: string; category?: FaqCategory; limit: number }, indexScans: Db | null = null): Promise<SearchResult> {
  if (indexScans) return searchIn(indexScans, vocabulary, opts);
  return db.transaction().execute(async (trx) => {
    await noTableScans(trx);
    return searchIn(trx, vocabulary, opts);
  });
}

/** For the rest of this transaction, the planner takes an index wherever there is one (see `searchFaqs`). */
async function noTableScans(trx: Db): Promise<void> {
  await sql`SELECT set_config('enable_seqscan', 'off', true)`.execute(trx);
}

async function searchIn(db: Db, vocabulary: Vocabulary, opts: { query: string; category?: FaqCategory; limit: number }): Promise<SearchResult> {
  const exact = await run(db, sql`websearch_to_tsquery('english', ${opts.query})`, opts.query, opts.category, opts.limit);
  if (exact.total > 0) return { ...exact, match: 'exact', didYouMean: null };

  const words = queryWords(opts.query);
  const fixes = await correct(db, vocabulary, words);
  const excluded = excludedWords(opts.query);
  const wanted = words.filter((w) => !excluded.has(w) && fixes.has(w)).map((w) => fixes.get(w)!);
  if (wanted.length === 0) return { total: 0, hits: [], match: 'fuzzy', didYouMean: null };
  // The query again with its words corrected (its exclusions and phrases kept: "blok card -atm"
  // is "block card -atm"); a word that is too short to correct stays, one with nothing near goes.
  const rewritten = rewriteQuery(opts.query, (w) => (w.length < 3 ? w : (fixes.get(w) ?? null)));
  const changed = rewritten !== rewriteQuery(opts.query, (w) => w);
  const allWords = changed ? await run(db, sql`websearch_to_tsquery('english', ${rewritten})`, wanted.join(' '), opts.category, opts.limit) : { total: 0, hits: [] };
  if (allWords.total > 0) return { ...allWords, match: 'fuzzy', didYouMean: rewritten };
  // Else any of the wanted words, none of the excluded ones. Plain words joined by web-search
  // syntax: a word is letters and digits only, so nothing can inject an operator.
  const none = [...excluded];
  const anyWords = none.length === 0
    ? sql`websearch_to_tsquery('english', ${wanted.join(' or ')})`
    : sql`websearch_to_tsquery('english', ${wanted.join(' or ')}) && !! websearch_to_tsquery('english', ${none.join(' or ')})`;
  const found = await run(db, anyWords, wanted.join(' '), opts.category, opts.limit);
  return { ...found, match: 'fuzzy', didYouMean: changed && found.total > 0 ? rewritten : null };
}

/** Rebuilds the vocabulary the typo fallback corrects against; call after any change to the articles, in its transaction. */
export async function refreshVocabulary(db: Db): Promise<void> {
  await sql`REFRESH MATERIALIZED VIEW faq_words`.execute(db);
}
