/**
 * Push approval (issue 30, section 2; docs/push-approval.md): the `push_approval` second factor.
 * A sign-in or a step-up is approved on the enrolled phone, which picks the number the asking page
 * shows and signs its answer with a key kept in its secure hardware. PUSH_APPROVAL_MAX_PER_HOUR
 * bounds the requests an account is sent. Listens to the device tokens (src/devices): the phone's
 * token going takes the factor with it.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { PasswordHasher } from '../credentials/hashing.js';
import type { CredentialService } from '../credentials/service.js';
import type { DeviceTokenStore } from '../devices/store.js';
import type { GeoLookup } from '../geo/types.js';
import type { MfaAttempts } from '../mfa/attempts.js';
import type { ChallengeService } from '../mfa/challenge.js';
import type { FactorStore } from '../mfa/factors.js';
import type { PushProvider } from '../notifications/fcm.js';
import type { PushOutbox } from '../notifications/outbox.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { InFlightLimit } from '../policy/in-flight.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { RateLimiter } from '../policy/rate-limit.js';
import type { RealtimeHub } from '../realtime/hub.js';
import type { AlertService } from '../risk/alerts/service.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import { pushApprovalRoutes } from './routes.js';
import { PushApprovalService } from './service.js';
import { Waiters } from './waiters.js';

export interface PushApprovalDeps {
  db: Db;
  clock: Clock;
  config: Config;
  audit: AuditLog;
  guard: Guard;
  factors: FactorStore;
  challenges: ChallengeService;
  mfaAttempts: MfaAttempts;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  inFlight: InFlightLimit;
  ipHasher: Hasher;
  credentials: CredentialService;
  hasher: PasswordHasher;
  deviceTokens: DeviceTokenStore;
  pushOutbox: PushOutbox;
  push: PushProvider | undefined;
  realtime: RealtimeHub;
  alerts: AlertService;
  geo: GeoLookup;
  bus: EventBus;
  log: Logger;
  sessions: SessionService;
}

export interface PushApprovalProvides {
  pushApproval: PushApprovalService;
}

export const PURGE_JOB = 'push approval clean-up';
const PURGE_EVERY_MS = 60 * 60_000;
export const EXPIRE_JOB = 'push approval expiry';
const EXPIRE_EVERY_MS = 30_000;

export function pushApprovalModule(deps: PushApprovalDeps): Module<PushApprovalProvides> {
  const waiters = new Waiters(deps.bus);
  const pushApproval = new PushApprovalService({ ...deps, waiters });
  deps.deviceTokens.listen({
    removing: (trx, removal) => pushApproval.deviceRemoving(trx, removal),
    pinned: (trx, userId) => pushApproval.pinnedDevices(trx, userId),
    authorizeOwner: (trx, auth, userId, ids) => pushApproval.authorizeDeviceRemoval(trx, auth, userId, ids),
  });
  return {
    name: 'push-approval',
    provides: { pushApproval },
    tags: [{ name: 'Push approval', description: 'Approving a sign-in on the enrolled phone: the user picks the number the sign-in page shows, and the phone signs the answer with a key kept in its secure hardware.' }],
    async routes(app) {
      await app.register(pushApprovalRoutes({ ...deps, pushApproval, waiters }));
    },
    jobs: [
      { name: PURGE_JOB, everyMs: PURGE_EVERY_MS, scope: 'one-node', run: () => pushApproval.purge(new Date(deps.clock.now())).then(() => undefined) },
      // Marks the requests past their 5 minutes expired, publishes second_factor.expired and wakes the pages held on them.
      { name: EXPIRE_JOB, everyMs: EXPIRE_EVERY_MS, scope: 'one-node', run: (stopping) => pushApproval.expire(new Date(deps.clock.now()), stopping) },
    ],
    close: async () => waiters.close(),
  };
}
