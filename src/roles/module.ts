/**
 * Roles and their permissions: the catalogue (`GET /api/v1/admin/roles`, `/permissions`) and
 * role administration (create from permissions, change, delete; built-in roles protected).
 */
import type { AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { UserStore } from '../users/store.js';
import { roleRoutes } from './routes.js';
import { RoleService } from './service.js';
import { RoleStore } from './store.js';

export interface RolesDeps {
  db: Db;
  users: UserStore;
  sessions: SessionService;
  audit: AuditLog;
  guard: Guard;
}

export interface RolesProvides {
  /** Role administration for the routes and the operator's CLI. */
  roleAdmin: RoleService;
}

export function rolesModule(deps: RolesDeps): Module<RolesProvides> {
  const roleAdmin = new RoleService({ ...deps, roles: new RoleStore(deps.db) });
  return {
    name: 'roles',
    provides: { roleAdmin },
    tags: [{ name: 'Roles', description: 'Roles, the permissions each grants, and role administration; each route names its permission' }],
    routes: roleRoutes({ roles: roleAdmin, users: deps.users, guard: deps.guard }),
  };
}
