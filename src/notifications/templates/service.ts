/**
 * Notification templates (issue 14 section 3): rendering a named template in a user's language
 * (en when there is none in theirs) with the caller's values, and the administrators' changes.
 *
 * Values and placeholders must match both ways: a placeholder without a value is refused (a
 * message is never sent with braces in it), and so is a value the template family has no
 * placeholder for (a misspelt key would otherwise vanish silently). For a named template
 * (catalogue.ts) the family's placeholders are the declared ones, so a caller that sends all of
 * them satisfies every language, including one an administrator worded with fewer.
 */
import type { AuditLog, AuditEvent } from '../../audit/service.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Who } from '../../sessions/guard.js';
import { FALLBACK_LANGUAGE, namedTemplate, type Channel, type Language } from './catalogue.js';
import { TemplateErrors } from './errors.js';
import { textProblem } from '../text.js';
import { braceProblem, fill, placeholdersOf, templatePlaceholders } from './render.js';
import { TemplateStore, type TemplateRow } from './store.js';

export interface Rendered {
  title: string;
  body: string;
  /** The language it was rendered in (the user's, or en). */
  language: Language;
}

/** The placeholders values may name for a template family. */
export function allowedPlaceholders(name: string, family: readonly Pick<TemplateRow, 'subject' | 'message'>[]): string[] {
  const named = namedTemplate(name);
  if (named) return [...named.placeholders];
  return [...new Set(family.flatMap(templatePlaceholders))];
}

/** What is wrong with a template's text, by field (for a 422 TEMPLATE_INVALID); empty when nothing. */
export function textProblems(name: string, text: { subject: string; message: string }): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  const named = namedTemplate(name);
  for (const field of ['subject', 'message'] as const) {
    const problem = textProblem(text[field], field === 'message') ?? braceProblem(text[field]);
    if (problem) out.push({ field, message: problem });
    else if (named) {
      const extra = placeholdersOf(text[field]).filter((p) => !named.placeholders.includes(p));
      if (extra.length > 0) out.push({ field, message: `uses ${extra.map((p) => `{${p}}`).join(', ')}, which the callers of ${name} do not send (its placeholders: ${named.placeholders.map((p) => `{${p}}`).join(', ')})` });
    }
  }
  const shown = new Set(templatePlaceholders(text));
  const lost = (named?.required ?? []).filter((p) => !shown.has(p));
  if (lost.length > 0) out.push({ field: 'message', message: `must show ${lost.map((p) => `{${p}}`).join(', ')}: ${name} exists to carry it` });
  return out;
}

/** `t` filled with `values`, which must name each placeholder it uses and none the family does not allow. */
function filled(t: TemplateRow, family: readonly TemplateRow[], values: Readonly<Record<string, string>>): Rendered {
  const used = templatePlaceholders(t);
  const allowed = allowedPlaceholders(t.name, family);
  const missing = used.filter((p) => !Object.hasOwn(values, p));
  const unknown = Object.keys(values).filter((k) => !allowed.includes(k));
  if (missing.length > 0 || unknown.length > 0) throw TemplateErrors.TEMPLATE_VALUES_INVALID({ template: t.name, language: t.language, missing, unknown, placeholders: allowed });
  return { title: fill(t.subject, values), body: fill(t.message, values), language: t.language };
}

export class TemplateService {
  readonly store: TemplateStore;

  constructor(private readonly deps: { db: Db; clock: Clock; audit: AuditLog }) {
    this.store = new TemplateStore(deps.db);
  }

  /** `name` in `language` (or en), filled with `values`; TEMPLATE_NOT_FOUND or TEMPLATE_VALUES_INVALID otherwise. */
  async render(channel: Channel, name: string, language: Language | null, values: Readonly<Record<string, string>>): Promise<Rendered> {
    const family = await this.store.family(channel, name);
    const wanted = language ?? FALLBACK_LANGUAGE;
    const t = family.find((r) => r.language === wanted) ?? family.find((r) => r.language === FALLBACK_LANGUAGE);
    if (!t) throw TemplateErrors.TEMPLATE_NOT_FOUND({ template: name });
    return filled(t, family, values);
  }

