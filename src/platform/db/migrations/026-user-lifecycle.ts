/**
 * User lifecycle administration (issue 25, section 1): a soft-deleted account keeps its row (the
 * audit trail and the links refer to it) with `deleted_at` and `deleted_by` (the administrator's
 * uuid) set and `is_active` false; erasing it belongs to the data-rights work. Permission
 * `users.delete` (soft-delete an account), granted to the built-in `admin` role. Expand only: two
 * nullable columns and one row, so the previous release keeps working on the migrated schema.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE users ADD COLUMN deleted_at timestamptz;
    ALTER TABLE users ADD COLUMN deleted_by uuid;
  `);
  await sql`INSERT INTO permissions (name, description) VALUES ('users.delete', 'Delete users (soft: the account is disabled and marked deleted)')`.execute(db);
  await grantAllToAdmin(db);
}
