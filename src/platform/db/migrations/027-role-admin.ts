/**
 * Role administration (issue 25, section 1): the five roles the service ships with are marked
 * `built_in` (their permissions are the migrations', so an administrator can neither delete them
 * nor change what they grant); administrators create the others from existing permissions.
 * Permissions `roles.read` (list roles and permissions) and `roles.manage` (create, change and
 * delete roles), both granted to the built-in `admin` role. Expand only: a column with a default
 * and two rows, so the previous release keeps working on the migrated schema.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export const BUILT_IN_ROLES = ['admin', 'staff', 'customer', 'operator', 'agent'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE roles ADD COLUMN built_in boolean NOT NULL DEFAULT false;
  `);
  await sql`UPDATE roles SET built_in = true WHERE name IN (${sql.join(BUILT_IN_ROLES)})`.execute(db);
  await sql`INSERT INTO permissions (name, description) VALUES
    ('roles.read', 'List roles with their permissions and holders, and the permissions there are'),
    ('roles.manage', 'Create roles from permissions, change and delete them (never the built-in roles'' permissions)')`.execute(db);
  await grantAllToAdmin(db);
}
