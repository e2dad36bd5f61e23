/**
 * The real-time channel's events (issue 30, section 1): each event raised for a user (or one of
 * their sessions) is stored, so that the node holding the socket reads it when the NOTIFY reaches
 * it, and so that a client that reconnects gets what it missed (`resume`). Kept only
 * REALTIME_RESUME_MINUTES (the `realtime event clean-up` job). `id` orders a user's events: the
 * `after` of a resume. Expand only: a new table.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE realtime_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      session_id uuid,
      type text NOT NULL CHECK (type ~ '^[a-z][a-z0-9_.]{0,63}$'),
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX realtime_events_user_idx ON realtime_events (user_id, id);
    CREATE INDEX realtime_events_created_idx ON realtime_events (created_at)
  `);
}
