/** `notification_templates`: one row per channel, name and language. */
import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { NotificationTemplatesTable } from '../../platform/db/schema.js';
import type { Channel, Language } from './catalogue.js';

export type TemplateRow = Selectable<NotificationTemplatesTable>;

export class TemplateStore {
  constructor(private readonly db: Db) {}

  async list(filter: { channel?: Channel; name?: string; language?: Language }): Promise<TemplateRow[]> {
    let q = this.db.selectFrom('notification_templates').selectAll();
    if (filter.channel) q = q.where('channel', '=', filter.channel);
    if (filter.name) q = q.where('name', '=', filter.name);
    if (filter.language) q = q.where('language', '=', filter.language);
    return q.orderBy('name').orderBy('language').execute();
  }

  /** Every language of one template name. */
  async family(channel: Channel, name: string, trx: Db = this.db): Promise<TemplateRow[]> {
    return trx.selectFrom('notification_templates').selectAll().where('channel', '=', channel).where('name', '=', name).orderBy('language').execute();
  }

  /** The template whose public id is `uuid`. */
  async byUuid(uuid: string, trx: Db = this.db): Promise<TemplateRow | undefined> {
    return trx.selectFrom('notification_templates').selectAll().where('uuid', '=', uuid).executeTakeFirst();
  }

  /**
   * Locks a family's en row until `trx` ends (`share`: adding a language; `update`: deleting
   * it), so that a language is never added while its fallback is being deleted. Whether it exists.
   */
  async lockFallback(trx: Db, channel: Channel, name: string, mode: 'share' | 'update'): Promise<boolean> {
    const q = trx.selectFrom('notification_templates').select('id').where('channel', '=', channel).where('name', '=', name).where('language', '=', 'en');
    return (await (mode === 'share' ? q.forShare() : q.forUpdate()).executeTakeFirst()) !== undefined;
  }

  /** Inserts; undefined when the channel, name and language are taken. */
  async create(trx: Db, row: Omit<TemplateRow, 'id' | 'uuid'>): Promise<TemplateRow | undefined> {
    return trx.insertInto('notification_templates').values(row)
      .onConflict((oc) => oc.columns(['channel', 'name', 'language']).doNothing())
      .returningAll().executeTakeFirst();
  }

  async update(trx: Db, id: number, text: { subject: string; message: string }, now: Date): Promise<TemplateRow | undefined> {
    return trx.updateTable('notification_templates').set({ ...text, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(trx: Db, id: number): Promise<void> {
    await trx.deleteFrom('notification_templates').where('id', '=', id).execute();
  }
}
