/**
 * What the FAQ offers its readers, people (REST) and assistants (MCP) alike: search, the
 * categories, a category's articles, one article, and feedback. Only active articles exist here.
 */
import type { Logger } from 'pino';
import type { Db } from '../platform/db/database.js';
import { CATEGORY_LABELS, type FaqCategory } from './categories.js';
import { FaqErrors } from './errors.js';
import { searchFaqs, type SearchResult } from './search.js';
import type { FaqRow, FaqStore, Vote } from './store.js';
import type { Vocabulary } from './vocabulary.js';

export interface CategoryCount {
  name: FaqCategory;
  label: string;
  article_count: number;
}

export class FaqService {
  private indexScans: Db | null;

  /** `indexScans`: DatabaseHandle.indexScans (null on PGlite). */
  constructor(private readonly deps: { db: Db; indexScans: Db | null; vocabulary: Vocabulary; store: FaqStore; log: Logger }) {
    this.indexScans = deps.indexScans;
  }

  async search(query: string, opts: { category?: FaqCategory; limit: number }): Promise<SearchResult> {
    const q = { query: query.trim(), category: opts.category, limit: opts.limit };
    if (this.indexScans) {
      try {
        return await searchFaqs(this.deps.db, this.deps.vocabulary, q, this.indexScans);
      } catch (err) {
        if (!refusedStartupOption(err)) throw err;
        // A pooler that refuses the connect option (PgBouncer without ignore_startup_parameters).
        this.indexScans = null;
        this.deps.log.warn({ err }, 'the FAQ search pool could not connect with enable_seqscan=off (a pooler refusing the startup option?); searching through the main pool, a transaction per search, from now on');
      }
    }
    return searchFaqs(this.deps.db, this.deps.vocabulary, q, null);
  }

  async categories(): Promise<{ categories: CategoryCount[]; total: number }> {
    const counts = await this.deps.store.categoryCounts();
    const categories = counts.map((c) => ({ name: c.category, label: CATEGORY_LABELS[c.category], article_count: c.count }));
    return { categories, total: categories.reduce((n, c) => n + c.article_count, 0) };
  }

  byCategory(category: FaqCategory, limit: number, offset = 0): Promise<{ total: number; faqs: FaqRow[] }> {
    return this.deps.store.byCategory(category, limit, offset);
  }

  /** The active article with this public id (uuid), or 404 FAQ_NOT_FOUND (unknown and soft-deleted alike). */
  async get(uuid: string): Promise<FaqRow> {
    const row = await this.deps.store.byUuid(uuid, { activeOnly: true });
    if (!row) throw FaqErrors.FAQ_NOT_FOUND();
    return row;
  }

  /** `voter.key`: `user:<uuid>` for a signed-in reader (who may change their vote), `net:<hmac>` for an anonymous client site (whose first vote stands). */
  async vote(uuid: string, voter: { key: string; mayChange: boolean }, vote: Vote): Promise<{ row: FaqRow; counted: boolean }> {
    const result = await this.deps.store.vote(uuid, voter.key, vote, voter.mayChange);
    if (!result) throw FaqErrors.FAQ_NOT_FOUND();
    return result;
  }
}

/** A connection refused for its startup `options`: PgBouncer's protocol violation, or a parameter the server does not know. */
export function refusedStartupOption(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return e.code === '08P01' || e.code === '42704' || (typeof e.message === 'string' && /startup parameter/i.test(e.message));
}
