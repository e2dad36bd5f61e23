/**
 * The administrators' side of the FAQ (permission `faq.manage`): create, edit, soft delete and
 * restore, reorder, import and export. Every change runs in one transaction with its audit
 * record and the refresh of the search vocabulary, so a search right after sees it, and a
 * failed import changes nothing.
 */
import type { ValidateFunction } from 'ajv';
import type { AuditContext, AuditEvent, AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import type { RequestActor } from '../sessions/guard.js';
import type { FaqCategory } from './categories.js';
import { CsvError, parseCsv, toCsv } from './csv.js';
import { FaqErrors } from './errors.js';
import { FaqInput } from './schemas.js';
import type { FaqFields, FaqRow, FaqStore } from './store.js';

/** An imported or created article: `id` given means "update that one". */
export type FaqInputItem = { id?: number; question: string; answer: string; category: FaqCategory; keywords?: string; order?: number; is_active?: boolean };

export const EXPORT_COLUMNS = ['id', 'question', 'answer', 'category', 'keywords', 'order', 'is_active', 'helpful_count', 'unhelpful_count'] as const;
export const IMPORT_MAX_ITEMS = 5000;

interface Problem {
  row: number;
  field: string;
  message: string;
}

export interface Who {
  actor: RequestActor;
  context: AuditContext;
}

function fields(item: FaqInputItem): FaqFields {
  return { question: item.question.trim(), answer: item.answer.trim(), category: item.category, keywords: item.keywords ?? '', order: item.order ?? 0, is_active: item.is_active ?? true };
}

export class FaqAdmin {
  private readonly validItem: ValidateFunction;

  constructor(private readonly deps: { db: Db; store: FaqStore; audit: AuditLog; ajv: { compile(schema: object): ValidateFunction } }) {
    this.validItem = deps.ajv.compile(FaqInput);
  }

  private async audited<T>(who: Who, eventType: AuditEvent, details: (result: T) => Record<string, unknown>, work: (trx: Db) => Promise<T>): Promise<T> {
    return this.deps.db.transaction().execute(async (trx) => {
      const result = await work(trx);
      await this.deps.store.changed(trx);
      await this.deps.audit.record({ ...who.context, eventType, status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details: details(result) }, trx);
      return result;
    });
  }

  async create(who: Who, item: FaqInputItem): Promise<FaqRow> {
    return this.audited(who, 'FAQ_CREATED', (r) => ({ faq_id: r.id, category: r.category }), async (trx) => (await this.deps.store.insert(trx, [fields(item)]))[0]!);
  }

  /** The changed article; 404 when no article has the id. A change of `is_active` is audited as a delete or restore. */
  async update(who: Who, id: number, change: Partial<FaqFields>): Promise<FaqRow> {
    const event: AuditEvent = change.is_active === false ? 'FAQ_DELETED' : change.is_active === true ? 'FAQ_RESTORED' : 'FAQ_UPDATED';
    const trimmed = { ...change, ...(change.question === undefined ? {} : { question: change.question.trim() }), ...(change.answer === undefined ? {} : { answer: change.answer.trim() }) };
    const row = await this.deps.db.transaction().execute(async (trx) => {
      const updated = await this.deps.store.update(trx, id, trimmed);
      if (!updated) return undefined;
      await this.deps.store.changed(trx);
      await this.deps.audit.record({ ...who.context, eventType: event, status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details: { faq_id: id, fields: Object.keys(change).sort() } }, trx);
      return updated;
    });
    if (!row) throw FaqErrors.FAQ_NOT_FOUND();
    return row;
  }

  /**
   * Sets the order of `ids` (articles of `category`) to 10, 20, 30 ... as listed; articles not
   * listed keep theirs. 422 FAQ_REORDER_INVALID when an id is unknown, repeated or of another
   * category: nothing changes.
   */
  async reorder(who: Who, category: FaqCategory, ids: number[]): Promise<void> {
    if (new Set(ids).size !== ids.length) throw FaqErrors.FAQ_REORDER_INVALID({ repeated_ids: [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))] });
    await this.deps.db.transaction().execute(async (trx) => {
      const found = await this.deps.store.categoriesOf(trx, ids);
      const unknown = ids.filter((id) => !found.has(id));
      if (unknown.length > 0) throw FaqErrors.FAQ_REORDER_INVALID({ unknown_ids: unknown });
      const other = ids.filter((id) => found.get(id) !== category);
      if (other.length > 0) throw FaqErrors.FAQ_REORDER_INVALID({ other_category_ids: other });
      await this.deps.store.reorder(trx, ids);
      await this.deps.audit.record({ ...who.context, eventType: 'FAQ_REORDERED', status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details: { category, ids } }, trx);
    });
  }

  /** CSV rows (header first, naming columns of EXPORT_COLUMNS in any order) as import items, or the problems found. */
  fromCsv(text: string): FaqInputItem[] | Problem[] {
    let rows: string[][];
    try {
      rows = parseCsv(text);
    } catch (err) {
      if (err instanceof CsvError) return [{ row: err.row, field: '(csv)', message: err.message }];
      throw err;
    }
    const [header, ...records] = rows;
    if (!header) return [{ row: 0, field: '(csv)', message: 'is empty: a header line is needed' }];
    const names = header.map((h) => h.trim().toLowerCase());
    const problems: Problem[] = [];
    for (const required of ['question', 'answer', 'category']) if (!names.includes(required)) problems.push({ row: 0, field: required, message: 'column is missing' });
    const unknown = names.filter((n) => !(EXPORT_COLUMNS as readonly string[]).includes(n));
    for (const n of unknown) problems.push({ row: 0, field: n, message: 'is not a column of the FAQ' });
    if (problems.length > 0) return problems;
    const items: FaqInputItem[] = [];
    records.forEach((record, i) => {
      if (record.length === 1 && record[0] === '') return; // a blank line
      if (record.length !== names.length) {
        problems.push({ row: i + 1, field: '(csv)', message: `has ${record.length} fields, the header ${names.length}` });
        return;
      }
      const item: Record<string, unknown> = {};
      names.forEach((name, j) => {
        const v = record[j]!;
        if (name === 'helpful_count' || name === 'unhelpful_count') return; // counters are the readers', never imported
        if (name === 'id') {
          if (v !== '') item.id = /^[0-9]{1,10}$/.test(v) ? Number(v) : v;
        } else if (name === 'order') item.order = /^[0-9]{1,7}$/.test(v) ? Number(v) : v;
        else if (name === 'is_active') item.is_active = v === '' ? true : v === 'true' ? true : v === 'false' ? false : v;
        else item[name] = v;
      });
      items.push(item as FaqInputItem);
    });
    return problems.length > 0 ? problems : items;
  }

  /**
   * Imports all or nothing: items with an `id` update that article, the others are created.
   * 422 FAQ_IMPORT_INVALID naming every bad row (numbered from 1), including ids that do not exist.
   */
  async import(who: Who, items: FaqInputItem[], format: 'json' | 'csv'): Promise<{ created: number; updated: number }> {
    const problems: Problem[] = [];
    items.forEach((item, i) => {
      const { id, ...rest } = item;
      if (id !== undefined && !(Number.isInteger(id) && id >= 1 && id <= 2_147_483_647)) problems.push({ row: i + 1, field: 'id', message: 'must be a whole number from 1' });
      if (!this.validItem(rest)) {
        for (const e of this.validItem.errors ?? []) {
          const field = (e.instancePath.replace(/^\//, '') || String(e.params.missingProperty ?? e.params.additionalProperty ?? '(row)'));
          problems.push({ row: i + 1, field, message: e.params.additionalProperty ? 'is not allowed' : (e.message ?? 'is invalid') });
        }
      }
    });
    const ids = items.map((i) => i.id).filter((id): id is number => typeof id === 'number');
    const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
    for (const id of new Set(repeated)) problems.push({ row: items.findIndex((x) => x.id === id) + 1, field: 'id', message: `${id} appears more than once` });
    if (problems.length > 0) throw FaqErrors.FAQ_IMPORT_INVALID({ problems: problems.slice(0, 100), problem_count: problems.length });

    return this.audited(who, 'FAQ_IMPORTED', (r) => ({ format, ...r }), async (trx) => {
      const existing = await this.deps.store.categoriesOf(trx, ids);
      const missing = items.map((item, i) => ({ item, row: i + 1 })).filter(({ item }) => item.id !== undefined && !existing.has(item.id));
      if (missing.length > 0) throw FaqErrors.FAQ_IMPORT_INVALID({ problems: missing.slice(0, 100).map(({ item, row }) => ({ row, field: 'id', message: `no article has id ${item.id}` })), problem_count: missing.length });
      const created = await this.deps.store.insert(trx, items.filter((i) => i.id === undefined).map(fields));
      let updated = 0;
      for (const item of items) {
        if (item.id === undefined) continue;
        await this.deps.store.update(trx, item.id, fields(item));
        updated++;
      }
      return { created: created.length, updated };
    });
  }

  /**
   * Loads the starter set: each starter article whose question no article has yet (in any case),
   * so that running it again adds nothing. Audited as FAQ_IMPORTED with format `starter`.
   */
  async seed(who: Who, articles: FaqInputItem[]): Promise<{ created: number; skipped: number }> {
    return this.audited(who, 'FAQ_IMPORTED', (r) => ({ format: 'starter', ...r }), async (trx) => {
      const existing = new Set((await this.deps.store.questions(trx)).map((q) => q.toLowerCase()));
      const fresh = articles.filter((a) => !existing.has(a.question.trim().toLowerCase()));
      await this.deps.store.insert(trx, fresh.map(fields));
      return { created: fresh.length, skipped: articles.length - fresh.length };
    });
  }

  /** Every article (active only unless asked) as JSON rows or CSV text; audited as FAQ_EXPORTED. */
  async export(who: Who, format: 'json' | 'csv', includeInactive: boolean): Promise<{ rows: FaqRow[]; csv?: string }> {
    const rows = await this.deps.store.all({ includeInactive });
    await this.deps.audit.record({ ...who.context, eventType: 'FAQ_EXPORTED', status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details: { format, include_inactive: includeInactive, count: rows.length } });
    if (format === 'json') return { rows };
    return { rows, csv: toCsv(EXPORT_COLUMNS, rows.map((r) => EXPORT_COLUMNS.map((c) => r[c]))) };
  }
}
