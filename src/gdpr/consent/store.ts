/**
 * Consent at rest (migration 034): purposes and their versioned texts, every answer as an
 * appended history row, and each person's current answer per purpose (`user_consents`), which
 * repeats their last history row and names it (`history_id`). The service writes both in one
 * transaction with the person's row locked, so the current answer is always the last one given.
 * `consentsOf` is what a person's data export reads.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';

export const LANGUAGES = ['en', 'pt', 'fr'] as const;
export type Language = (typeof LANGUAGES)[number];

/** The texts of one version: English always, Portuguese and French when the bank wrote them. */
export type Texts = { en: string } & Partial<Record<Language, string>>;

export interface Purpose {
  id: number;
  key: string;
  title: string;
  required: boolean;
  current_version: number;
  created_at: Date;
  updated_at: Date;
}

export interface PurposeText {
  purpose_id: number;
  version: number;
  language: Language;
  body: string;
  sha256: string;
  published_at: Date;
}

/** A person's current answer for a purpose, with what its history row says. */
export interface ConsentState {
  purpose: string;
  given: boolean;
  version: number;
  language: Language;
  text_hash: string;
  changed_at: Date;
  channel: string | null;
}

/** One answer of a person's history. */
export interface ConsentRecord {
  purpose: string;
  given: boolean;
  version: number;
  language: Language;
  text_hash: string;
  at: Date;
  channel: string | null;
  client_address: string | null;
  user_agent: string | null;
}

/** One history row to append. */
export interface NewAnswer {
  userId: number;
  purposeId: number;
  given: boolean;
  version: number;
  language: Language;
  textHash: string;
  at: Date;
  channel: string | null;
  clientAddress: string | null;
  userAgent: string | null;
}

/** SHA-256 (hex) of a text's UTF-8 bytes: what a client hashes to check the text it showed. */
export function textHash(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}

/** The text of `language` among a version's texts, else the English one. */
export function pickText<T extends { language: Language }>(texts: readonly T[], language: Language): T | undefined {
  return texts.find((t) => t.language === language) ?? texts.find((t) => t.language === 'en');
}

const iso = (d: Date | string): Date => new Date(d);

/**
 * A person's consents for their data export: the current answer per purpose they answered, and
 * every answer they gave, oldest first. `userId` is the internal id.
 */
export async function consentsOf(db: Db, userId: number): Promise<{ current: ConsentState[]; history: ConsentRecord[] }> {
  const current = await db.selectFrom('user_consents as c').innerJoin('consent_history as h', 'h.id', 'c.history_id').innerJoin('consent_purposes as p', 'p.id', 'c.purpose_id')
    .select(['p.key as purpose', 'c.given', 'c.version', 'h.language', 'h.text_hash', 'c.changed_at', 'h.channel'])
    .where('c.user_id', '=', userId).orderBy('p.id').execute();
  const history = await db.selectFrom('consent_history as h').innerJoin('consent_purposes as p', 'p.id', 'h.purpose_id')
    .select(['p.key as purpose', 'h.given', 'h.version', 'h.language', 'h.text_hash', 'h.at', 'h.channel', 'h.client_address', 'h.user_agent'])
    .where('h.user_id', '=', userId).orderBy('h.id').execute();
  return {
    current: current.map((r) => ({ ...r, changed_at: iso(r.changed_at) })),
    history: history.map((r) => ({ ...r, at: iso(r.at) })),
  };
}

const PURPOSE = ['id', 'key', 'title', 'required', 'current_version', 'created_at', 'updated_at'] as const;

export class ConsentStore {
  constructor(private readonly db: Db) {}

  async purposes(db: Db = this.db): Promise<Purpose[]> {
    return (await db.selectFrom('consent_purposes').select(PURPOSE).orderBy('id').execute()).map(toPurpose);
  }

  async purpose(key: string, db: Db = this.db): Promise<Purpose | undefined> {
    const row = await db.selectFrom('consent_purposes').select(PURPOSE).where('key', '=', key).executeTakeFirst();
    return row && toPurpose(row);
  }

  /**
   * The purposes named, locked against a new version being published until the transaction
   * ends (FOR SHARE: answers of several people go on in parallel); in id order (no deadlock).
   */
  async lockPurposes(trx: Db, keys: readonly string[]): Promise<Map<string, Purpose>> {
    const rows = await trx.selectFrom('consent_purposes').select(PURPOSE).where('key', 'in', [...keys]).orderBy('id').forShare().execute();
    return new Map(rows.map((r) => [r.key, toPurpose(r)]));
  }

  /** A purpose locked for publishing its next version. */
  async lockPurpose(trx: Db, key: string): Promise<Purpose | undefined> {
    const row = await trx.selectFrom('consent_purposes').select(PURPOSE).where('key', '=', key).forNoKeyUpdate().executeTakeFirst();
    return row && toPurpose(row);
  }

