/**
 * Operations: /health, /metrics and the API documentation on the public port, and the
 * management listener's /health and /metrics (MANAGEMENT_PORT).
 */
import type { Module } from '../module.js';
import { managementRoutes, opsRoutes, type OpsRouteDeps } from './ops-routes.js';

export type OpsDeps = OpsRouteDeps;

export function opsModule(deps: OpsDeps): Module {
  return {
    name: 'ops',
    provides: {},
    tags: [{ name: 'Operations', description: 'Health, metrics and documentation' }],
    routes: opsRoutes(deps),
    managementRoutes: managementRoutes(deps),
  };
}
