/**
 * Bank branches ("entities"): SPEC's SAML provisioning links a new user to the branch its
 * `branch` attribute names; administrators manage the branches (`/api/v1/admin/entities`).
 */
import type { AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { entityRoutes } from './routes.js';
import { EntityStore } from './store.js';

export interface EntitiesDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
}

export interface EntitiesProvides {
  entities: EntityStore;
}

export function entitiesModule(deps: EntitiesDeps): Module<EntitiesProvides> {
  const entities = new EntityStore({ db: deps.db, clock: deps.clock });
  return {
    name: 'entities',
    provides: { entities },
    tags: [{ name: 'Branches', description: 'Bank branches ("entities"), which identity providers name in a `branch` attribute' }],
    routes: entityRoutes({ ...deps, entities }),
  };
}