  /**
   * `row` with `draft` as its text (not saved), filled with `values`: what a send would give once
   * the draft is saved. TEMPLATE_INVALID (`details.fields`) for a draft a save would refuse, then
   * TEMPLATE_VALUES_INVALID as a send would answer (a template of the bank's own may use the
   * draft's placeholders).
   */
  async preview(row: TemplateRow, draft: { subject: string; message: string }, values: Readonly<Record<string, string>>): Promise<Rendered> {
    const problems = textProblems(row.name, draft);
    if (problems.length > 0) throw TemplateErrors.TEMPLATE_INVALID({ fields: problems });
    const family = (await this.store.family(row.channel, row.name)).map((r) => (r.id === row.id ? { ...r, ...draft } : r));
    return filled({ ...row, ...draft }, family, values);
  }

  private async audited<T>(who: Who, event: AuditEvent, work: (trx: Db) => Promise<T & TemplateRow>): Promise<T & TemplateRow> {
    return this.deps.db.transaction().execute(async (trx) => {
      const row = await work(trx);
      await this.deps.audit.record({ ...who.context, eventType: event, status: 'SUCCESS', userId: who.actor.uuid, username: who.actor.username, details: { template_id: row.uuid, channel: row.channel, name: row.name, language: row.language } }, trx);
      return row;
    });
  }

  async create(who: Who, input: { channel: Channel; name: string; language: Language; subject: string; message: string }): Promise<TemplateRow> {
    const problems = textProblems(input.name, input);
    if (problems.length > 0) throw TemplateErrors.TEMPLATE_INVALID({ fields: problems });
    const now = new Date(this.deps.clock.now());
    return this.audited(who, 'NOTIFICATION_TEMPLATE_CREATED', async (trx) => {
      if (input.language !== FALLBACK_LANGUAGE && !(await this.store.lockFallback(trx, input.channel, input.name, 'share'))) throw TemplateErrors.TEMPLATE_FALLBACK_MISSING({ name: input.name });
      const row = await this.store.create(trx, { ...input, created_at: now, updated_at: now });
      if (!row) throw TemplateErrors.TEMPLATE_EXISTS({ id: (await this.store.family(input.channel, input.name, trx)).find((r) => r.language === input.language)?.uuid ?? null });
      return row;
    });
  }

  /** Rewords the template whose public id is `id`. */
  async update(who: Who, id: string, text: { subject: string; message: string }): Promise<TemplateRow> {
    const current = await this.store.byUuid(id);
    if (!current) throw TemplateErrors.TEMPLATE_NOT_FOUND({ id });
    const problems = textProblems(current.name, text);
    if (problems.length > 0) throw TemplateErrors.TEMPLATE_INVALID({ fields: problems });
    return this.audited(who, 'NOTIFICATION_TEMPLATE_UPDATED', async (trx) => {
      const row = await this.store.update(trx, current.id, text, new Date(this.deps.clock.now()));
      if (!row) throw TemplateErrors.TEMPLATE_NOT_FOUND({ id });
      return row;
    });
  }

  /** Deletes one language of a template (its public id is `id`); the en of a named template, or of one with other languages, stays (the fallback). */
  async delete(who: Who, id: string): Promise<void> {
    await this.audited(who, 'NOTIFICATION_TEMPLATE_DELETED', async (trx) => {
      const row = await this.store.byUuid(id, trx);
      if (!row) throw TemplateErrors.TEMPLATE_NOT_FOUND({ id });
      if (row.language === FALLBACK_LANGUAGE) {
        await this.store.lockFallback(trx, row.channel, row.name, 'update');
        const others = (await this.store.family(row.channel, row.name, trx)).filter((r) => r.id !== row.id);
        if (namedTemplate(row.name) || others.length > 0) throw TemplateErrors.TEMPLATE_REQUIRED({ name: row.name, languages: others.map((r) => r.language) });
      }
      await this.store.delete(trx, row.id);
      return row;
    });
  }
}
