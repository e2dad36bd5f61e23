/**
 * Consent per purpose (issue 28): a person reads their answers and gives or withdraws several in
 * one call; administrators configure purposes and publish new versions of their texts, and list
 * who consented to a purpose for a campaign (uuids, versions and times, nothing else).
 *
 * An answer is one transaction: the person's row locked (their answers are written one call at a
 * time, so the current answer is always their last history row), the purposes locked against a
 * version being published meanwhile (consent is given only to the version that is current when
 * it is recorded), then per changed purpose a history row, the current answer and the audit entry.
 */
import type { AuditContext, AuditLog } from '../../audit/service.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { CommonErrors } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http/cursor.js';
import type { Who } from '../../sessions/guard.js';
import { lockUserRow } from '../../users/store.js';
import { ConsentErrors as E } from './errors.js';
import { consentsOf, LANGUAGES, pickText, type ConsentRecord, type ConsentStore, type Language, type Purpose, type PurposeText, type Texts } from './store.js';

/** The person answering: their account, as the guard found it. */
export interface Subject {
  id: number;
  uuid: string;
  username: string;
  language: Language | null;
}

export interface ConsentChange {
  purpose: string;
  given: boolean;
  /** The version of the text shown: the current one to give consent; not checked for a withdrawal. */
  version?: number;
  /** The language of the text shown; absent: the person's language (English when the version has none in it). */
  language?: Language;
}

export interface ShownText {
  version: number;
  language: Language;
  body: string;
  sha256: string;
  published_at: Date;
}

export interface ConsentView {
  purpose: string;
  title: string;
  required: boolean;
  given: boolean;
  /** The version of the person's last answer; null: never answered. */
  version: number | null;
  current_version: number;
  /** Consent was given to an older version: the current one awaits the person's agreement. */
  newer_version: boolean;
  changed_at: Date | null;
  channel: string | null;
  /** The current version's text, in the language asked for (else English). */
  text: ShownText;
}

export interface ChangeResult {
  purpose: string;
  given: boolean;
  version: number;
  /** False: the answer was already this one (nothing recorded). */
  changed: boolean;
  changed_at: Date;
}

export interface PurposeDetail {
  purpose: string;
  title: string;
  required: boolean;
  current_version: number;
  created_at: Date;
  updated_at: Date;
  versions: Array<{ version: number; published_at: Date; texts: Array<{ language: Language; body: string; sha256: string }> }>;
}

export interface SubjectPage {
  subjects: Array<{ user_id: string; version: number; given_at: Date }>;
  next_cursor: string | null;
}

export interface ConsentServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  store: ConsentStore;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class ConsentService {
  constructor(private readonly deps: ConsentServiceDeps) {}

  /** The person's answer for every purpose, with each purpose's current text in `language` (else theirs, else English). */
  async view(subject: Subject, language?: Language): Promise<ConsentView[]> {
    const { store } = this.deps;
    const purposes = await store.purposes();
    const [states, texts] = await Promise.all([store.states(subject.id), store.texts(purposes.map((p) => p.id), this.deps.db, currentVersions(purposes))]);
    return purposes.map((p) => {
      const s = states.get(p.id);
      const text = pickText(texts.filter((t) => t.purpose_id === p.id), language ?? subject.language ?? 'en')!;
      return {
        purpose: p.key, title: p.title, required: p.required, given: s?.given ?? false, version: s?.version ?? null, current_version: p.current_version,
        newer_version: s !== undefined && s.given && s.version < p.current_version, changed_at: s?.changed_at ?? null, channel: s?.channel ?? null, text: shown(text),
      };
    });
  }

  /** Every answer the person gave, oldest first. */
  async history(subject: Subject): Promise<ConsentRecord[]> {
    return (await consentsOf(this.deps.db, subject.id)).history;
  }

