/**
 * Passkeys (issue 30, section 3): WebAuthn credentials, several per user with the names their
 * owner gives them, as passwordless sign-in and as the `passkey` second factor; and the WebAuthn
 * challenges, each single use and expiring (consumed by a conditional UPDATE before the answer is
 * verified). A passkey whose signature counter went back (a cloned authenticator) is suspended
 * (`suspended_at`) and refused from then on. A challenge of a passwordless sign-in names no user (the credential does, once
 * answered); one asked as a second factor is bound to the 2FA token's `jti`. Expand only: two new
 * tables and a wider CHECK on `mfa_factors.method`.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE passkeys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      credential_id text NOT NULL UNIQUE,
      public_key text NOT NULL,
      sign_count bigint NOT NULL DEFAULT 0,
      transports text[] NOT NULL DEFAULT '{}',
      device_type text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
      backed_up boolean NOT NULL,
      aaguid text NOT NULL,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      suspended_at timestamptz
    );
    CREATE INDEX passkeys_user_idx ON passkeys (user_id, created_at);

    CREATE TABLE webauthn_challenges (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id integer REFERENCES users(id) ON DELETE CASCADE,
      purpose text NOT NULL CHECK (purpose IN ('register', 'signin', 'second_factor', 'step_up')),
      challenge text NOT NULL,
      two_factor_jti text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      CHECK ((purpose = 'signin') = (user_id IS NULL)),
      CHECK ((purpose = 'second_factor') = (two_factor_jti IS NOT NULL))
    );
    CREATE INDEX webauthn_challenges_expiry_idx ON webauthn_challenges (expires_at);
    CREATE INDEX webauthn_challenges_user_idx ON webauthn_challenges (user_id) WHERE user_id IS NOT NULL;

    ALTER TABLE mfa_factors DROP CONSTRAINT mfa_factors_method_check;
    ALTER TABLE mfa_factors ADD CONSTRAINT mfa_factors_method_check CHECK (method IN ('totp', 'email', 'sms', 'push', 'passkey'))
  `);
}
