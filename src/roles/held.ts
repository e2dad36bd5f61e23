/**
 * No escalation: an administrator gives a role only permissions they hold, gives a user (a new
 * one, or by a change of roles) only roles whose every permission they hold, and acts only on
 * accounts whose every permission they hold. Otherwise a holder of
 * `users.create` or `users.update` alone could make an account (their own, or one whose
 * temporary password they receive) an administrator. The CLI (no actor uuid) runs with the
 * database's own authority and is not checked.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import { RoleErrors } from './errors.js';
import type { UserStore } from '../users/store.js';

/**
 * The actor's permissions as the database says now (a deleted or unknown actor holds none);
 * null for the CLI (no actor uuid), which acts with the database's own authority.
 */
export async function heldBy(db: Db, users: UserStore, actorUuid: string | null): Promise<string[] | null> {
  if (actorUuid === null) return null;
  const actor = await users.findByUuid(actorUuid, db);
  return actor ? (await users.grants(actor.id, db)).permissions : [];
}

/**
 * 403 ACCOUNT_MORE_PRIVILEGED (`details.permissions`) when the target account holds a permission the
 * actor lacks (`held`, from `heldBy`): an administrator changes, disables, deletes, unlocks,
 * resets the password or PIN of, or ends the sessions of, only accounts no more privileged than
 * their own. Otherwise a holder of `users.update` could re-address an administrator's email and
 * reset their password.
 */
export function assertHeld(held: string[] | null, targetPermissions: string[]): void {
  const missing = held === null ? [] : targetPermissions.filter((p) => !held.includes(p));
  if (missing.length > 0) {
    throw RoleErrors.ACCOUNT_MORE_PRIVILEGED({ permissions: [...new Set(missing)].sort() });
  }
}

/** `assertHeld` for a caller that has read neither the actor's permissions nor the target's. */
export async function assertTargetHeld(db: Db, users: UserStore, actorUuid: string | null, targetId: number): Promise<void> {
  const held = await heldBy(db, users, actorUuid);
  if (held !== null) assertHeld(held, (await users.grants(targetId, db)).permissions);
}

/** 403 PERMISSION_NOT_HELD (`details.permissions`, `details.roles`) when `added` grant a permission the actor lacks. */
export async function assertRolesHeld(db: Db, held: string[] | null, added: string[]): Promise<void> {
  if (held === null || added.length === 0) return;
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
