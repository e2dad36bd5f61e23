/**
 * Data-subject rights (issue 28): the request log. One row per answered export, portability
 * document (and, later, erasure): who asked (`user_id` while the account exists, `user_uuid`
 * always), when, the kind, the format, the channel, whether the answer left under transport
 * encryption, and what was sent as `{section: row count}` (never the data itself): the record a
 * data-protection officer shows a regulator. Permission `gdpr.read` (list the log), granted to the
 * built-in `admin` role. Expand only: a new table and a permission.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE gdpr_requests (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id integer REFERENCES users(id) ON DELETE SET NULL,
      user_uuid uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('export', 'portability', 'erasure')),
      format text NOT NULL,
      channel text,
      encrypted boolean NOT NULL,
      sections jsonb NOT NULL,
      bytes integer NOT NULL,
      requested_at timestamptz NOT NULL
    );
    CREATE INDEX gdpr_requests_recent ON gdpr_requests (requested_at DESC, id);
    CREATE INDEX gdpr_requests_user ON gdpr_requests (user_uuid, requested_at DESC, id);
  `);
  await sql`INSERT INTO permissions (name, description) VALUES
    ('gdpr.read', 'Read the log of data-subject requests (exports, portability documents, erasures): who asked, when, in what format, and which sections with how many rows, never the data')`.execute(db);
  await grantAllToAdmin(db);
}
