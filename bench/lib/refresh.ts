/** The refresh load of `npm run bench` and `npm run bench:commit`: token chains, each spending its refresh token and keeping the next. */
import type { Tokens } from './api.js';
import { post } from './client.js';
import { closedLoop, type Rate } from './load.js';

export const REFRESH = { workers: 32, seconds: 8 };

/** Each worker spends its refresh token and keeps the new one, in a loop (`chains`: one sign-in per worker). */
export function refreshLoad(base: string, chains: Tokens[], workers = REFRESH.workers): Promise<Rate> {
  return closedLoop({
    workers, warmupMs: 1000, seconds: REFRESH.seconds,
    makeWorker: (i) => async () => {
      const res = await post(`${base}/api/v1/auth/refresh`, JSON.stringify({ refresh_token: chains[i]!.refresh_token }));
      if (res.status !== 200) {
        console.error(`refresh chain ${i} broke: ${res.status} ${res.body}`);
        return false;
      }
      chains[i] = JSON.parse(res.body) as Tokens;
      return true;
    },
  });
}