  /**
   * Gives or withdraws consent for each purpose of `changes` (distinct purposes), all or none:
   * an unknown purpose, a stale version or a required purpose withdrawn refuses the whole call.
   */
  async change(subject: Subject, changes: readonly ConsentChange[], ctx: AuditContext): Promise<ChangeResult[]> {
    const { store } = this.deps;
    return this.deps.db.transaction().execute(async (trx) => {
      await lockUserRow(trx, subject.id);
      const purposes = await store.lockPurposes(trx, changes.map((c) => c.purpose));
      const unknown = changes.filter((c) => !purposes.has(c.purpose)).map((c) => c.purpose);
      if (unknown.length > 0) throw E.CONSENT_PURPOSE_UNKNOWN({ purposes: unknown });
      const checked = changes.map((c) => ({ change: c, purpose: checkChange(c, purposes.get(c.purpose)) }));
      const now = new Date(this.deps.clock.now()); // after the lock: history times follow the order of the rows
      const states = await store.states(subject.id, trx);
      const texts = await store.texts([...purposes.values()].map((p) => p.id), trx, currentVersions([...purposes.values()]));
      const results: ChangeResult[] = [];
      for (const { change: c, purpose: p } of checked) {
        const state = states.get(p.id);
        if (state && state.given === c.given && (!c.given || state.version === p.current_version)) {
          results.push({ purpose: p.key, given: c.given, version: state.version, changed: false, changed_at: state.changed_at });
          continue;
        }
        // A withdrawal is recorded against the text the consent was given to; a first answer or a consent against the current one.
        const answered = !c.given && state
          ? { version: state.version, language: state.language, sha256: state.text_hash }
          : pickText(texts.filter((t) => t.purpose_id === p.id), c.language ?? subject.language ?? 'en')!; // the current version's
        await store.append(trx, {
          userId: subject.id, purposeId: p.id, given: c.given, version: answered.version, language: answered.language, textHash: answered.sha256, at: now,
          channel: ctx.channel ?? null, clientAddress: ctx.ip ?? null, userAgent: ctx.userAgent ?? null,
        });
        await this.deps.audit.record({
          ...ctx, eventType: c.given ? 'CONSENT_GIVEN' : 'CONSENT_WITHDRAWN', status: 'SUCCESS', userId: subject.uuid, username: subject.username,
          details: { purpose: p.key, version: answered.version, language: answered.language, text_hash: answered.sha256 },
        }, trx);
        results.push({ purpose: p.key, given: c.given, version: answered.version, changed: true, changed_at: now });
      }
      return results;
    });
  }

  /** Every purpose with every version of its texts. */
  async purposes(): Promise<PurposeDetail[]> {
    const purposes = await this.deps.store.purposes();
    const texts = await this.deps.store.texts(purposes.map((p) => p.id));
    return purposes.map((p) => detail(p, texts));
  }

  async createPurpose(input: { key: string; title: string; required: boolean; texts: Texts }, who: Who): Promise<PurposeDetail> {
    return this.deps.db.transaction().execute(async (trx) => {
      const now = new Date(this.deps.clock.now());
      const p = await this.deps.store.createPurpose(trx, input, who.actor.uuid, now);
      if (!p) throw E.CONSENT_PURPOSE_EXISTS({ purpose: input.key });
      const texts = await this.deps.store.texts([p.id], trx);
      await this.auditAdmin(trx, who, 'CONSENT_PURPOSE_CREATED', { purpose: p.key, title: p.title, required: p.required, version: 1, texts: hashes(texts) });
      return detail(p, texts);
    });
  }

  /** Publishes the next version of a purpose's texts; it becomes the one people are asked to agree to. */
  async publish(key: string, texts: Texts, who: Who): Promise<PurposeDetail> {
    return this.deps.db.transaction().execute(async (trx) => {
      const p = await this.deps.store.lockPurpose(trx, key);
      if (!p) throw E.CONSENT_PURPOSE_NOT_FOUND({ purpose: key });
      const current = await this.deps.store.texts([p.id], trx, new Map([[p.id, p.current_version]]));
      const same = LANGUAGES.every((l) => texts[l] === current.find((t) => t.language === l)?.body);
      if (same) throw E.CONSENT_TEXT_UNCHANGED({ purpose: key, current_version: p.current_version });
      const version = p.current_version + 1;
      const now = new Date(this.deps.clock.now());
      await this.deps.store.publish(trx, p.id, version, texts, who.actor.uuid, now);
      const all = await this.deps.store.texts([p.id], trx);
      await this.auditAdmin(trx, who, 'CONSENT_TEXT_PUBLISHED', { purpose: key, version, previous_version: p.current_version, texts: hashes(all.filter((t) => t.version === version)) });
      return detail({ ...p, current_version: version, updated_at: now }, all);
    });
  }

