/**
 * SPEC "Device token" (issue 14 section 1): a user's push tokens. `push_token` is stored
 * encrypted when DB_FIELD_ENCRYPTION=1 (SPEC Transport encryption 9; ENCRYPTED_COLUMNS
 * .devicePushToken) and is unique by its blind index `push_token_bidx`, never by its text. A
 * token goes with its user (ON DELETE CASCADE).
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE device_tokens (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      push_token text NOT NULL,
      push_token_bidx text NOT NULL UNIQUE,
      platform text NOT NULL CHECK (platform IN ('mobile', 'web')),
      device_name text,
      is_active boolean NOT NULL DEFAULT true,
      last_used_at timestamptz,
      created_on timestamptz NOT NULL,
      updated_on timestamptz NOT NULL
    );
    CREATE INDEX device_tokens_user ON device_tokens (user_id, id);
  `);
}
