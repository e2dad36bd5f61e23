/**
 * Tokens: the JWT signing keyring (rotated every JWT_KEY_ROTATION_DAYS, last 2 verify), the
 * denylist of revoked and spent token ids, and issuing and verifying every token type.
 */
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import { Denylist } from './denylist.js';
import { Keyring } from './keyring.js';
import { TokenService } from './service.js';

export interface TokensDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'tokens' | 'sessions'>;
  keys: KeyMaterial;
}

export interface TokensProvides {
  keyring: Keyring;
  denylist: Denylist;
  tokens: TokenService;
}

const HOUR = 3_600_000;

export function tokensModule(deps: TokensDeps): Module<TokensProvides> {
  const { db, bus, clock, log, config } = deps;
  const keyring = new Keyring({ db, cipher: deps.keys.cipher(ENCRYPTED_COLUMNS.jwtSecret.purpose), clock, bus, log, rotationDays: config.tokens.keyRotationDays });
  const denylist = new Denylist({ db, clock, bus });
  const tokens = new TokenService({ keyring, denylist, clock, config: config.tokens });
  return {
    name: 'tokens',
    provides: { keyring, denylist, tokens },
    async init() {
      await keyring.init();
      await denylist.sync();
    },
    jobs: [
      // The safety net under LISTEN/NOTIFY: bounds a missed notification to CACHE_SYNC_MS.
      { name: 'denylist sync', everyMs: config.sessions.cacheSyncMs, scope: 'every-node', run: () => denylist.sync() },
      { name: 'JWT key rotation', everyMs: HOUR, scope: 'one-node', run: () => keyring.rotateIfDue() },
      { name: 'denylist clean-up', everyMs: 10 * 60_000, scope: 'one-node', run: () => denylist.purgeExpired() },
    ],
  };
}