  /** A page of the people whose consent to `key` is given now: their uuid, the version and when; audited. */
  async subjects(key: string, q: { cursor?: string; minVersion?: number; limit: number }, who: Who): Promise<SubjectPage> {
    const { store } = this.deps;
    const p = await store.purpose(key);
    if (!p) throw E.CONSENT_PURPOSE_NOT_FOUND({ purpose: key });
    let afterUserId: number | undefined;
    if (q.cursor !== undefined) {
      const { after } = decodeCursor(q.cursor, ['after'], (c) => UUID.test(c.after));
      afterUserId = await store.userIdOf(after);
      if (afterUserId === undefined) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'querystring', field: 'cursor', message: 'names an account that no longer exists: start again without a cursor' }] });
    }
    const page = await store.subjects(p.id, { afterUserId, minVersion: q.minVersion, limit: q.limit });
    await this.auditAdmin(this.deps.db, who, 'CONSENT_SUBJECTS_LISTED', { purpose: key, subjects: page.rows.length, first_page: q.cursor === undefined, ...(q.minVersion === undefined ? {} : { min_version: q.minVersion }) });
    const last = page.rows.at(-1);
    return {
      subjects: page.rows.map((r) => ({ user_id: r.uuid, version: r.version, given_at: r.changed_at })),
      next_cursor: page.more && last ? encodeCursor({ after: last.uuid }) : null,
    };
  }

  private async auditAdmin(trx: Db, who: Who, eventType: 'CONSENT_PURPOSE_CREATED' | 'CONSENT_TEXT_PUBLISHED' | 'CONSENT_SUBJECTS_LISTED', details: Record<string, unknown>): Promise<void> {
    await this.deps.audit.record({ ...who.context, eventType, status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details }, trx);
  }
}

/** The purpose an answer names, when the answer fits it now; else the refusal. */
function checkChange(c: ConsentChange, p: Purpose | undefined): Purpose {
  if (!p) throw E.CONSENT_PURPOSE_UNKNOWN({ purposes: [c.purpose] });
  if (c.given && c.version === undefined) throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'consents.version', message: `is needed to give consent to ${c.purpose}: the version of the text shown` }] });
  if (c.given && c.version !== p.current_version) throw E.CONSENT_VERSION_STALE({ purpose: p.key, version: c.version ?? null, current_version: p.current_version });
  if (!c.given && p.required) throw E.CONSENT_REQUIRED_PURPOSE({ purpose: p.key });
  return p;
}

function currentVersions(purposes: readonly Purpose[]): Map<number, number> {
  return new Map(purposes.map((p) => [p.id, p.current_version]));
}

function shown(t: PurposeText): ShownText {
  return { version: t.version, language: t.language, body: t.body, sha256: t.sha256, published_at: t.published_at };
}

function hashes(texts: readonly PurposeText[]): Record<string, string> {
  return Object.fromEntries(texts.map((t) => [t.language, t.sha256]));
}

function detail(p: Purpose, texts: readonly PurposeText[]): PurposeDetail {
  const mine = texts.filter((t) => t.purpose_id === p.id);
  const versions = [...new Set(mine.map((t) => t.version))].sort((a, b) => a - b);
  return {
    purpose: p.key, title: p.title, required: p.required, current_version: p.current_version, created_at: p.created_at, updated_at: p.updated_at,
    versions: versions.map((v) => {
      const of = mine.filter((t) => t.version === v);
      return { version: v, published_at: of[0]!.published_at, texts: of.map((t) => ({ language: t.language, body: t.body, sha256: t.sha256 })) };
    }),
  };
}
