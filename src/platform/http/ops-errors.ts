/** Errors of the operator-facing routes (src/platform/http/ops-routes.ts). */
import { defineErrors } from '../errors.js';

export const OpsErrors = defineErrors({
  METRICS_TOKEN_REQUIRED: { status: 401, message: 'Metrics require a valid bearer token (METRICS_TOKEN).' },
});
