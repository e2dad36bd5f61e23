/**
 * Role administration, shared by the HTTP routes and the CLI: create a role from existing
 * permissions, change its description and permissions, delete it. Every change is audited in
 * its transaction; the built-in roles keep the permissions the migrations give them.
 *
 * What a change does to tokens: access tokens carry the permissions as claims. A permission a
 * role gains reaches its holders at their next refresh or sign-in (refresh re-reads the grants);
 * a permission it loses ends, in the same transaction, every session of each holder who no
 * longer holds it through another role, so their tokens stop working at once.
 */
import type { AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import { AppError } from '../platform/errors.js';
import type { Who } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { UserStore } from '../users/store.js';
import { RoleErrors } from './errors.js';
import { heldBy } from './held.js';
import type { PermissionView, RoleStore, RoleView } from './store.js';

export interface RoleServiceDeps {
  db: Db;
  roles: RoleStore;
  users: UserStore;
  sessions: SessionService;
  audit: AuditLog;
}

export interface RoleChange {
  description?: string;
  /** The whole new set. */
  permissions?: string[];
  /** Or: permissions to add to and remove from the set as it stands (the CLI's --add, --remove). */
  add?: string[];
  remove?: string[];
}

/** The role's new permission set, or undefined when the change leaves it alone. */
function nextPermissions(current: string[], change: RoleChange): string[] | undefined {
  if (change.permissions !== undefined) return sorted(change.permissions);
  if (change.add === undefined && change.remove === undefined) return undefined;
  const removed = new Set(change.remove ?? []);
  return sorted([...current, ...(change.add ?? [])].filter((p) => !removed.has(p)));
}

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

export class RoleService {
  constructor(private readonly deps: RoleServiceDeps) {}

  list(): Promise<RoleView[]> {
    return this.deps.roles.list();
  }

  /** Every permission, what it allows and the roles that grant it. */
  permissionsList(): Promise<PermissionView[]> {
    return this.deps.roles.permissions();
  }

  async get(name: string): Promise<RoleView> {
    const role = await this.deps.roles.byName(name);
    if (!role) throw RoleErrors.ROLE_NOT_FOUND({ role: name });
    return role;
  }

  /** 409 ROLE_EXISTS when the name is taken (of two racing creates, the unique index lets one win). */
  async create(input: { name: string; description: string; permissions: string[] }, who: Who): Promise<RoleView> {
    const d = this.deps;
    const permissions = sorted(input.permissions);
    await this.checkKnown(permissions);
    await this.refuseUnheld(permissions, who, { role: input.name, event: 'ROLE_CREATED' });
    await d.db.transaction().execute(async (trx) => {
      await d.roles.create(trx, { ...input, permissions });
      await this.record(trx, 'ROLE_CREATED', who, { role: input.name, description: input.description, permissions });
    }).catch((err: unknown) => {
      if ((err as { code?: string }).code === '23505') throw RoleErrors.ROLE_EXISTS({ role: input.name });
      throw err;
    });
    return this.get(input.name);
  }

  /**
   * Changes the description and/or the permissions (the whole set). A built-in role's
   * permissions are refused (409 ROLE_BUILT_IN). Returns the role and how many holders were
   * signed out for a permission they lost.
   */
  async update(name: string, change: RoleChange, who: Who): Promise<{ role: RoleView; usersSignedOut: number }> {
    const d = this.deps;
    await this.checkKnown(sorted([...(change.permissions ?? []), ...(change.add ?? []), ...(change.remove ?? [])]));
    const held = await this.heldBy(who);
    const { ended, users } = await d.db.transaction().execute(async (trx) => {
      const locked = await d.roles.lock(trx, name, 'update');
      if (!locked) throw RoleErrors.ROLE_NOT_FOUND({ role: name });
      const before = (await d.roles.byName(name, trx))!;
      const wanted = nextPermissions(before.permissions, change);
      if (locked.built_in && wanted) throw RoleErrors.ROLE_BUILT_IN({ role: name, refused: 'permissions' });
      const added = wanted ? wanted.filter((p) => !before.permissions.includes(p)) : [];
      const removed = wanted ? before.permissions.filter((p) => !wanted.includes(p)) : [];
      const unheld = held === null ? [] : added.filter((p) => !held.includes(p));
      if (unheld.length > 0) throw RoleErrors.PERMISSION_NOT_HELD({ permissions: unheld });
      if (change.description !== undefined) await d.roles.setDescription(trx, locked.id, change.description);
      if (wanted) await d.roles.setPermissions(trx, locked.id, wanted);
      const users = await d.roles.holdersWhoLost(trx, locked.id, removed);
      const ended: string[] = [];
      for (const userId of users) ended.push(...(await d.sessions.endAllForUser(trx, userId, 'admin')));
      await this.record(trx, 'ROLE_UPDATED', who, {
        role: name, ...(change.description === undefined ? {} : { description: change.description, previous_description: before.description }),
        ...(wanted ? { permissions: wanted, added, removed } : {}), users_signed_out: users.length, sessions_ended: ended.length,
      });
      return { ended, users };
    }).catch(async (err: unknown) => {
      if (err instanceof AppError && err.code === 'PERMISSION_NOT_HELD') await this.record(d.db, 'ROLE_UPDATED', who, { role: name, refused: err.details.permissions }, 'FAILURE');
      throw err;
    });
    await d.sessions.announce(ended);
    return { role: await this.get(name), usersSignedOut: users.length };
  }

  /**
   * Deletes a role no one holds and no setting names: 409 ROLE_IN_USE otherwise (a deleted name
   * left in an access policy or a group mapping would apply to any later role of that name).
   */
  async delete(name: string, who: Who): Promise<RoleView> {
    const d = this.deps;
    return d.db.transaction().execute(async (trx) => {
      const locked = await d.roles.lock(trx, name, 'delete');
      if (!locked) throw RoleErrors.ROLE_NOT_FOUND({ role: name });
      if (locked.built_in) throw RoleErrors.ROLE_BUILT_IN({ role: name, refused: 'delete' });
      const holders = await d.roles.holderCount(trx, locked.id);
      const references = await d.roles.references(trx, name);
      if (holders > 0 || references.length > 0) throw RoleErrors.ROLE_IN_USE({ role: name, holders, references });
      const before = (await d.roles.byName(name, trx))!;
      await d.roles.delete(trx, locked.id);
      await this.record(trx, 'ROLE_DELETED', who, { role: name, description: before.description, permissions: before.permissions });
      return before;
    });
  }

  private async checkKnown(permissions: string[]): Promise<void> {
    const known = await this.deps.roles.permissionNames();
    const unknown = permissions.filter((p) => !known.includes(p));
    if (unknown.length > 0) throw RoleErrors.UNKNOWN_PERMISSION({ unknown_permissions: unknown, known_permissions: known });
  }

  /**
   * What the actor holds now (their roles as stored, not their token's possibly older claims);
   * null for the operator's CLI, which acts with the database's authority.
   */
  private async heldBy(who: Who): Promise<string[] | null> {
    return heldBy(this.deps.db, this.deps.users, who.actor.uuid);
  }

  /** 403 PERMISSION_NOT_HELD (audited) when a new role would grant what the actor does not hold. */
  private async refuseUnheld(permissions: string[], who: Who, at: { role: string; event: 'ROLE_CREATED' }): Promise<void> {
    const held = await this.heldBy(who);
    const unheld = held === null ? [] : permissions.filter((p) => !held.includes(p));
    if (unheld.length === 0) return;
    await this.record(this.deps.db, at.event, who, { role: at.role, refused: unheld }, 'FAILURE');
    throw RoleErrors.PERMISSION_NOT_HELD({ permissions: unheld });
  }

  private async record(trx: Db, eventType: 'ROLE_CREATED' | 'ROLE_UPDATED' | 'ROLE_DELETED', who: Who, details: Record<string, unknown>, status: 'SUCCESS' | 'FAILURE' = 'SUCCESS'): Promise<void> {
    await this.deps.audit.record({ ...who.context, eventType, status, userId: who.actor.uuid, username: who.actor.username, details }, trx);
  }
}
