/** How the bench starts Strongroom: its environment and bootstrap administrator (bench/run.ts, bench/lib/push.ts). */
import path from 'node:path';
import { RATE_GROUPS, rateLimitVar } from '../../src/platform/config-rate-limits.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The built server every row starts (`npm run build`). */
export const SERVER_JS = path.join(ROOT, 'dist/src/server.js');
export const ADMIN = { username: 'benchadmin', password: 'Vt7#qLm2!xRp9$' };

export function strongroomEnv(extra: Record<string, string>): Record<string, string> {
  return {
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The config allows at most 100,000 per minute: far above the login rate of this machine.
    SIGNIN_RATE_LIMIT_PER_MINUTE: '100000',
    ...Object.fromEntries(RATE_GROUPS.flatMap((g) => [[rateLimitVar(g, 'ip'), '999999/1m'], [rateLimitVar(g, 'account'), '999999/1m']])), // one client, a few accounts
    SIGNIN_MAX_IN_FLIGHT_PER_IP: '10000', // every bench client is 127.0.0.1
    MAX_CONCURRENT_SESSIONS: '100',
    BOOTSTRAP_ADMIN_USERNAME: ADMIN.username,
    BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    BCRYPT_COST: '12',
    DATABASE_URL: '',
    ...extra,
  };
}
