/**
 * Attempt policy: the failed-attempt lockout, the rate limits of the authentication routes and
 * the in-flight bound on password checks. The per-channel access policy is src/access.
 */
import type { AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { InFlightLimit } from './in-flight.js';
import { LoginAttempts } from './lockout.js';
import { RateLimiter } from './rate-limit.js';
import { installRouteLimits } from './route-limits.js';

export interface PolicyDeps {
  db: Db;
  audit: AuditLog;
  clock: Clock;
  config: Pick<Config, 'signin' | 'rateLimits'>;
  keys: KeyMaterial;
  ipHasher: Hasher;
  metrics: Metrics;
}

export interface PolicyProvides {
  /** Failed-attempt counters and the account lockout. */
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  /** Password checks in flight per client address and account (this node). */
  inFlight: InFlightLimit;
}

export function policyModule(deps: PolicyDeps): Module<PolicyProvides> {
  const { db, clock } = deps;
  const attempts = new LoginAttempts({ db, clock, audit: deps.audit, hasher: deps.keys.hasher('field', 'login-subject'), config: deps.config.signin, metrics: deps.metrics });
  const rateLimiter = new RateLimiter({ db, clock });
  const inFlight = new InFlightLimit(deps.config.signin.maxInFlightPerIp);
  return {
    name: 'policy',
    provides: { attempts, rateLimiter, inFlight },
    setup: (app) => installRouteLimits(app, { rateLimiter, limits: deps.config.rateLimits, ipHasher: deps.ipHasher, accountHasher: deps.keys.hasher('field', 'rate-subject'), metrics: deps.metrics }),
    jobs: [
      { name: 'rate-limit window clean-up', everyMs: 10 * 60_000, scope: 'one-node', run: () => rateLimiter.purge() },
      { name: 'login attempt clean-up', everyMs: 10 * 60_000, scope: 'one-node', run: () => attempts.purgeStale() },
    ],
  };
}
