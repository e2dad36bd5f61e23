/**
 * Access policy (SPEC "Access policy", issue 10): per-channel rules (who may use a channel,
 * closed channel, IP allow and deny lists, schedules in a time zone, bound devices, geofences),
 * narrowed per role, compiled per node and enforced by the sign-in pipeline's access-policy step
 * and by the bearer guard on every authenticated request, which this module builds; their
 * administration routes, and the device bindings an administrator approves.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import { createGuard, type Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { TokenService } from '../tokens/service.js';
import type { UserStore } from '../users/store.js';
import { ChannelAccessStore } from './channels.js';
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
  tokens: TokenService;
  sessions: SessionService;
  keys: KeyMaterial;
  ipHasher: Hasher;
}

export interface AccessProvides {
  /** The sign-in pipeline's access-policy step (an `AccessPolicyCheck`). */
  accessPolicy: AccessPolicyEngine;
  accessAdmin: AccessPolicyAdmin;
  deviceBindings: DeviceBindings;
  /** The bearer guard of every authenticated route: token, session, device, and this module's policy. */
  guard: Guard;
}

/** Safety net for a lost NOTIFY: how often every node re-reads the policies. */
const SYNC_MS = 30_000;

export function accessModule(deps: AccessDeps): Module<AccessProvides> {
  const store = new PolicyStore(deps.db);
  const channels = new ChannelAccessStore(deps.db);
  const deviceBindings = new DeviceBindings({ ...deps, hasher: deps.keys.hasher('ip', 'device-fingerprint') });
  const engine = new AccessPolicyEngine({ store, channels, devices: deviceBindings, clock: deps.clock, audit: deps.audit, bus: deps.bus, log: deps.log });
  const guard = createGuard({ tokens: deps.tokens, sessions: deps.sessions, policy: engine, ipHash: (ip) => deps.ipHasher.hex(ip) });
  const accessAdmin = new AccessPolicyAdmin({ db: deps.db, store, channels, engine, audit: deps.audit, bus: deps.bus, clock: deps.clock });
  return {
    name: 'access',
    provides: { accessPolicy: engine, accessAdmin, deviceBindings, guard },
    setup: (app) => app.decorateRequest('auth', null),
    tags: [{ name: 'Access policy', description: 'Per-channel sign-in restrictions: IP, schedule, bound devices, geofence; per role. Device bindings.' }],
    routes: accessRoutes({ accessAdmin, policyStore: store, engine, clock: deps.clock, channels, deviceBindings, users: deps.users, guard }),
    init: () => engine.reload(),
    jobs: [{ name: 'access policy sync', everyMs: SYNC_MS, scope: 'every-node', run: () => engine.reload() }],
  };
}
