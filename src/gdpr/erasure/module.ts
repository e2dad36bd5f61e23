/**
 * Data-subject rights, erasure part (issue 28): the request with its grace period and cancel, the
 * sign-in gate (gate.ts, asked by src/signin/pipeline.ts), the operators' list and legal hold,
 * the erasure job, which applies the personal-data registry's decision to every table, and the
 * erasure ledger (ledger.ts), which re-applies erasures to a database restored from a backup.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/service.js';
import type { PasswordHasher } from '../../credentials/hashing.js';
import type { CredentialService } from '../../credentials/service.js';
import type { Mailer } from '../../mail/mailer.js';
import type { FactorStore } from '../../mfa/factors.js';
import type { OtpService } from '../../mfa/otp/service.js';
import { BackgroundWork } from '../../platform/background.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Hasher } from '../../platform/crypto/field-cipher.js';
import type { KeyMaterial } from '../../platform/crypto/key-material.js';
import type { Db } from '../../platform/db/database.js';
import type { Module } from '../../platform/module.js';
import type { InFlightLimit } from '../../policy/in-flight.js';
import type { LoginAttempts } from '../../policy/lockout.js';
import type { RateLimiter } from '../../policy/rate-limit.js';
import type { Guard } from '../../sessions/guard.js';
import type { SessionService } from '../../sessions/service.js';
import type { UserStore } from '../../users/store.js';
import type { GdprExportService } from '../export/service.js';
import { ErasureJob } from './job.js';
import { ErasureLedger } from './ledger.js';
import { erasureRoutes } from './routes.js';
import { ErasureService } from './service.js';
import { ErasureStore } from './store.js';

export interface ErasureModuleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Config;
  keys: KeyMaterial;
  ipHasher: Hasher;
  users: UserStore;
  audit: AuditLog;
  sessions: SessionService;
  factors: FactorStore;
  gdprExport: GdprExportService;
  hasher: PasswordHasher;
  credentials: CredentialService;
  attempts: LoginAttempts;
  rateLimiter: RateLimiter;
  inFlight: InFlightLimit;
  mailer: Mailer;
  otp: OtpService;
  guard: Guard;
}

export interface ErasureProvides {
  erasure: ErasureService;
  erasureJob: ErasureJob;
  /** The erasure ledger: exported for keeping apart from the backups, re-applied after a restore (the CLI's `gdpr ledger`). */
  erasureLedger: ErasureLedger;
}

const HOUR = 60 * 60_000;

export function erasureModule(deps: ErasureModuleDeps): Module<ErasureProvides> {
  const store = new ErasureStore(deps.db);
  const background = new BackgroundWork();
  const erasure = new ErasureService({ ...deps, store, background, cancelTokens: deps.keys.hasher('field', 'gdpr-erasure-cancel') });
  const erasureJob = new ErasureJob({ ...deps, store, pseudonyms: deps.keys.hasher('field', 'gdpr-erasure-pseudonym') });
  const erasureLedger = new ErasureLedger({ db: deps.db, clock: deps.clock, users: deps.users, store, job: erasureJob });
  return {
    name: 'gdpr-erasure',
    provides: { erasure, erasureJob, erasureLedger },
    routes: erasureRoutes({ erasure, users: deps.users, guard: deps.guard, graceDays: deps.config.erasure.graceDays }),
    // One node: each account is erased in one transaction, its request claimed FOR UPDATE SKIP LOCKED.
    jobs: [{ name: 'gdpr erasure', everyMs: HOUR, scope: 'one-node', run: (stopping) => erasureJob.run(stopping).then(() => undefined) }],
    close: () => background.settled(),
  };
}
