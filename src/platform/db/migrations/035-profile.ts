/**
 * Profile rectification (issue 28): the person's date of birth, and the contact changes waiting
 * for the code sent to the new address.
 *
 * - `users.date_of_birth`: an ISO date (`YYYY-MM-DD`), written like the email and the phone
 *   (`fe1:` ciphertext when DB_FIELD_ENCRYPTION=1, ENCRYPTED_COLUMNS.usersDateOfBirth); never
 *   searched, so no blind index.
 * - `profile_contact_changes`: one row per code sent for a new email or phone. `new_value` is the
 *   new address, written like the others (ENCRYPTED_COLUMNS.contactChangeValue); the code only as
 *   a keyed hash of `code:id`. A new request supersedes the live one of its kind; a row is used
 *   once (`consumed_at`), counts its attempts, and expires. The row is no claim on the address:
 *   the users table's unique blind indexes decide at confirmation.
 * Expand only: a nullable column and a new table.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE users ADD COLUMN date_of_birth text;

    CREATE TABLE profile_contact_changes (
      id uuid PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('email', 'phone')),
      new_value text NOT NULL,
      destination_masked text NOT NULL,
      code_hash text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      consumed_at timestamptz,
      superseded_at timestamptz,
      delivery_status text NOT NULL CHECK (delivery_status IN ('queued', 'sent', 'failed'))
    );
    CREATE INDEX profile_contact_changes_user ON profile_contact_changes (user_id, kind, created_at);
    CREATE INDEX profile_contact_changes_expiry ON profile_contact_changes (expires_at);
  `);
}
