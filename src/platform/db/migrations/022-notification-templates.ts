/**
 * Push templates and the user's language (issue 14 section 3): `notification_templates`, one row
 * per channel, language and name, seeded with SPEC's named templates in en, pt and fr;
 * `users.language` (null: the fallback, en); `push` as a one-time code method of the MFA work;
 * permission `notifications.templates` for the administrators who word them.
 */
import { sql, type Kysely } from 'kysely';
import { NAMED_TEMPLATES } from '../../../notifications/templates/catalogue.js';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE users ADD COLUMN language text CHECK (language IN ('en', 'pt', 'fr'));

    CREATE TABLE notification_templates (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      channel text NOT NULL CHECK (channel IN ('push')),
      language text NOT NULL CHECK (language IN ('en', 'pt', 'fr')),
      name text NOT NULL CHECK (name ~ '^[A-Za-z][A-Za-z0-9_]{0,63}$'),
      subject text NOT NULL,
      message text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (channel, name, language)
    );

    ALTER TABLE mfa_factors DROP CONSTRAINT mfa_factors_method_check;
    ALTER TABLE mfa_factors ADD CONSTRAINT mfa_factors_method_check CHECK (method IN ('totp', 'email', 'sms', 'push'));
    ALTER TABLE mfa_otp_codes DROP CONSTRAINT mfa_otp_codes_method_check;
    ALTER TABLE mfa_otp_codes ADD CONSTRAINT mfa_otp_codes_method_check CHECK (method IN ('email', 'sms', 'push'));
  `);
  const now = new Date();
  for (const [name, t] of Object.entries(NAMED_TEMPLATES)) {
    for (const [language, { subject, message }] of Object.entries(t.text)) {
      await sql`INSERT INTO notification_templates (channel, language, name, subject, message, created_at, updated_at) VALUES ('push', ${language}, ${name}, ${subject}, ${message}, ${now}, ${now})`.execute(db);
    }
  }
  await sql`INSERT INTO permissions (name, description) VALUES ('notifications.templates', 'Word the notification templates')`.execute(db);
  await grantAllToAdmin(db);
}
