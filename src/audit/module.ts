/** The audit trail: every other capability records its events through `audit`. */
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import { AuditLog } from './service.js';

export interface AuditDeps {
  db: Db;
  clock: Clock;
}

export function auditModule(deps: AuditDeps): Module<{ audit: AuditLog }> {
  return { name: 'audit', provides: { audit: new AuditLog(deps) } };
}
