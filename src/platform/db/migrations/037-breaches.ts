/**
 * Personal-data breaches (issue 28): the record a supervisory authority asks for (`breaches`),
 * the accounts found affected from the audit trail (`breach_affected`), and one notice per
 * affected account and channel (`breach_notices`), claimed atomically by the background sender
 * so that none is sent twice. `breach_try_inet` reads an audit row's client address as `inet`,
 * or null when it is not one (a scope by network never fails on an odd row). Permission
 * `breach.manage`, granted to the built-in `admin` role. Expand only: new tables, a function
 * and a permission; the previous release keeps working on the migrated schema.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE breaches (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      occurred_from timestamptz NOT NULL,
      occurred_to timestamptz NOT NULL,
      aware_at timestamptz NOT NULL,
      deadline_at timestamptz NOT NULL,
      categories jsonb NOT NULL,
      scope jsonb NOT NULL,
      description text NOT NULL,
      consequences text NOT NULL,
      measures text NOT NULL,
      contact_point text NOT NULL,
      notify_subjects boolean NOT NULL,
      affected_count integer NOT NULL,
      records_count bigint NOT NULL,
      recorded_by text NOT NULL,
      recorded_at timestamptz NOT NULL,
      reported_at timestamptz,
      reported_by text,
      authority_reference text,
      closed_at timestamptz,
      closed_by text,
      closing_note text,
      CHECK (occurred_from < occurred_to)
    );
    CREATE INDEX breaches_recorded ON breaches (recorded_at DESC);
    CREATE INDEX breaches_unreported ON breaches (deadline_at) WHERE reported_at IS NULL AND closed_at IS NULL;

    CREATE TABLE breach_affected (
      breach_id uuid NOT NULL REFERENCES breaches(id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      events integer NOT NULL,
      PRIMARY KEY (breach_id, user_id)
    );
    CREATE INDEX breach_affected_user ON breach_affected (user_id);

    CREATE TABLE breach_notices (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      breach_id uuid NOT NULL REFERENCES breaches(id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      channel text NOT NULL CHECK (channel IN ('email', 'sms')),
      state text NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'no_contact')),
      attempts integer NOT NULL DEFAULT 0,
      not_before timestamptz NOT NULL,
      claimed_at timestamptz,
      done_at timestamptz,
      reason text,
      UNIQUE (breach_id, user_id, channel)
    );
    CREATE INDEX breach_notices_due ON breach_notices (not_before) WHERE state = 'pending';
    CREATE INDEX breach_notices_claimed ON breach_notices (claimed_at) WHERE state = 'sending';
    CREATE INDEX breach_notices_user ON breach_notices (user_id);

    CREATE FUNCTION breach_try_inet(address text) RETURNS inet LANGUAGE plpgsql IMMUTABLE STRICT AS $$ BEGIN RETURN address::inet; EXCEPTION WHEN others THEN RETURN NULL; END $$;
  `);
  await sql`INSERT INTO permissions (name, description) VALUES
    ('breach.manage', 'Record personal-data breaches, find the accounts affected from the audit trail, notify them, and record the report to the supervisory authority')`.execute(db);
  await grantAllToAdmin(db);
}
