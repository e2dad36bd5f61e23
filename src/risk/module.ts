/**
 * Risk evaluation of sign-ins: `risk` is what the sign-in pipeline asks (the account's history,
 * the signals, the score, and what the response policy decides about it) and where the responses
 * listen (`risk.onAssessed`). Administrators edit the response policy (src/risk/decisions). Its one job deletes
 * the per-network failure records once they are older than the window (RISK_WINDOW_MINUTES).
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { GeoLookup } from '../geo/types.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { riskPolicyRoutes } from './decisions/routes.js';
import { RiskPolicyStore } from './decisions/store.js';
import { RiskService } from './service.js';
import type { BreachedPasswords } from './types.js';

export interface RiskDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'risk'>;
  geo: GeoLookup;
  keys: KeyMaterial;
  bus: EventBus;
  audit: AuditLog;
  guard: Guard;
  users: UserStore;
  log: Logger;
  /** The operator's breach corpus, when a module provides one: the `breached_password` signal. */
  breachedPasswords?: BreachedPasswords;
}

export const RISK_PURGE_JOB = 'risk failure clean-up';

export function riskModule(deps: RiskDeps): Module<{ risk: RiskService }> {
  const policy = new RiskPolicyStore({ db: deps.db, clock: deps.clock, bus: deps.bus, defaults: deps.config.risk.responses });
  // The `ip` root: the hashes must survive a rotation of the field-encryption key, or every
  // known device would look new the day after one.
  const risk = new RiskService({ ...deps, policy, hasher: deps.keys.hasher('ip', 'risk-profile') });
  return {
    name: 'risk',
    provides: { risk },
    tags: [{ name: 'Risk responses', description: 'What a sign-in does about its risk score and signals, by rule and channel (ask for a second factor, refuse, lock the account, block the client\'s network): the policy administrators edit.' }],
    routes: riskPolicyRoutes({ db: deps.db, store: policy, audit: deps.audit, guard: deps.guard, users: deps.users }),
    init: () => risk.loadBlocks(),
    jobs: [{ name: RISK_PURGE_JOB, everyMs: 5 * 60_000, scope: 'one-node', run: () => risk.purge() }],
  };
}
