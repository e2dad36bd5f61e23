/** MFA reset routes (issue 4 section 5). */
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../app.js';

export function mfaResetRoutes(s: Services): FastifyPluginAsync {
  return async () => {
    void s;
  };
}
