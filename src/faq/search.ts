/**
 * FAQ search (issue 13 section 2), in SQL that runs alike on PostgreSQL and PGlite:
 *
 * 1. Full text: `websearch_to_tsquery('english', query)` (quotes for phrases, `or`, `-word`)
 *    against the stored tsvector of active articles; ranked by `ts_rank_cd` with the question
 *    (A) weighing 1, the keywords (B) 0.4 and the answer (C) 0.1, so a keyword match outranks an
 *    answer-only one and several mentions in a long answer do not outrank the question; plus 1
 *    when the query's words stand as a phrase in the question; ties by the article's `order`,
 *    then id.
 * 2. Nothing found: each query word of three letters or more that no active article contains is
 *    replaced by its nearest word in the articles' vocabulary (fewest edits, a swap of two letters
 *    counting as one; the most common word on a tie; candidates found by Levenshtein distance
 *    and trigram similarity), and the words are searched again as
 *    alternatives (any of them), so "blok my crad" finds the card-blocking article and says
 *    `did_you_mean: "block card"`.
 *
 * The snippet is the answer's best passage (`ts_headline`), HTML-escaped, with the matched words
 * in `<mark>`: a help page can insert it as HTML, whatever an administrator typed.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import type { FaqCategory } from './categories.js';

export interface SearchHit {
  id: number;
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

// Control characters cannot appear in an article (refused on input), so they mark the matches
// unambiguously until the snippet is escaped.
const START = '\u0002';
const STOP = '\u0003';
const HEADLINE_OPTIONS = `StartSel=${START}, StopSel=${STOP}, MaxWords=30, MinWords=12, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … "`;
const WEIGHTS = '{0.05, 0.1, 0.4, 1.0}'; // D, C, B, A (ts_rank_cd's order)

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escapes the headline, then turns the match markers into `<mark>` elements. */
export function snippetHtml(headline: string): string {
  return headline.replace(/[&<>"']/g, (c) => ESCAPES[c]!).replaceAll(START, '<mark>').replaceAll(STOP, '</mark>');
}

/** The words of a query as the vocabulary holds them: lower case, letters and digits only. */
export function queryWords(query: string): string[] {
  return [...new Set(query.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 16);
}

type Row = Omit<SearchHit, 'snippet' | 'category'> & { category: string; headline: string; total: string | number };

async function run(db: Db, tsquery: ReturnType<typeof sql<unknown>>, phrase: string, category: FaqCategory | undefined, limit: number, offset: number): Promise<{ total: number; hits: SearchHit[] }> {
  // The words as a phrase in the question (its weight-A part of the stored vector) add 1: "I lost
  // my card" before "replace a lost or damaged card" for "lost my card".
  const { rows } = await sql<Row>`
    WITH q AS (SELECT ${tsquery} AS query, phraseto_tsquery('english', ${phrase}) AS phrase),
    matched AS (
      SELECT f.id, f.question, f.answer, f.category, f.keywords, f.helpful_count, f.unhelpful_count,
             ts_rank_cd(${WEIGHTS}::float4[], f.search, q.query)
               + CASE WHEN numnode(q.phrase) > 1 AND ts_filter(f.search, '{a}') @@ q.phrase THEN 1 ELSE 0 END AS rank,
             f."order", count(*) OVER () AS total
      FROM faqs f, q
      WHERE f.is_active AND f.search @@ q.query ${category === undefined ? sql`` : sql`AND f.category = ${category}`}
      ORDER BY rank DESC, f."order", f.id
      LIMIT ${limit} OFFSET ${offset}
    )
    SELECT m.id, m.question, m.answer, m.category, m.keywords, m.helpful_count, m.unhelpful_count, m.total,
           ts_headline('english', m.answer, q.query, ${HEADLINE_OPTIONS}) AS headline
    FROM matched m, q
    ORDER BY m.rank DESC, m."order", m.id`.execute(db);
  const total = rows.length === 0 ? 0 : Number(rows[0]!.total);
  const hits = rows.map(({ headline, total: _t, ...r }) => ({ ...r, category: r.category as FaqCategory, snippet: snippetHtml(headline) }));
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

/** Each word the vocabulary lacks, mapped to its nearest known word (or dropped when none is near). */
async function correct(db: Db, words: string[]): Promise<string[]> {
  const inputs = words.filter((w) => w.length >= 3);
  if (inputs.length === 0) return [];
  // Candidates: the word itself; words within an edit distance that grows with the word (two
  // for a swap), starting with the same letter; or similar by trigrams (pg_trgm's `%`, at least 0.3).
  const { rows } = await sql<{ input: string; word: string; ndoc: number }>`
    SELECT w.input, c.word, c.ndoc
    FROM (SELECT input, CASE WHEN length(input) <= 3 THEN 1 WHEN length(input) <= 7 THEN 2 ELSE 3 END AS max_distance
          FROM unnest(${inputs}::text[]) AS u(input)) AS w
    CROSS JOIN LATERAL (
      SELECT v.word, v.ndoc FROM faq_words v
      WHERE v.word = w.input
         OR (left(v.word, 1) = left(w.input, 1) AND abs(length(v.word) - length(w.input)) <= w.max_distance
             AND levenshtein_less_equal(v.word, w.input, w.max_distance) <= w.max_distance)
         OR v.word % w.input
      ORDER BY levenshtein(v.word, w.input), v.ndoc DESC
      LIMIT 20
    ) AS c`.execute(db);
  return inputs.map((input) => nearest(input, rows.filter((r) => r.input === input))).filter((b): b is string => b !== null);
}

export async function searchFaqs(db: Db, opts: { query: string; category?: FaqCategory; limit: number; offset?: number }): Promise<SearchResult> {
  const offset = opts.offset ?? 0;
  const exact = await run(db, sql`websearch_to_tsquery('english', ${opts.query})`, opts.query, opts.category, opts.limit, offset);
  if (exact.total > 0) return { ...exact, match: 'exact', didYouMean: null };

  const words = queryWords(opts.query);
  const corrected = await correct(db, words);
  if (corrected.length === 0) return { total: 0, hits: [], match: 'fuzzy', didYouMean: null };
  // Alternatives of plain words: websearch syntax, with nothing a word could inject (letters and digits only).
  const fuzzy = await run(db, sql`websearch_to_tsquery('english', ${corrected.join(' or ')})`, corrected.join(' '), opts.category, opts.limit, offset);
  const changed = corrected.join(' ') !== words.filter((w) => w.length >= 3).join(' ');
  return { ...fuzzy, match: 'fuzzy', didYouMean: changed && fuzzy.total > 0 ? corrected.join(' ') : null };
}

/** Rebuilds the vocabulary the typo fallback corrects against; call after any change to the articles, in its transaction. */
export async function refreshVocabulary(db: Db): Promise<void> {
  await sql`REFRESH MATERIALIZED VIEW faq_words`.execute(db);
}
