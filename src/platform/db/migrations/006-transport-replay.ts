/**
 * Pre-auth envelope replay cache (issue 9, section 5): the SHA-256 of each accepted pre-auth
 * envelope's `encrypted_key`, kept for TRANSPORT_REPLAY_WINDOW_SECONDS so that every node
 * refuses an envelope any node accepted within the window. Rows past the window are deleted
 * by the `transport replay clean-up` job (and are reusable before that).
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE transport_replay (
      digest bytea PRIMARY KEY,
      seen_at timestamptz NOT NULL
    );
    CREATE INDEX transport_replay_seen_at ON transport_replay (seen_at);
  `);
}
