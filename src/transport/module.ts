/**
 * Transport encryption of bodies (SPEC Transport encryption): the RSA keyring, the body
 * envelope the HTTP shell applies to every request, and the public-key route.
 */
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import { TransportKeyring } from './keys.js';
import { createTransport, type Transport } from './plugin.js';
import { ReplayCache } from './replay.js';
import { transportRoutes } from './routes.js';

export interface TransportDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'transport'>;
  keys: KeyMaterial;
  guard: Guard;
  sessions: SessionService;
  metrics: Metrics;
}

export interface TransportProvides {
  transportKeys: TransportKeyring;
  transport: Transport;
}

const HOUR = 3_600_000;

export function transportModule(deps: TransportDeps): Module<TransportProvides> {
  const { config } = deps;
  const transportKeys = new TransportKeyring({
    db: deps.db, cipher: deps.keys.cipher(ENCRYPTED_COLUMNS.transportKey.purpose), clock: deps.clock, bus: deps.bus, log: deps.log,
    rotationDays: config.transport.keyRotationDays, graceDays: config.transport.keyGraceDays, configuredPem: deps.keys.transportPrivateKeyPem,
  });
  const replayCache = new ReplayCache({ db: deps.db, clock: deps.clock, windowSec: config.transport.replayWindowSec });
  const replays = deps.metrics.counter('strongroom_transport_replays_refused_total', 'Pre-auth envelopes refused as replays of one accepted within TRANSPORT_REPLAY_WINDOW_SECONDS');
  const transport = createTransport({
    keys: transportKeys,
    enforce: config.transport.enforce,
    replay: {
      firstSeen: (encryptedKey) => replayCache.firstSeen(encryptedKey),
      onReplay(request) {
        replays.inc();
        request.log.warn({ route: request.url.split('?')[0] }, 'Refused a replayed pre-auth envelope (answered 400 DECRYPTION_FAILED)');
      },
    },
    preAuthRoutes: config.transport.preAuthRoutes,
    async sessionKey(request) {
      // Who is calling, for the key; the route's own guard then applies the access policy.
      await deps.guard.identify(request);
      return deps.sessions.sessionKey(request.auth!.session);
    },
  });
  return {
    name: 'transport',
    provides: { transportKeys, transport },
    // SPEC groups the public key with the core authentication routes; this module comes first of them.
    tags: [{ name: 'Core authentication', description: 'Sign-in, tokens and sessions' }],
    envelope: transport,
    routes: transportRoutes({ transportKeys }),
    init: () => transportKeys.init(),
    jobs: [
      { name: 'transport key rotation', everyMs: HOUR, scope: 'one-node', run: () => transportKeys.rotateIfDue() },
      { name: 'transport replay clean-up', everyMs: 60_000, scope: 'one-node', run: () => replayCache.purge() },
    ],
  };
}
