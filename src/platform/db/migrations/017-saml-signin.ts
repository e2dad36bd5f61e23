/**
 * SAML sign-in (issue 12), what the assertion consumer keeps:
 * - `saml_assertions`: every accepted assertion's ID, until it could no longer be accepted
 *   anyway (its NotOnOrAfter plus the clock skew), so that a response replayed to any node is
 *   refused. The primary key is the reservation: of two posts of one assertion, one inserts.
 * - `saml_codes`: one-time codes of the browser flow (the ACS redirects to the RelayState with
 *   one; the client exchanges it for the tokens, or for the second-factor challenge). Stored as
 *   a SHA-256 hash, spent by DELETE ... RETURNING, alive one minute.
 * - `saml_sessions`: which IdP session (NameID, SessionIndex) a session of ours came from, for
 *   single logout.
 * - `saml_sp_keys`: the service provider's signing keys (its LogoutRequests and LogoutResponses),
 *   each private key sealed with the master key, its self-signed certificate published in the
 *   metadata; the newest signs, the one before stays published until the next rotation.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE saml_assertions (
      issuer text NOT NULL,
      assertion_id text NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (issuer, assertion_id)
    );
    CREATE INDEX saml_assertions_expiry ON saml_assertions (expires_at);

    CREATE TABLE saml_codes (
      code_hash bytea PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      channel text NOT NULL CHECK (channel IN ('web', 'mobile', 'ussd', 'agent')),
      issuer text NOT NULL,
      name_id text NOT NULL,
      session_index text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX saml_codes_expiry ON saml_codes (expires_at);

    CREATE TABLE saml_sessions (
      session_id uuid PRIMARY KEY REFERENCES sessions(session_id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      issuer text NOT NULL,
      name_id text NOT NULL,
      session_index text,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX saml_sessions_subject ON saml_sessions (issuer, name_id);

    CREATE TABLE saml_sp_keys (
      key_id text PRIMARY KEY,
      seq integer GENERATED ALWAYS AS IDENTITY UNIQUE,
      private_key_enc text NOT NULL,
      certificate text NOT NULL,
      created_at timestamptz NOT NULL,
      retired_at timestamptz
    );
  `);
}
