/**
 * Account recovery, phase 2 (issue 27): a branch's approval. Each workflow gets a short
 * `reference` the person reads to the operator at the desk (8 characters of an unambiguous
 * alphabet, unique; a decoy has one too, so the status reads alike, but it is never listed), and
 * `initiated_by`, the operator who started it for a customer at the desk (who may then not
 * approve it). A verified `mfa` or `device` workflow waits (`waiting`) until `waiting_until`, its
 * `cooling_off_hours` recorded (the customers' or the staff's setting). Every notice carries a
 * single-use cancel token ("this was not me"), stored only as a keyed hash; its use locks
 * recovery for the account until `recovery_locks.locked_until`. Permission `recovery.approve` (list and decide branch approvals, start a recovery
 * for a customer), granted to the built-in `admin` role. Expand only: nullable columns, an index,
 * a permission; the previous release keeps working on the migrated schema.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE recovery_workflows ADD COLUMN reference text;
    ALTER TABLE recovery_workflows ADD COLUMN initiated_by integer REFERENCES users(id) ON DELETE SET NULL;
    CREATE UNIQUE INDEX recovery_workflows_reference ON recovery_workflows (reference) WHERE reference IS NOT NULL;
    ALTER TABLE recovery_workflows ADD COLUMN waiting_until timestamptz;
    ALTER TABLE recovery_workflows ADD COLUMN cooling_off_hours integer;
    CREATE INDEX recovery_workflows_waiting ON recovery_workflows (waiting_until) WHERE state = 'waiting';

    CREATE TABLE recovery_cancel_tokens (
      token_hash text PRIMARY KEY,
      workflow_id uuid NOT NULL REFERENCES recovery_workflows(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      used_at timestamptz
    );
    CREATE INDEX recovery_cancel_tokens_workflow ON recovery_cancel_tokens (workflow_id);

    CREATE TABLE recovery_locks (
      user_id integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
      locked_until timestamptz NOT NULL
    );
  `);
  await sql`INSERT INTO permissions (name, description) VALUES
    ('recovery.approve', 'Approve or reject a customer''s account recovery after checking their identity document in a branch, and start one for them at the desk')`.execute(db);
  await grantAllToAdmin(db);
}
