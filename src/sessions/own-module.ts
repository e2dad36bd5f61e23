/**
 * Your own sessions, for the signed-in person (`/api/v1/auth/sessions`): after the access module
 * (its guard) and the audit trail. The sessions themselves are the sessions module's.
 */
import type { AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { UserStore } from '../users/store.js';
import type { Guard } from './guard.js';
import { ownSessionRoutes } from './own-routes.js';
import type { SessionService } from './service.js';

export interface OwnSessionsDeps {
  db: Db;
  sessions: SessionService;
  guard: Guard;
  audit: AuditLog;
  users: UserStore;
}

export function ownSessionsModule(deps: OwnSessionsDeps): Module {
  return {
    name: 'own-sessions',
    provides: {},
    tags: [{ name: 'Your sessions', description: 'Where you are signed in: list your sessions, end one' }],
    routes: ownSessionRoutes(deps),
  };
}
