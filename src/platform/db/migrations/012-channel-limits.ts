/**
 * Per-channel limits from the access policy (issue 10, section 2): a failed-attempt counter
 * records the length of the window it counts in (a channel's lockout may be longer than
 * ACCOUNT_LOCKOUT_MINUTES, and the clean-up must not drop a counter that still counts) and how
 * many of its attempts are still comparing (so a channel with a lower limit can tell failures
 * counted on another channel from attempts in flight), and a
 * session records its own inactivity timeout (null: SESSION_INACTIVITY_MINUTES).
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE login_attempts ADD COLUMN window_minutes integer;
    ALTER TABLE login_attempts ADD COLUMN pending integer NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN idle_timeout_sec integer;
  `);
}
