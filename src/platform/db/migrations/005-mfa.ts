/**
 * Multi-factor authentication (SPEC "Second factors", "MFA and 2FA", "Security questions"):
 * enrolled factors, backup codes, one-time codes with their delivery state, attempt counters,
 * the security-question pool and answers, and MFA-reset requests with their workflow state.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export const MFA_PERMISSIONS = [
  ['delete_security_question', 'Delete a user\'s security questions or retire a question from the pool'],
  ['approve_mfa_reset', 'Approve a user\'s request to reset their second factors'],
  ['reject_mfa_reset', 'Reject a user\'s request to reset their second factors'],
  ['security_questions.manage', 'Add questions to the security-question pool'],
] as const;

/** The seeded pool (SPEC: 30 or more). Answers should be stable, memorable and not public. */
export const SEEDED_QUESTIONS = [
  'What was the name of your first pet?',
  'What is the name of the street you grew up on?',
  'What was the first name of your best friend in primary school?',
  'What was the make and model of your first car or bicycle?',
  'In what town or village was your mother born?',
  'In what town or village was your father born?',
  'What was the name of your first teacher?',
  'What is the middle name of your oldest sibling?',
  'What was the name of the first school you attended?',
  'What was your childhood nickname?',
  'What is the name of the town where your parents met?',
  'What was the first concert or live show you attended?',
  'What was the name of your favourite childhood toy?',
  'What was the first dish you learned to cook?',
  'What is the first name of your oldest cousin?',
  'What was the name of the hospital where you were born?',
  'What was your favourite subject in secondary school?',
  'What was the name of your first employer?',
  'What was the title of the first book you remember reading?',
  'What was the name of your favourite childhood friend\'s street?',
  'What was the first name of your first manager?',
  'What sport did you play most as a child?',
  'What was the name of your favourite teacher in secondary school?',
  'Where did you go on your first holiday away from home?',
  'What was the first mobile phone you owned?',
  'What is the name of a place you visited that you will never forget?',
  'What was the name of the village of your grandparents?',
  'What was the colour of the first house you lived in?',
  'What was the first musical instrument you learned to play?',
  'What was the name of the first film you saw in a cinema?',
  'What was your first job title?',
  'What is the first name of the person who taught you to drive or ride?',
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE mfa_factors (
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      method text NOT NULL CHECK (method IN ('totp', 'email', 'sms')),
      status text NOT NULL CHECK (status IN ('pending', 'active')),
      secret_enc text,
      algorithm text,
      last_used_step bigint,
      created_at timestamptz NOT NULL,
      confirmed_at timestamptz,
      PRIMARY KEY (user_id, method)
    );

    CREATE TABLE mfa_backup_codes (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      code_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      used_at timestamptz,
      UNIQUE (user_id, code_hash)
    );

    CREATE TABLE mfa_attempts (
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      factor text NOT NULL,
      failed_count integer NOT NULL,
      window_started_at timestamptz NOT NULL,
      locked_until timestamptz,
      PRIMARY KEY (user_id, factor)
    );

    CREATE TABLE mfa_otp_codes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      challenge text NOT NULL,
      purpose text NOT NULL CHECK (purpose IN ('signin', 'stepup', 'enroll')),
      method text NOT NULL CHECK (method IN ('email', 'sms')),
      code_hash text NOT NULL,
      destination_masked text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      consumed_at timestamptz,
      superseded_at timestamptz,
      delivery_status text NOT NULL CHECK (delivery_status IN ('queued', 'sent', 'failed')),
      delivery_ref text,
      delivery_error text,
      delivered_at timestamptz
    );
    CREATE INDEX mfa_otp_codes_challenge ON mfa_otp_codes (challenge, created_at DESC);
    CREATE INDEX mfa_otp_codes_expiry ON mfa_otp_codes (expires_at);

    CREATE TABLE security_questions (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      text text NOT NULL,
      is_active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL,
      created_by text
    );
    CREATE UNIQUE INDEX security_questions_text ON security_questions (lower(text));

    CREATE TABLE user_security_answers (
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      question_id integer NOT NULL REFERENCES security_questions(id),
      answer_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, question_id)
    );

    CREATE TABLE security_question_challenges (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      question_ids jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      consumed_at timestamptz
    );

    CREATE TABLE mfa_reset_requests (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'completed')),
      reason text NOT NULL,
      proof text NOT NULL,
      requested_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      decided_at timestamptz,
      decided_by text,
      decision_note text,
      completed_at timestamptz
    );
    CREATE UNIQUE INDEX mfa_reset_requests_open ON mfa_reset_requests (user_id) WHERE status IN ('pending', 'approved');
    CREATE INDEX mfa_reset_requests_status ON mfa_reset_requests (status, requested_at);

    ALTER TABLE sessions ADD COLUMN mfa_verified_at timestamptz;
  `);
  const now = new Date();
  for (const text of SEEDED_QUESTIONS) {
    await sql`INSERT INTO security_questions (text, is_active, created_at, created_by) VALUES (${text}, true, ${now}, 'seed')`.execute(db);
  }
  for (const [name, description] of MFA_PERMISSIONS) {
    await sql`INSERT INTO permissions (name, description) VALUES (${name}, ${description})`.execute(db);
  }
  await grantAllToAdmin(db);
}
