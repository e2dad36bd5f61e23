/**
 * Data-subject rights (issue 28): erasure ("the right to be forgotten"). One row per request
 * (`gdpr_erasures`): pending through its grace period (`erase_after`), then cancelled or erased;
 * at most one pending per account. An operator's legal hold suspends a pending one (`held_at`,
 * `hold_reason`, `held_by`). The one-click cancel token of the notices is stored only as a keyed
 * hash. `users.erased_at` marks a tombstone. Permission `gdpr.hold`, granted to the built-in
 * `admin` role. Expand only: a new table, a nullable column and a permission.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE users ADD COLUMN erased_at timestamptz;
    CREATE TABLE gdpr_erasures (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      user_uuid uuid NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'cancelled', 'erased')),
      requested_at timestamptz NOT NULL,
      erase_after timestamptz NOT NULL,
      cancel_token_hash text UNIQUE,
      held_at timestamptz,
      held_by text,
      hold_reason text,
      ended_at timestamptz,
      ended_via text,
      counts jsonb
    );
    CREATE UNIQUE INDEX gdpr_erasures_one_pending ON gdpr_erasures (user_id) WHERE state = 'pending';
    CREATE INDEX gdpr_erasures_due ON gdpr_erasures (erase_after) WHERE state = 'pending';
  `);
  await sql`INSERT INTO permissions (name, description) VALUES
    ('gdpr.hold', 'Place and release a legal hold on a pending erasure (suspends it, with a reason)')`.execute(db);
  await grantAllToAdmin(db);
}