  /** The texts of the given (purpose, version) pairs; every version of the purposes when `versions` is absent. */
  async texts(purposeIds: readonly number[], db: Db = this.db, versions?: ReadonlyMap<number, number>): Promise<PurposeText[]> {
    if (purposeIds.length === 0) return [];
    let q = db.selectFrom('consent_texts').select(['purpose_id', 'version', 'language', 'body', 'sha256', 'published_at']).where('purpose_id', 'in', [...purposeIds]);
    if (versions) q = q.where((eb) => eb.or([...versions].map(([id, v]) => eb.and([eb('purpose_id', '=', id), eb('version', '=', v)]))));
    const rows = await q.orderBy('purpose_id').orderBy('version').orderBy('language').execute();
    return rows.map((r) => ({ ...r, published_at: iso(r.published_at) }));
  }

  /** The person's current answers, by purpose id. */
  async states(userId: number, db: Db = this.db): Promise<Map<number, ConsentState & { purpose_id: number }>> {
    const rows = await db.selectFrom('user_consents as c').innerJoin('consent_history as h', 'h.id', 'c.history_id').innerJoin('consent_purposes as p', 'p.id', 'c.purpose_id')
      .select(['c.purpose_id', 'p.key as purpose', 'c.given', 'c.version', 'h.language', 'h.text_hash', 'c.changed_at', 'h.channel'])
      .where('c.user_id', '=', userId).execute();
    return new Map(rows.map((r) => [r.purpose_id, { ...r, changed_at: iso(r.changed_at) }]));
  }

  /** Appends an answer and makes it the person's current one, in the caller's transaction (the person's row locked). */
  async append(trx: Db, a: NewAnswer): Promise<void> {
    const { id } = await trx.insertInto('consent_history').values({
      user_id: a.userId, purpose_id: a.purposeId, version: a.version, language: a.language, text_hash: a.textHash, given: a.given, at: a.at,
      channel: a.channel, client_address: a.clientAddress, user_agent: a.userAgent,
    }).returning('id').executeTakeFirstOrThrow();
    await trx.insertInto('user_consents').values({ user_id: a.userId, purpose_id: a.purposeId, history_id: id, given: a.given, version: a.version, changed_at: a.at })
      .onConflict((oc) => oc.columns(['user_id', 'purpose_id']).doUpdateSet({ history_id: id, given: a.given, version: a.version, changed_at: a.at }))
      .execute();
  }

  async createPurpose(trx: Db, p: { key: string; title: string; required: boolean; texts: Texts }, by: string | null, now: Date): Promise<Purpose | undefined> {
    const row = await trx.insertInto('consent_purposes').values({ key: p.key, title: p.title, required: p.required, current_version: 1, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('key').doNothing()).returning(PURPOSE).executeTakeFirst();
    if (!row) return undefined;
    await this.insertTexts(trx, row.id, 1, p.texts, by, now);
    return toPurpose(row);
  }

  /** Publishes `version` of a locked purpose's texts and makes it the current one. */
  async publish(trx: Db, purposeId: number, version: number, texts: Texts, by: string | null, now: Date): Promise<void> {
    await this.insertTexts(trx, purposeId, version, texts, by, now);
    await trx.updateTable('consent_purposes').set({ current_version: version, updated_at: now }).where('id', '=', purposeId).execute();
  }

  private async insertTexts(trx: Db, purposeId: number, version: number, texts: Texts, by: string | null, now: Date): Promise<void> {
    const rows = LANGUAGES.filter((l) => texts[l] !== undefined).map((language) => ({
      purpose_id: purposeId, version, language, body: texts[language]!, sha256: textHash(texts[language]!), published_at: now, published_by: by,
    }));
    await trx.insertInto('consent_texts').values(rows).execute();
  }

  /**
   * Who has consent given for a purpose now, in account order: a page of `limit` after the
   * account `afterUserId` (internal), and whether more follow. Deleted accounts are left out.
   */
  async subjects(purposeId: number, q: { afterUserId?: number; minVersion?: number; limit: number }): Promise<{ rows: Array<{ user_id: number; uuid: string; version: number; changed_at: Date }>; more: boolean }> {
    let query = this.db.selectFrom('user_consents as c').innerJoin('users as u', 'u.id', 'c.user_id')
      .select(['c.user_id', 'u.uuid', 'c.version', 'c.changed_at'])
      .where('c.purpose_id', '=', purposeId).where('c.given', '=', true).where('u.deleted_at', 'is', null);
    if (q.afterUserId !== undefined) query = query.where('c.user_id', '>', q.afterUserId);
    if (q.minVersion !== undefined) query = query.where('c.version', '>=', q.minVersion);
    const rows = await query.orderBy('c.user_id').limit(q.limit + 1).execute();
    return { rows: rows.slice(0, q.limit).map((r) => ({ ...r, changed_at: iso(r.changed_at) })), more: rows.length > q.limit };
  }

  /** The internal id of the account with this uuid (a cursor's position); undefined when there is none. */
  async userIdOf(uuid: string): Promise<number | undefined> {
    return (await this.db.selectFrom('users').select('id').where('uuid', '=', uuid).executeTakeFirst())?.id;
  }
}

function toPurpose(r: { id: number; key: string; title: string; required: boolean; current_version: number; created_at: Date | string; updated_at: Date | string }): Purpose {
  return { ...r, created_at: iso(r.created_at), updated_at: iso(r.updated_at) };
}
