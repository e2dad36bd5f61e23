/** TOTP routes (issue 4 section 2). */
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../app.js';

export function totpRoutes(s: Services): FastifyPluginAsync {
  return async () => {
    void s;
  };
}
