/**
 * The audit trail: every other capability records its events through `audit`. The log is
 * partitioned by month; `auditRetention` keeps the months ahead created and drops those past
 * the retention period, except under a legal hold.
 */
import type { GeoLookup } from '../geo/types.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import { AuditRetention } from './retention.js';
import { AuditLog } from './service.js';

export interface AuditDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'retention'>;
  /** Locates each entry's client address (`location`). */
  geo: GeoLookup;
}

const HOUR = 3_600_000;

export function auditModule(deps: AuditDeps): Module<{ audit: AuditLog; auditRetention: AuditRetention }> {
  const audit = new AuditLog({ db: deps.db, clock: deps.clock, geo: deps.geo });
  const auditRetention = new AuditRetention({ db: deps.db, clock: deps.clock, audit, retentionMonths: deps.config.retention.auditMonths });
  return {
    name: 'audit',
    provides: { audit, auditRetention },
    init: async () => {
      await auditRetention.ensureMonthsAhead();
    },
    jobs: [{
      name: 'audit partitions', everyMs: HOUR, scope: 'one-node',
      run: async () => {
        await auditRetention.ensureMonthsAhead();
        return auditRetention.prune();
      },
    }],
  };
}
