/**
 * Push approval (issue 30, section 2): the `push_approval` second factor. A user's enrolled key
 * (one per user: a P-256 public key made in the phone's secure hardware, bound to one mobile
 * device token), confirmed once the phone has signed the enrolment challenge; and the sign-in
 * requests the phone answers (a number to pick among three, approve or deny), each answered at
 * most once by a conditional UPDATE. A new phone's key waits in the `pending_*` columns until
 * confirmed, so the working key keeps working until then; `paused_until` is set by a fraud
 * report. Expand only: two new tables and a wider CHECK on
 * `mfa_factors.method`.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE push_approval_keys (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
      device_token_id integer NOT NULL REFERENCES device_tokens(id) ON DELETE CASCADE,
      public_key text NOT NULL,
      pending_public_key text,
      pending_device_token_id integer REFERENCES device_tokens(id) ON DELETE SET NULL,
      enrol_challenge text,
      enrol_expires_at timestamptz,
      confirmed_at timestamptz,
      paused_until timestamptz,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX push_approval_keys_device_idx ON push_approval_keys (device_token_id);

    CREATE TABLE push_approval_requests (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      two_factor_jti text NOT NULL,
      number smallint NOT NULL CHECK (number BETWEEN 10 AND 99),
      choices smallint[] NOT NULL CHECK (cardinality(choices) = 3),
      state text NOT NULL CHECK (state IN ('pending', 'approved', 'denied')),
      deny_reason text CHECK (deny_reason IN ('denied', 'wrong_number', 'fraud_reported', 'superseded', 'factor_removed')),
      country text,
      city text,
      browser text,
      system text,
      channel text NOT NULL,
      requested_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      answered_at timestamptz,
      CHECK ((state = 'denied') = (deny_reason IS NOT NULL))
    );
    CREATE INDEX push_approval_requests_user_idx ON push_approval_requests (user_id, requested_at);
    CREATE INDEX push_approval_requests_jti_idx ON push_approval_requests (two_factor_jti);
    CREATE INDEX push_approval_requests_expiry_idx ON push_approval_requests (expires_at);

    ALTER TABLE mfa_factors DROP CONSTRAINT mfa_factors_method_check;
    ALTER TABLE mfa_factors ADD CONSTRAINT mfa_factors_method_check CHECK (method IN ('totp', 'email', 'sms', 'push', 'passkey', 'push_approval'))
  `);
}
