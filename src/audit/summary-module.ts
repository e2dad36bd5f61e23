/**
 * The audit trail's summary for the operator console's charts (GET /api/v1/admin/audit/summary).
 * Its own module: it needs the guard, which comes after the audit trail every capability writes to.
 */
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { Module } from '../platform/module.js';
import type { Guard } from '../sessions/guard.js';
import { AuditSummary } from './summary.js';
import { auditSummaryRoutes } from './summary-routes.js';

export function auditSummaryModule(deps: { db: Db; clock: Clock; guard: Guard }): Module<{ auditSummary: AuditSummary }> {
  const auditSummary = new AuditSummary(deps);
  return {
    name: 'audit-summary',
    provides: { auditSummary },
    routes: auditSummaryRoutes({ summary: auditSummary, guard: deps.guard }),
  };
}
