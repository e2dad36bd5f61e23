/**
 * Indexes for the record clean-up jobs (RECORD_RETENTION_DAYS): ended or long-expired sessions
 * are deleted with their history and refresh families, and delivered or failed push messages
 * once they are old, in batches found through these indexes instead of scans. Expand only.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE INDEX sessions_expired_active ON sessions (expires_at) WHERE is_active;
    CREATE INDEX session_history_session ON session_history (session_id);
    CREATE INDEX push_messages_done ON push_messages (updated_at) WHERE status <> 'pending';
  `);
}
