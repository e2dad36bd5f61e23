/** One-time code routes (issue 4 section 3). */
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../app.js';

export function otpRoutes(s: Services): FastifyPluginAsync {
  return async () => {
    void s;
  };
}
