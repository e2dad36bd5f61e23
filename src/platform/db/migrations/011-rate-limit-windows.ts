/**
 * Rate-limit windows now differ in length (one minute to a day, per route group), so each row
 * records when its window ends and the clean-up drops exactly the windows that are over.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE rate_limits ADD COLUMN window_end timestamptz;
    UPDATE rate_limits SET window_end = window_start + interval '1 minute';
    ALTER TABLE rate_limits ALTER COLUMN window_end SET NOT NULL;
    CREATE INDEX rate_limits_window_end ON rate_limits (window_end);
  `);
}
