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

/** The actor's permissions as the database says now (a deleted or unknown actor holds none). */
async function heldBy(db: Db, users: UserStore, actorUuid: string): Promise<string[]> {
  const actor = await users.findByUuid(actorUuid, db);
  return actor ? (await users.grants(actor.id, db)).permissions : [];
}

/**
 * 403 PERMISSION_NOT_HELD (`details.permissions`) when the target account holds a permission the
 * actor lacks: an administrator changes, disables, deletes, unlocks, resets the password or PIN
 * of, or ends the sessions of, only accounts no more privileged than their own. Otherwise a
 * holder of `users.update` could re-address an administrator's email and reset their password.
 */
export async function assertTargetHeld(db: Db, users: UserStore, actorUuid: string | null, targetId: number): Promise<void> {
  if (actorUuid === null) return;
  const held = await heldBy(db, users, actorUuid);
  const missing = (await users.grants(targetId, db)).permissions.filter((p) => !held.includes(p));
  if (missing.length > 0) {
    throw RoleErrors.PERMISSION_NOT_HELD(
      { permissions: [...new Set(missing)].sort() },
      { message: 'This account holds permissions you do not hold (listed in details): only an administrator who holds them can change it, reset its credentials or end its sessions.' },
    );
  }
}

/** 403 PERMISSION_NOT_HELD (`details.permissions`, `details.roles`) when `added` grant a permission the actor lacks. */
export async function assertRolesHeld(db: Db, users: UserStore, actorUuid: string | null, added: string[]): Promise<void> {
  if (actorUuid === null || added.length === 0) return;
  const held = await heldBy(db, users, actorUuid);
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
