/**
 * FAQ articles and votes in SQL. Writes that change what search sees take the caller's
 * transaction and refresh the vocabulary in it; counters change only by `+ 1` / `- 1` in the
 * database, so parallel votes never lose one.
 */
import { sql, type Selectable } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { FaqsTable } from '../platform/db/schema.js';
import { FAQ_CATEGORIES, type FaqCategory } from './categories.js';
import { refreshVocabulary } from './search.js';

export type FaqRow = Selectable<FaqsTable> & { category: FaqCategory };
export type Vote = 'helpful' | 'unhelpful';

/** What an administrator writes (all fields on create; any on update). */
export interface FaqFields {
  question: string;
  answer: string;
  category: FaqCategory;
  keywords: string;
  order: number;
  is_active: boolean;
}

const COLUMNS = ['id', 'uuid', 'question', 'answer', 'category', 'keywords', 'order', 'is_active', 'helpful_count', 'unhelpful_count', 'created_on', 'updated_on'] as const;

/** Keywords as stored: trimmed, lower case, without empty or repeated entries, ", "-separated. */
export function normaliseKeywords(raw: string): string {
  const seen = new Set<string>();
  for (const k of raw.split(',')) {
    const v = k.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
    if (v !== '') seen.add(v);
  }
  return [...seen].join(', ');
}

/**
 * Articles are found by their public id, the uuid (`uuid` of the row); the integer `id` stays
 * internal (votes, ordering). A uuid given here is one a route schema or the import checked.
 */
export class FaqStore {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  private now(): Date {
    return new Date(this.deps.clock.now());
  }

  /** The article with this public id (uuid). */
  async byUuid(uuid: string, opts: { activeOnly: boolean }, trx: Db = this.deps.db): Promise<FaqRow | undefined> {
    let q = trx.selectFrom('faqs').select(COLUMNS).where('uuid', '=', uuid);
    if (opts.activeOnly) q = q.where('is_active', '=', true);
    return (await q.executeTakeFirst()) as FaqRow | undefined;
  }

  /** Active articles of a category in display order, and how many there are. */
  async byCategory(category: FaqCategory, limit: number, offset: number): Promise<{ total: number; faqs: FaqRow[] }> {
    const base = this.deps.db.selectFrom('faqs').where('category', '=', category).where('is_active', '=', true);
    const [{ total }] = await base.select((eb) => eb.fn.countAll<number>().as('total')).execute() as [{ total: number | string }];
    const faqs = await base.select(COLUMNS).orderBy('order').orderBy('id').limit(limit).offset(offset).execute();
    return { total: Number(total), faqs: faqs as FaqRow[] };
  }

  /** Active articles per category (every category, zero included), in SPEC's order. */
  async categoryCounts(): Promise<Array<{ category: FaqCategory; count: number }>> {
    const rows = await this.deps.db.selectFrom('faqs').select(['category', (eb) => eb.fn.countAll<number>().as('n')])
      .where('is_active', '=', true).groupBy('category').execute();
    const by = new Map(rows.map((r) => [r.category, Number(r.n)]));
    return FAQ_CATEGORIES.map((category) => ({ category, count: by.get(category) ?? 0 }));
  }

  /** Every article (inactive too), for administrators: filtered, paged, by category then order. */
  async list(opts: { category?: FaqCategory; active?: boolean; limit: number; offset: number }): Promise<{ total: number; faqs: FaqRow[] }> {
    let q = this.deps.db.selectFrom('faqs');
    if (opts.category !== undefined) q = q.where('category', '=', opts.category);
    if (opts.active !== undefined) q = q.where('is_active', '=', opts.active);
    const [{ total }] = await q.select((eb) => eb.fn.countAll<number>().as('total')).execute() as [{ total: number | string }];
    const faqs = await q.select(COLUMNS).orderBy('category').orderBy('order').orderBy('id').limit(opts.limit).offset(opts.offset).execute();
    return { total: Number(total), faqs: faqs as FaqRow[] };
  }

  /** Every article, for export. */
  async all(opts: { includeInactive: boolean }): Promise<FaqRow[]> {
    let q = this.deps.db.selectFrom('faqs').select(COLUMNS);
    if (!opts.includeInactive) q = q.where('is_active', '=', true);
    return (await q.orderBy('category').orderBy('order').orderBy('id').execute()) as FaqRow[];
  }

  /** Every article's question (inactive ones too). */
  async questions(trx: Db = this.deps.db): Promise<string[]> {
    return (await trx.selectFrom('faqs').select('question').execute()).map((r) => r.question);
  }

