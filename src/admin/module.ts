/** Administration: users (create, find, read, change, delete, reset a password, unlock, sessions) and the audit trail. */
import type { AuditLog } from '../audit/service.js';
import type { CredentialService } from '../credentials/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { Clock } from '../platform/clock.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { UserStore } from '../users/store.js';
import type { EntityStore } from '../entities/store.js';
import { UserLifecycle } from './lifecycle.js';
import { adminRoutes } from './routes.js';
import { AdminService } from './service.js';
import { UserDirectory } from './user-directory.js';
import { userRoutes } from './user-routes.js';
import { userFactorRoutes } from './factor-routes.js';

export interface AdminDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  credentials: CredentialService;
  sessions: SessionService;
  attempts: LoginAttempts;
  audit: AuditLog;
  mailer: Mailer;
  guard: Guard;
  entities: EntityStore;
  keys: KeyMaterial;
}

export interface AdminProvides {
  /**
   * Account administration for the operator's console and the first start (CLI, bootstrap):
   * temporary passwords are handed back to the operator, never emailed.
   */
  consoleAdmin: AdminService;
  /** Reading, changing and deleting users, and their sessions (the API and the CLI). */
  userLifecycle: UserLifecycle;
}

export function adminModule(deps: AdminDeps): Module<AdminProvides> {
  // The API's: temporary passwords go by email when a mailer is configured.
  const admin = new AdminService(deps);
  const directory = new UserDirectory(deps);
  const lifecycle = new UserLifecycle({ ...deps, directory });
  const routes = [adminRoutes({ ...deps, admin, directory }), userRoutes({ ...deps, lifecycle, directory, deviceTags: deps.keys.hasher('ip', 'admin-device-tag') }), userFactorRoutes({ ...deps, directory })];
  return {
    name: 'admin',
    provides: { consoleAdmin: new AdminService({ ...deps, mailer: undefined }), userLifecycle: lifecycle },
    tags: [{ name: 'Administration', description: 'Users (by uuid) and audit; each route names its permission' }],
    routes: async (app) => {
      for (const r of routes) await app.register(r);
    },
  };
}
