/**
 * The responses to a suspicious sign-in (issue 29, section 3): `risk_notices`, one row per notice
 * told to an account holder about a sign-in of theirs (what happened, when, the city and country,
 * the browser and system the device named; never the address), recorded once per event (a UNIQUE
 * dedupe key), claimed once for sending, and holding the keyed hash of the notice's single-use
 * "this was not me" token; and `users.security_locked_at`: set when the holder answers "this was
 * not me", refusing every sign-in until an account recovery completes or an administrator lifts
 * it. Expand only: a new table and a nullable column.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE users ADD COLUMN security_locked_at timestamptz;
    CREATE TABLE risk_notices (
      id uuid PRIMARY KEY,
      dedupe_key text NOT NULL CONSTRAINT risk_notices_dedupe UNIQUE,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      outcome text NOT NULL CHECK (outcome IN ('signed_in', 'second_factor_required')),
      occurred_at timestamptz NOT NULL,
      country text,
      city text,
      browser text,
      system text,
      channel text NOT NULL,
      audit_id uuid,
      score real NOT NULL,
      token_hash text CONSTRAINT risk_notices_token UNIQUE,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      sent_at timestamptz,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX risk_notices_unsent ON risk_notices (created_at, id) WHERE sent_at IS NULL;
    CREATE INDEX risk_notices_expiry ON risk_notices (expires_at);
    CREATE INDEX risk_notices_user ON risk_notices (user_id)
  `);
}
