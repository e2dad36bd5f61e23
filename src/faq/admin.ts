/**
 * The administrators' side of the FAQ (permission `faq.manage`): create, edit, soft delete and
 * restore, reorder, import and export. Every change runs in one transaction with its audit
 * record and the refresh of the search vocabulary, so a search right after on this node sees it
 * (other nodes once the bus's notice arrives), and a failed import changes nothing.
 */
import type { ValidateFunction } from 'ajv';
import type { AuditEvent, AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import type { Who } from '../sessions/guard.js';
import type { FaqCategory } from './categories.js';
import { CsvError, parseCsv, toCsv } from './csv.js';
import { CommonErrors } from '../platform/errors.js';
import { FaqErrors } from './errors.js';
import type { Vocabulary } from './vocabulary.js';
import { FAQ_ID, FaqInput } from './schemas.js';
import type { FaqFields, FaqRow, FaqStore } from './store.js';
import { describeSchemaErrors } from '../platform/http/validation-messages.js';

/** An imported or created article: `id` (the article's uuid) given means "update that one". */
export type FaqInputItem = { id?: string; question: string; answer: string; category: FaqCategory; keywords?: string; order?: number; is_active?: boolean };

/** The CSV's columns; `id` holds the article's uuid (its public id), as the import takes it. */
export const EXPORT_COLUMNS = ['id', 'question', 'answer', 'category', 'keywords', 'order', 'is_active', 'helpful_count', 'unhelpful_count'] as const;
export const IMPORT_MAX_ITEMS = 5000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** What an import row's `id` that is not a uuid (an integer of an earlier version's export, say) is told. */
const NOT_A_UUID = `must be the ${FAQ_ID.what}'s uuid (the \`id\` column of the export, or ${FAQ_ID.source}); integer ids are not accepted`;

interface Problem {
  row: number;
  field: string;
  message: string;
}

/** The text fields trimmed; what is blank once trimmed (a question of spaces) named, for a 422. */
function trimmed<T extends { question?: string; answer?: string }>(item: T): { value: T; blank: Array<{ field: string; message: string }> } {
  const value = { ...item, ...(item.question === undefined ? {} : { question: item.question.trim() }), ...(item.answer === undefined ? {} : { answer: item.answer.trim() }) };
  const blank = [
    ...(value.question !== undefined && value.question.length < 5 ? [{ field: 'question', message: 'must have at least 5 characters besides spaces' }] : []),
    ...(value.answer !== undefined && value.answer.length < 1 ? [{ field: 'answer', message: 'must not be blank' }] : []),
  ];
  return { value, blank };
}

function checked<T extends { question?: string; answer?: string }>(item: T): T {
  const { value, blank } = trimmed(item);
  if (blank.length > 0) throw CommonErrors.VALIDATION_ERROR({ fields: blank.map((b) => ({ location: 'body', ...b })) });
  return value;
}

/** A new article: the defaults of what was not given. */
function newFields(item: FaqInputItem): FaqFields {
  return { question: item.question, answer: item.answer, category: item.category, keywords: item.keywords ?? '', order: item.order ?? 0, is_active: item.is_active ?? true };
}

/** An update: only what was given (an import row without `keywords` keeps the article's). */
function givenFields(item: FaqInputItem): Partial<FaqFields> {
  const { id: _id, ...rest } = item;
  return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Partial<FaqFields>;
}

export class FaqAdmin {
  private readonly validItem: ValidateFunction;

  /** `vocabulary`: told after each change commits (every node's copy of the typo fallback's words). */
  constructor(private readonly deps: { db: Db; store: FaqStore; audit: AuditLog; vocabulary: Pick<Vocabulary, 'changed'>; ajv: { compile(schema: object): ValidateFunction } }) {
    this.validItem = deps.ajv.compile(FaqInput);
  }

  private async audited<T>(who: Who, eventType: AuditEvent, details: (result: T) => Record<string, unknown>, work: (trx: Db) => Promise<T>): Promise<T> {
    const result = await this.deps.db.transaction().execute(async (trx) => {
      const r = await work(trx);
      await this.deps.store.changed(trx);
      await this.deps.audit.record({ ...who.context, eventType, status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details: details(r) }, trx);
      return r;
    });
    await this.deps.vocabulary.changed();
    return result;
  }

