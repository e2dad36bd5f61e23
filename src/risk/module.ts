/**
 * Risk evaluation of sign-ins: `risk` is what the sign-in pipeline asks (the account's history,
 * the signals, the score) and where the responses listen (`risk.onAssessed`). Its one job deletes
 * the per-network failure records once they are older than the window (RISK_WINDOW_MINUTES).
 */
import type { Logger } from 'pino';
import type { GeoLookup } from '../geo/types.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import { RiskService } from './service.js';
import type { BreachedPasswords } from './types.js';

export interface RiskDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'risk'>;
  geo: GeoLookup;
  keys: KeyMaterial;
  log: Logger;
  /** The operator's breach corpus, when a module provides one: the `breached_password` signal. */
  breachedPasswords?: BreachedPasswords;
}

export const RISK_PURGE_JOB = 'risk failure clean-up';

export function riskModule(deps: RiskDeps): Module<{ risk: RiskService }> {
  // The `ip` root: the hashes must survive a rotation of the field-encryption key, or every
  // known device would look new the day after one.
  const risk = new RiskService({ ...deps, hasher: deps.keys.hasher('ip', 'risk-profile') });
  return {
    name: 'risk',
    provides: { risk },
    jobs: [{ name: RISK_PURGE_JOB, everyMs: 5 * 60_000, scope: 'one-node', run: () => risk.purge() }],
  };
}
