/** Operations: /health, /metrics and the API documentation. */
import type { DatabaseHandle } from '../db/database.js';
import type { Module } from '../module.js';
import type { Metrics } from '../observability/metrics.js';
import { opsRoutes } from './ops-routes.js';

export interface OpsDeps {
  database: Pick<DatabaseHandle, 'ping' | 'kind'>;
  metrics: Metrics;
}

export function opsModule(deps: OpsDeps): Module {
  return {
    name: 'ops',
    provides: {},
    tags: [{ name: 'Operations', description: 'Health, metrics and documentation' }],
    routes: opsRoutes(deps),
  };
}