  async create(who: Who, item: FaqInputItem): Promise<FaqRow> {
    const value = checked(item);
    return this.audited(who, 'FAQ_CREATED', (r) => ({ faq_id: r.uuid, category: r.category }), async (trx) => (await this.deps.store.insert(trx, [newFields(value)]))[0]!);
  }

  /** The changed article (named by its uuid); 404 when no article has it. A change of `is_active` is audited as a delete or restore. */
  async update(who: Who, uuid: string, change: Partial<FaqFields>): Promise<FaqRow> {
    const event: AuditEvent = change.is_active === false ? 'FAQ_DELETED' : change.is_active === true ? 'FAQ_RESTORED' : 'FAQ_UPDATED';
    const value = checked(change);
    const row = await this.deps.db.transaction().execute(async (trx) => {
      const updated = await this.deps.store.update(trx, uuid, value);
      if (!updated) return undefined;
      await this.deps.store.changed(trx);
      await this.deps.audit.record({ ...who.context, eventType: event, status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details: { faq_id: updated.uuid, fields: Object.keys(change).sort() } }, trx);
      return updated;
    });
    if (!row) throw FaqErrors.FAQ_NOT_FOUND();
    await this.deps.vocabulary.changed();
    return row;
  }

  /**
   * Sets the order of `uuids` (articles of `category`) to 10, 20, 30 ... as listed; articles not
   * listed keep theirs. 422 FAQ_REORDER_INVALID when an id is unknown, repeated or of another
   * category: nothing changes.
   */
  async reorder(who: Who, category: FaqCategory, uuids: string[]): Promise<void> {
    const ids = uuids.map((id) => id.toLowerCase()); // as the database gives them back
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
  fromCsv(text: string): { items: FaqInputItem[]; rows: number[] } | { problems: Problem[] } {
    let rows: string[][];
    try {
      rows = parseCsv(text);
    } catch (err) {
      if (err instanceof CsvError) return { problems: [{ row: err.row, field: '(csv)', message: err.message }] };
      throw err;
    }
    const [header, ...records] = rows;
    if (!header) return { problems: [{ row: 0, field: '(csv)', message: 'is empty: a header line is needed' }] };
    const names = header.map((h) => h.trim().toLowerCase());
    const problems: Problem[] = [];
    for (const required of ['question', 'answer', 'category']) if (!names.includes(required)) problems.push({ row: 0, field: required, message: 'column is missing' });
    const unknown = names.filter((n) => !(EXPORT_COLUMNS as readonly string[]).includes(n));
    for (const n of unknown) problems.push({ row: 0, field: n, message: 'is not a column of the FAQ' });
    if (problems.length > 0) return { problems };
    const items: FaqInputItem[] = [];
    const rowNumbers: number[] = [];
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
          if (v.trim() !== '') item.id = v.trim(); // the article's uuid
        } else if (name === 'order') {
          if (v !== '') item.order = /^[0-9]{1,7}$/.test(v) ? Number(v) : v;
        } else if (name === 'is_active') {
          const b = v.trim().toLowerCase(); // a spreadsheet writes TRUE and FALSE
          if (b !== '') item.is_active = b === 'true' ? true : b === 'false' ? false : v;
        } else item[name] = v;
      });
      items.push(item as FaqInputItem);
      rowNumbers.push(i + 1);
    });
    return problems.length > 0 ? { problems } : { items, rows: rowNumbers };
  }

  /**
   * Imports all or nothing: items with an `id` (a uuid) update that article, the others are
   * created. 422 FAQ_IMPORT_INVALID naming every bad row (numbered from 1), including ids that
   * are not uuids or that no article has.
   */
  async import(who: Who, input: FaqInputItem[], format: 'json' | 'csv', rowNumbers?: number[]): Promise<{ created: number; updated: number }> {
    const rowOf = (i: number): number => rowNumbers?.[i] ?? i + 1;
    const problems: Problem[] = [];
    const items = input.map((item, i) => {
      const { id, ...rest } = item;
      const uuid = typeof id === 'string' && UUID.test(id) ? { id: id.toLowerCase() } : {}; // as the database gives them back
      if (id !== undefined && uuid.id === undefined) problems.push({ row: rowOf(i), field: 'id', message: NOT_A_UUID });
      if (!this.validItem(rest)) {
        for (const p of describeSchemaErrors(this.validItem.errors ?? [], 'body')) {
          problems.push({ row: rowOf(i), field: p.field === '(root)' ? '(row)' : p.field, message: p.message });
        }
        return item;
      }
      const { value, blank } = trimmed({ ...item, ...uuid });
      for (const b of blank) problems.push({ row: rowOf(i), ...b });
      return value;
    });
    const ids = items.map((i) => i.id).filter((id): id is string => typeof id === 'string');
    const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
    for (const id of new Set(repeated)) problems.push({ row: rowOf(items.findIndex((x) => x.id === id)), field: 'id', message: `${id} appears more than once` });
    if (problems.length > 0) throw FaqErrors.FAQ_IMPORT_INVALID({ problems: problems.slice(0, 100), problem_count: problems.length });

    const AUDITED_IDS = 1000;
    type Imported = { created: number; updated: number; createdIds: string[]; updatedIds: string[] };
    return this.audited<Imported>(who, 'FAQ_IMPORTED', (r) => ({ format, created: r.created, updated: r.updated, created_ids: r.createdIds.slice(0, AUDITED_IDS), updated_ids: r.updatedIds.slice(0, AUDITED_IDS) }), async (trx) => {
      const existing = await this.deps.store.categoriesOf(trx, ids);
      const missing = items.map((item, i) => ({ item, row: rowOf(i) })).filter(({ item }) => item.id !== undefined && !existing.has(item.id));
      if (missing.length > 0) throw FaqErrors.FAQ_IMPORT_INVALID({ problems: missing.slice(0, 100).map(({ item, row }) => ({ row, field: 'id', message: `no article has id ${item.id}` })), problem_count: missing.length });
      const created = await this.deps.store.insert(trx, items.filter((i) => i.id === undefined).map(newFields));
      const updatedIds: string[] = [];
      for (const item of items) {
        if (item.id === undefined) continue;
        await this.deps.store.update(trx, item.id, givenFields(item));
        updatedIds.push(item.id);
      }
      return { created: created.length, updated: updatedIds.length, createdIds: created.map((c) => c.uuid), updatedIds };
    }).then(({ created, updated }) => ({ created, updated }));
  }

  /**
   * Loads the starter set: each starter article whose question no article has yet (in any case),
   * so that running it again adds nothing. Audited as FAQ_IMPORTED with format `starter`.
   */
  async seed(who: Who, articles: FaqInputItem[]): Promise<{ created: number; skipped: number }> {
    return this.audited(who, 'FAQ_IMPORTED', (r) => ({ format: 'starter', ...r }), async (trx) => {
      const existing = new Set((await this.deps.store.questions(trx)).map((q) => q.toLowerCase()));
      const fresh = articles.filter((a) => !existing.has(a.question.trim().toLowerCase()));
      await this.deps.store.insert(trx, fresh.map(newFields));
      return { created: fresh.length, skipped: articles.length - fresh.length };
    });
  }

  /** Every article (active only unless asked) as JSON rows or CSV text; audited as FAQ_EXPORTED. */
  async export(who: Who, format: 'json' | 'csv', includeInactive: boolean): Promise<{ rows: FaqRow[]; csv?: string }> {
    const rows = await this.deps.store.all({ includeInactive });
    await this.deps.audit.record({ ...who.context, eventType: 'FAQ_EXPORTED', status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details: { format, include_inactive: includeInactive, count: rows.length } });
    if (format === 'json') return { rows };
    return { rows, csv: toCsv(EXPORT_COLUMNS, rows.map((r) => EXPORT_COLUMNS.map((c) => (c === 'id' ? r.uuid : r[c])))) }; // the id column: the public id
  }
}
