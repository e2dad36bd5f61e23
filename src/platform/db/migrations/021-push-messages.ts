/**
 * The push outbox (issue 14 section 2; SPEC "Push message": pending, then sent or failed): one row
 * per notification and device, written in the transaction of what causes it, claimed by the
 * delivery worker of any node (`FOR UPDATE SKIP LOCKED`, with a lease so that a crashed node's
 * claims come back), retried with backoff. Permission `notifications.send` for the platform's
 * services that send through it.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE push_messages (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      device_token_id integer REFERENCES device_tokens(id) ON DELETE SET NULL,
      title text NOT NULL,
      body text NOT NULL,
      data jsonb,
      image_url text,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      lease_until timestamptz,
      provider_message_id text,
      failure_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      sent_at timestamptz
    );
    CREATE INDEX push_messages_due ON push_messages (next_attempt_at, id) WHERE status = 'pending';
    CREATE INDEX push_messages_user ON push_messages (user_id, id);
  `);
  await sql`INSERT INTO permissions (name, description) VALUES ('notifications.send', 'Send push notifications to users (the platform''s other services)')`.execute(db);
  await grantAllToAdmin(db);
}
