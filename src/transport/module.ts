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
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import { TransportKeyring } from './keys.js';
import { createTransport, type Transport } from './plugin.js';
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
  const transport = createTransport({
    keys: transportKeys,
    enforce: config.transport.enforce,
    preAuthRoutes: config.transport.preAuthRoutes,
    async sessionKey(request) {
      await deps.guard.authenticate(request);
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
    jobs: [{ name: 'transport key rotation', everyMs: HOUR, scope: 'one-node', run: () => transportKeys.rotateIfDue() }],
  };
}
