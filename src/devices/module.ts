/**
 * The device push-token registry (issue 14 section 1; SPEC "Device token", "Device tokens"): each
 * user's tokens, stored encrypted, unique by blind index. Provides the store to the push sender.
 */
import type { AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { SensitiveColumns } from '../platform/crypto/sensitive.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { deviceRoutes } from './routes.js';
import { DeviceTokenStore } from './store.js';

export interface DevicesDeps {
  db: Db;
  clock: Clock;
  keys: KeyMaterial;
  sensitive: SensitiveColumns;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
}

export interface DevicesProvides {
  deviceTokens: DeviceTokenStore;
}

export function devicesModule(deps: DevicesDeps): Module<DevicesProvides> {
  const deviceTokens = new DeviceTokenStore({ db: deps.db, clock: deps.clock, sensitive: deps.sensitive, blindIndex: deps.keys.blindIndex('blind-index') });
  return {
    name: 'devices',
    provides: { deviceTokens },
    tags: [{ name: 'Device tokens', description: 'Your devices\' push tokens, for notifications (signed in; each user manages only their own).' }],
    routes: deviceRoutes({ ...deps, deviceTokens }),
  };
}
