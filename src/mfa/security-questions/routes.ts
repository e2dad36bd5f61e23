/** Security-question routes (issue 4 section 4). */
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../app.js';

export function securityQuestionRoutes(s: Services): FastifyPluginAsync {
  return async () => {
    void s;
  };
}
