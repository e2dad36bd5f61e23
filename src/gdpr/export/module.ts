/**
 * Data-subject rights, export part (issue 28): the personal-data registry, the export (JSON or a
 * ZIP of CSV files), the SCIM portability document and the request log.
 */
import type { AuditLog } from '../../audit/service.js';
import type { FactorStore } from '../../mfa/factors.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { SensitiveColumns } from '../../platform/crypto/sensitive.js';
import type { Db } from '../../platform/db/database.js';
import type { Module } from '../../platform/module.js';
import type { Guard } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { gdprExportRoutes } from './routes.js';
import { GdprExportService } from './service.js';

export interface GdprExportModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'transport' | 'mfa'>;
  sensitive: SensitiveColumns;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
  factors: FactorStore;
}

export interface GdprExportProvides {
  gdprExport: GdprExportService;
}

export function gdprExportModule(deps: GdprExportModuleDeps): Module<GdprExportProvides> {
  const gdprExport = new GdprExportService({ ...deps, organization: deps.config.mfa.totpIssuer });
  return {
    name: 'gdpr-export',
    provides: { gdprExport },
    tags: [{ name: 'Data-subject rights', description: 'Your data: a full copy (export), a portable SCIM document, and the log of such requests for the data-protection officer.' }],
    routes: gdprExportRoutes({ gdprExport, users: deps.users, guard: deps.guard }),
  };
}
