/**
 * Access policy (SPEC "Access policy", issue 10): per-channel rules (closed channel, IP
 * allow and deny lists, schedules in a time zone, bound devices, geofences), narrowed per role,
 * compiled per node and enforced by the sign-in pipeline's access-policy step and by validate;
 * their administration routes, and the device bindings an administrator approves.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { UserStore } from '../users/store.js';
import { DeviceBindings } from './devices.js';
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
  sessions: SessionService;
  keys: KeyMaterial;
}

export interface AccessProvides {
  /** The sign-in pipeline's access-policy step (an `AccessPolicyCheck`). */
  accessPolicy: AccessPolicyEngine;
  accessAdmin: AccessPolicyAdmin;
  deviceBindings: DeviceBindings;
}

/** Safety net for a lost NOTIFY: how often every node re-reads the policies. */
const SYNC_MS = 30_000;

export function accessModule(deps: AccessDeps): Module<AccessProvides> {
  const store = new PolicyStore(deps.db);
  const deviceBindings = new DeviceBindings({ ...deps, hasher: deps.keys.hasher('ip', 'device-fingerprint') });
  const engine = new AccessPolicyEngine({ store, devices: deviceBindings, clock: deps.clock, audit: deps.audit, bus: deps.bus, log: deps.log });
  const accessAdmin = new AccessPolicyAdmin({ db: deps.db, store, engine, audit: deps.audit, bus: deps.bus, clock: deps.clock });
  return {
    name: 'access',
    provides: { accessPolicy: engine, accessAdmin, deviceBindings },
    tags: [{ name: 'Access policy', description: 'Per-channel sign-in restrictions: IP, schedule, bound devices, geofence; per role. Device bindings.' }],
    routes: accessRoutes({ accessAdmin, policyStore: store, deviceBindings, users: deps.users, guard: deps.guard }),
    init: () => engine.reload(),
    jobs: [{ name: 'access policy sync', everyMs: SYNC_MS, scope: 'every-node', run: () => engine.reload() }],
  };
}
