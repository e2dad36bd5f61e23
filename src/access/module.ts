/**
 * Access policy (SPEC "Access policy", issue 10): per-channel rules (closed channel, IP
 * allow and deny lists, schedules in a time zone, geofences), narrowed per role, compiled per
 * node and enforced by the sign-in pipeline's access-policy step; their administration routes.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { AccessPolicyEngine } from './engine.js';
import { accessRoutes } from './routes.js';
import { AccessPolicyAdmin } from './service.js';
import { PolicyStore } from './store.js';

export interface AccessDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  audit: AuditLog;
  users: UserStore;
  guard: Guard;
}

export interface AccessProvides {
  /** The sign-in pipeline's access-policy step (an `AccessPolicyCheck`). */
  accessPolicy: AccessPolicyEngine;
  accessAdmin: AccessPolicyAdmin;
}

/** Safety net for a lost NOTIFY: how often every node re-reads the policies. */
const SYNC_MS = 30_000;

export function accessModule(deps: AccessDeps): Module<AccessProvides> {
  const store = new PolicyStore(deps.db);
  const engine = new AccessPolicyEngine({ store, clock: deps.clock, audit: deps.audit, bus: deps.bus, log: deps.log });
  const accessAdmin = new AccessPolicyAdmin({ db: deps.db, store, engine, audit: deps.audit, bus: deps.bus, clock: deps.clock });
  return {
    name: 'access',
    provides: { accessPolicy: engine, accessAdmin },
    tags: [{ name: 'Access policy', description: 'Per-channel sign-in restrictions: IP, schedule, geofence; per role' }],
    routes: accessRoutes({ accessAdmin, policyStore: store, users: deps.users, guard: deps.guard }),
    init: () => engine.reload(),
    jobs: [{ name: 'access policy sync', everyMs: SYNC_MS, scope: 'every-node', run: () => engine.reload() }],
  };
}
