/**
 * Roles and permissions as stored (tables `roles`, `permissions`, `role_permissions`,
 * `user_roles`). Roles are named by `name`, their stable public id; the integer keys stay here.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';

export interface RoleView {
  name: string;
  description: string;
  builtIn: boolean;
  permissions: string[];
  /** How many users hold the role (deleted accounts aside). */
  holders: number;
}

export interface PermissionView {
  name: string;
  description: string;
  /** The roles that grant it, by name. */
  roles: string[];
}

/** A setting that names a role: deleting the role would leave it naming nothing (or a later role of the same name). */
export interface RoleReference {
  setting: 'access_policy' | 'channel_access' | 'ldap_group_roles';
  /** The policy's name, the channel, or the directory group. */
  name: string;
}

interface RoleRecord {
  name: string;
  description: string;
  built_in: boolean;
  permissions: string[];
  holders: number;
}

const view = (r: RoleRecord): RoleView => ({ name: r.name, description: r.description, builtIn: r.built_in, permissions: r.permissions, holders: r.holders });

export class RoleStore {
  constructor(private readonly db: Db) {}

  /** Every role (or the one named), its permissions sorted, and its holder count. */
  async list(trx: Db = this.db, name?: string): Promise<RoleView[]> {
    const rows = await sql<RoleRecord>`
      SELECT r.name, r.description, r.built_in,
        ARRAY(SELECT p.name FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id WHERE rp.role_id = r.id ORDER BY p.name) AS permissions,
        (SELECT count(*)::int FROM user_roles ur JOIN users u ON u.id = ur.user_id WHERE ur.role_id = r.id AND u.deleted_at IS NULL) AS holders
      FROM roles r ${name === undefined ? sql`` : sql`WHERE r.name = ${name}`}
      ORDER BY r.name`.execute(trx);
    return rows.rows.map(view);
  }

  async byName(name: string, trx: Db = this.db): Promise<RoleView | undefined> {
    return (await this.list(trx, name))[0];
  }

  /** Every permission with what it allows and the roles that grant it. */
  async permissions(trx: Db = this.db): Promise<PermissionView[]> {
    const rows = await sql<PermissionView>`
      SELECT p.name, p.description,
        ARRAY(SELECT r.name FROM role_permissions rp JOIN roles r ON r.id = rp.role_id WHERE rp.permission_id = p.id ORDER BY r.name) AS roles
      FROM permissions p ORDER BY p.name`.execute(trx);
    return rows.rows;
  }

  async permissionNames(trx: Db = this.db): Promise<string[]> {
    return (await trx.selectFrom('permissions').select('name').orderBy('name').execute()).map((p) => p.name);
  }

  /** Inserts the role; a taken name fails on the unique index (23505), so of two racing creates one wins. */
  async create(trx: Db, input: { name: string; description: string; permissions: string[] }): Promise<void> {
    const { id } = await trx.insertInto('roles').values({ name: input.name, description: input.description, built_in: false }).returning('id').executeTakeFirstOrThrow();
    await this.grant(trx, id, input.permissions);
  }

  /** The role's id and marker, its row locked until the transaction ends (changes and deletes of one role queue). */
  /**
   * Locks the role's row: `delete` FOR UPDATE (waits for every change that is giving the role to a
   * user: those hold it FOR KEY SHARE), `update` FOR NO KEY UPDATE (serialises changes of the role
   * without waiting for, or deadlocking with, users' role changes).
   */
  async lock(trx: Db, name: string, purpose: 'update' | 'delete'): Promise<{ id: number; built_in: boolean } | undefined> {
    const q = trx.selectFrom('roles').select(['id', 'built_in']).where('name', '=', name);
    return (purpose === 'delete' ? q.forUpdate() : q.forNoKeyUpdate()).executeTakeFirst();
  }

  async setDescription(trx: Db, id: number, description: string): Promise<void> {
    await trx.updateTable('roles').set({ description }).where('id', '=', id).execute();
  }

  /** Replaces the role's permissions. */
  async setPermissions(trx: Db, id: number, permissions: string[]): Promise<void> {
    await trx.deleteFrom('role_permissions').where('role_id', '=', id).execute();
    await this.grant(trx, id, permissions);
  }

  private async grant(trx: Db, roleId: number, permissions: string[]): Promise<void> {
    if (permissions.length === 0) return;
    await trx
      .insertInto('role_permissions')
      .columns(['role_id', 'permission_id'])
      .expression((eb) => eb.selectFrom('permissions').select([eb.val(roleId).as('role_id'), 'id']).where('name', 'in', permissions))
      .execute();
  }

  /**
   * The holders of the role who, as the role now stands, no longer hold one of `removed` through
   * any of their roles: the users whose tokens carry a permission they lost.
   */
  async holdersWhoLost(trx: Db, roleId: number, removed: string[]): Promise<number[]> {
    if (removed.length === 0) return [];
    // The holders' rows first, in id order (as a change of a user's roles and a sign-in lock
    // them): a concurrent change of a holder's own roles then commits before this reads what they
    // hold, or waits for it, so no holder keeps a permission both changes took away.
    await sql`SELECT id FROM users WHERE id IN (SELECT user_id FROM user_roles WHERE role_id = ${roleId}) ORDER BY id FOR UPDATE`.execute(trx);
    const rows = await sql<{ user_id: number }>`
      SELECT ur.user_id FROM user_roles ur
      WHERE ur.role_id = ${roleId} AND EXISTS (
        SELECT 1 FROM permissions p WHERE p.name IN (${sql.join(removed)}) AND NOT EXISTS (
          SELECT 1 FROM user_roles mine JOIN role_permissions rp ON rp.role_id = mine.role_id
          WHERE mine.user_id = ur.user_id AND rp.permission_id = p.id))
      ORDER BY ur.user_id`.execute(trx);
    return rows.rows.map((r) => r.user_id);
  }

  /** How many accounts hold the role, deleted accounts aside (they keep their roles, and can no longer change). */
  async holderCount(trx: Db, roleId: number): Promise<number> {
    const row = await trx.selectFrom('user_roles').innerJoin('users', 'users.id', 'user_roles.user_id')
      .select(sql<number>`count(*)::int`.as('n')).where('user_roles.role_id', '=', roleId).where('users.deleted_at', 'is', null).executeTakeFirst();
    return row?.n ?? 0;
  }

  /**
   * The access policies, channel rules and LDAP group mappings that name the role. (SAML's
   * group map is keyed by the built-in roles only, which are never deleted.)
   */
  async references(trx: Db, name: string): Promise<RoleReference[]> {
    const rows = await sql<RoleReference>`
      SELECT 'access_policy' AS setting, name FROM access_policies WHERE role = ${name}
      UNION ALL SELECT 'channel_access', channel FROM channel_access WHERE allowed_roles @> jsonb_build_array(${name}::text)
      UNION ALL SELECT 'ldap_group_roles', g.key FROM ldap_config, jsonb_each(ldap_config.group_roles) AS g WHERE g.value @> jsonb_build_array(${name}::text)
      ORDER BY 1, 2`.execute(trx);
    return rows.rows;
  }

  async delete(trx: Db, id: number): Promise<void> {
    await trx.deleteFrom('roles').where('id', '=', id).execute();
  }
}
