/** Administration: users (create, list, reset a password, unlock) and the audit trail. */
import type { AuditLog } from '../audit/service.js';
import type { CredentialService } from '../credentials/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { UserStore } from '../users/store.js';
import { adminRoutes } from './routes.js';
import { AdminService } from './service.js';

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
}

export interface AdminProvides {
  /**
   * Account administration for the operator's console and the first start (CLI, bootstrap):
   * temporary passwords are handed back to the operator, never emailed.
   */
  consoleAdmin: AdminService;
}

export function adminModule(deps: AdminDeps): Module<AdminProvides> {
  // The API's: temporary passwords go by email when a mailer is configured.
  const admin = new AdminService(deps);
  return {
    name: 'admin',
    provides: { consoleAdmin: new AdminService({ ...deps, mailer: undefined }) },
    tags: [{ name: 'Administration', description: 'Users and audit; each route names its permission' }],
    routes: adminRoutes({ ...deps, admin }),
  };
}
