/**
 * The language a user's notifications are written in (`users.language`, migration 022; null
 * means en). Set by the user (`PUT /api/v1/notifications/preferences`) or by the administrator
 * who creates the account.
 */
import type { Db } from '../platform/db/database.js';
import type { Language } from './templates/catalogue.js';

export class NotificationPreferences {
  constructor(private readonly db: Db) {}

  async language(userId: number, trx: Db = this.db): Promise<Language | null> {
    const row = await trx.selectFrom('users').select('language').where('id', '=', userId).executeTakeFirst();
    return row?.language ?? null;
  }

  /** Sets the language; the previous one (for the audit trail). */
  async setLanguage(trx: Db, userId: number, language: Language | null, now: Date): Promise<Language | null> {
    const before = await trx.selectFrom('users').select('language').where('id', '=', userId).forNoKeyUpdate().executeTakeFirst();
    await trx.updateTable('users').set({ language, updated_at: now }).where('id', '=', userId).execute();
    return before?.language ?? null;
  }
}
