/** The core schema: users, credentials, roles, sessions, tokens, attempts, audit. */
import { sql, type Kysely } from 'kysely';
import { runScript } from './script.js';

export const ROLES = [
  ['admin', 'Administrator: holds every permission'],
  ['staff', 'Bank staff'],
  ['customer', 'Bank customer'],
  ['operator', 'Branch or back-office operator'],
  ['agent', 'Banking agent'],
] as const;

export const PERMISSIONS = [
  ['users.create', 'Create users'],
  ['users.read', 'List and read users'],
  ['users.update', 'Reset passwords, unlock, change users'],
  ['audit.read', 'Read the audit log'],
  ['config.manage', 'Read and change LDAP and SAML configuration'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE users (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      uuid uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
      username text NOT NULL,
      email text,
      phone text,
      full_name text,
      is_active boolean NOT NULL DEFAULT true,
      is_service_account boolean NOT NULL DEFAULT false,
      must_change_password boolean NOT NULL DEFAULT false,
      last_login_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE UNIQUE INDEX users_username_lower ON users (lower(username));
    CREATE UNIQUE INDEX users_email_lower ON users (lower(email)) WHERE email IS NOT NULL;

    CREATE TABLE credentials (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      type text NOT NULL,
      username text NOT NULL,
      password_hash text,
      password_enc text,
      changed_at timestamptz NOT NULL,
      expires_at timestamptz,
      is_temporary boolean NOT NULL DEFAULT false,
      UNIQUE (user_id, type)
    );

    CREATE TABLE credential_history (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      type text NOT NULL,
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX credential_history_user ON credential_history (user_id, type, created_at DESC);

    CREATE TABLE roles (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL UNIQUE,
      description text NOT NULL
    );
    CREATE TABLE permissions (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL UNIQUE,
      description text NOT NULL
    );
    CREATE TABLE role_permissions (
      role_id integer NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      permission_id integer NOT NULL REFERENCES permissions(id) ON DELETE CASCADE,
      PRIMARY KEY (role_id, permission_id)
    );
    CREATE TABLE user_roles (
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role_id integer NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      PRIMARY KEY (user_id, role_id)
    );

    CREATE TABLE sessions (
      session_id uuid PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      last_activity timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      device_fingerprint text NOT NULL,
      ip_address text NOT NULL,
      user_agent text NOT NULL,
      is_active boolean NOT NULL,
      mfa_completed boolean NOT NULL,
      channel text NOT NULL,
      aes_key text,
      ended_at timestamptz,
      end_reason text
    );
    CREATE INDEX sessions_user_active ON sessions (user_id, created_at) WHERE is_active;
    CREATE INDEX sessions_ended_at ON sessions (ended_at) WHERE ended_at IS NOT NULL;

    CREATE TABLE session_history (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      session_id uuid NOT NULL,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      event text NOT NULL,
      reason text,
      at timestamptz NOT NULL
    );
    CREATE INDEX session_history_user ON session_history (user_id, at DESC);

    CREATE TABLE token_denylist (
      jti text PRIMARY KEY,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      reason text NOT NULL
    );
    CREATE INDEX token_denylist_created ON token_denylist (created_at);

    CREATE TABLE refresh_families (
      family_id uuid PRIMARY KEY,
      session_id uuid NOT NULL,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz,
      revoke_reason text
    );
    CREATE INDEX refresh_families_session ON refresh_families (session_id);
    CREATE TABLE refresh_tokens (
      jti text PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES refresh_families(family_id) ON DELETE CASCADE,
      issued_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    );

    CREATE TABLE login_attempts (
      subject_key text PRIMARY KEY,
      failed_count integer NOT NULL,
      window_started_at timestamptz NOT NULL,
      last_failed_at timestamptz NOT NULL,
      locked_until timestamptz
    );

    CREATE TABLE rate_limits (
      key text NOT NULL,
      window_start timestamptz NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (key, window_start)
    );

    CREATE TABLE password_restrictions (
      account_class text PRIMARY KEY CHECK (account_class IN ('admin', 'regular', 'service')),
      min_length integer NOT NULL,
      max_bytes integer NOT NULL,
      require_upper boolean NOT NULL,
      require_lower boolean NOT NULL,
      require_digit boolean NOT NULL,
      require_symbol boolean NOT NULL,
      history_count integer NOT NULL,
      reuse_months integer NOT NULL,
      expiry_days integer,
      warn_days integer NOT NULL
    );
    INSERT INTO password_restrictions VALUES
      ('admin',   12, 72, true, true, true, true, 8, 12, 60,   7),
      ('regular', 12, 72, true, true, true, true, 8, 12, 90,   7),
      ('service', 12, 72, true, true, true, true, 8, 12, NULL, 7);

    CREATE TABLE audit_log (
      audit_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      timestamp timestamptz NOT NULL,
      event_type text NOT NULL,
      user_id text,
      username text,
      status text NOT NULL,
      ip_address text,
      device_fingerprint text,
      user_agent text,
      channel text,
      mfa_method text,
      location jsonb,
      security_events jsonb NOT NULL DEFAULT '[]',
      risk_score real,
      suspicious_indicators jsonb NOT NULL DEFAULT '[]',
      details jsonb NOT NULL DEFAULT '{}'
    );
    CREATE INDEX audit_log_time ON audit_log (timestamp DESC);
    CREATE INDEX audit_log_user_time ON audit_log (user_id, timestamp DESC);
    CREATE INDEX audit_log_event_time ON audit_log (event_type, timestamp DESC);

    CREATE TABLE jwt_signing_keys (
      version integer GENERATED ALWAYS AS IDENTITY UNIQUE,
      kid text PRIMARY KEY,
      secret_enc text NOT NULL,
      created_at timestamptz NOT NULL
    );
  `);

  for (const [name, description] of ROLES) {
    await sql`INSERT INTO roles (name, description) VALUES (${name}, ${description})`.execute(db);
  }
  for (const [name, description] of PERMISSIONS) {
    await sql`INSERT INTO permissions (name, description) VALUES (${name}, ${description})`.execute(db);
  }
  await grantAllToAdmin(db);
}

/** The admin role holds every permission; later migrations that add permissions call this too. */
export async function grantAllToAdmin(db: Kysely<unknown>): Promise<void> {
  await sql`
    INSERT INTO role_permissions (role_id, permission_id)
    SELECT r.id, p.id FROM roles r CROSS JOIN permissions p WHERE r.name = 'admin'
    ON CONFLICT DO NOTHING`.execute(db);
}