  async count(): Promise<number> {
    const [{ total }] = await this.deps.db.selectFrom('faqs').select((eb) => eb.fn.countAll<number>().as('total')).execute() as [{ total: number | string }];
    return Number(total);
  }

  /** Inserts articles (without refreshing the vocabulary: call `changed` once after). */
  async insert(trx: Db, items: FaqFields[]): Promise<FaqRow[]> {
    if (items.length === 0) return [];
    const now = this.now();
    const rows = await trx.insertInto('faqs')
      .values(items.map((f) => ({ ...f, keywords: normaliseKeywords(f.keywords), created_on: now, updated_on: now })))
      .returning(COLUMNS).execute();
    return rows as FaqRow[];
  }

  /** Changes the given fields of the article with this uuid; undefined when there is none. */
  async update(trx: Db, uuid: string, change: Partial<FaqFields>): Promise<FaqRow | undefined> {
    const set = { ...change, ...(change.keywords === undefined ? {} : { keywords: normaliseKeywords(change.keywords) }), updated_on: this.now() };
    return (await trx.updateTable('faqs').set(set).where('uuid', '=', uuid).returning(COLUMNS).executeTakeFirst()) as FaqRow | undefined;
  }

  /** The uuids among `uuids` (lower case) that name an article, with its category. */
  async categoriesOf(trx: Db, uuids: string[]): Promise<Map<string, FaqCategory>> {
    if (uuids.length === 0) return new Map();
    const rows = await trx.selectFrom('faqs').select(['uuid', 'category']).where('uuid', 'in', uuids).execute();
    return new Map(rows.map((r) => [r.uuid, r.category as FaqCategory]));
  }

  /** Sets `order` to 10, 20, 30 ... in the given sequence of uuids. */
  async reorder(trx: Db, uuids: string[]): Promise<void> {
    const now = this.now();
    await sql`
      UPDATE faqs SET "order" = o.n * 10, updated_on = ${now}
      FROM unnest(${uuids}::uuid[]) WITH ORDINALITY AS o(uuid, n)
      WHERE faqs.uuid = o.uuid`.execute(trx);
  }

  /** Rebuilds what search derives from the articles; in the transaction of the change. */
  async changed(trx: Db): Promise<void> {
    await refreshVocabulary(trx);
  }

  /**
   * Records `voter`'s vote on an active article, atomically: a first vote counts one; a changed
   * vote moves one from the other counter (only when `mayChange`: a signed-in user's, never an
   * anonymous network's, which its neighbours behind one NAT would otherwise flip); the same
   * vote again counts nothing. Undefined when the article is unknown or inactive.
   */
  async vote(uuid: string, voter: string, vote: Vote, mayChange: boolean): Promise<{ row: FaqRow; counted: boolean } | undefined> {
    return this.deps.db.transaction().execute(async (trx) => {
      // Locks the article row first: a soft delete cannot slip in between, and the counters move together.
      const article = await trx.selectFrom('faqs').select('id').where('uuid', '=', uuid).where('is_active', '=', true).forUpdate().executeTakeFirst();
      if (!article) return undefined;
      const faqId = article.id; // the votes' key: the internal id
      const now = this.now();
      const inserted = await trx.insertInto('faq_votes').values({ faq_id: faqId, voter, vote, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['faq_id', 'voter']).doNothing()).returning('faq_id').executeTakeFirst();
      let counted = false;
      if (inserted) {
        await trx.updateTable('faqs').set((eb) => (vote === 'helpful' ? { helpful_count: eb('helpful_count', '+', 1) } : { unhelpful_count: eb('unhelpful_count', '+', 1) }))
          .where('id', '=', faqId).execute();
        counted = true;
      } else if (mayChange) {
        const changed = await trx.updateTable('faq_votes').set({ vote, updated_at: now })
          .where('faq_id', '=', faqId).where('voter', '=', voter).where('vote', '<>', vote).returning('faq_id').executeTakeFirst();
        if (changed) {
          await trx.updateTable('faqs').set((eb) => (vote === 'helpful'
            ? { helpful_count: eb('helpful_count', '+', 1), unhelpful_count: eb('unhelpful_count', '-', 1) }
            : { unhelpful_count: eb('unhelpful_count', '+', 1), helpful_count: eb('helpful_count', '-', 1) }))
            .where('id', '=', faqId).execute();
          counted = true;
        }
      }
      const row = (await trx.selectFrom('faqs').select(COLUMNS).where('id', '=', faqId).executeTakeFirstOrThrow()) as FaqRow;
      return { row, counted };
    });
  }
}
