/**
 * No escalation through user administration: an administrator may give a user (a new one, or by
 * a change of roles) only roles whose every permission they hold themselves, as role
 * administration gives a role only permissions its author holds. Otherwise a holder of
 * `users.create` or `users.update` alone could make an account (their own, or one whose
 * temporary password they receive) an administrator. The CLI (no actor uuid) runs with the
 * database's own authority and is not checked.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import { RoleErrors } from '../roles/errors.js';
import type { UserStore } from '../users/store.js';

/** 403 PERMISSION_NOT_HELD (`details.permissions`, `details.roles`) when `added` grant a permission the actor lacks. */
export async function assertRolesHeld(db: Db, users: UserStore, actorUuid: string | null, added: string[]): Promise<void> {
  if (actorUuid === null || added.length === 0) return;
  const actor = await users.findByUuid(actorUuid, db);
  const held = actor ? (await users.grants(actor.id, db)).permissions : [];
  const rows = (await sql<{ role: string; permission: string }>`
    SELECT r.name AS role, p.name AS permission FROM roles r
    JOIN role_permissions rp ON rp.role_id = r.id JOIN permissions p ON p.id = rp.permission_id
    WHERE r.name IN (${sql.join(added)})`.execute(db)).rows;
  const missing = rows.filter((r) => !held.includes(r.permission));
  if (missing.length > 0) {
    throw RoleErrors.PERMISSION_NOT_HELD(
      { permissions: [...new Set(missing.map((m) => m.permission))].sort(), roles: [...new Set(missing.map((m) => m.role))].sort() },
      { message: 'You can give a user only roles whose permissions you hold yourself: leave out the roles listed in details, or ask an administrator who holds their permissions.' },
    );
  }
}
