/**
 * The loads of the scale bench (bench/scale.ts) that the other benches do not have: sign-ins
 * spread over many synthetic users (by username and by email), and an administrator's audit
 * queries one at a time, each with other parameters (another user, another day).
 */
import http from 'node:http';
import { SEED_PASSWORD, type SeedIdentity } from '../../src/cli/bench-seed-identity.js';
import { login, type Tokens } from './api.js';
import { post } from './client.js';
import { closedLoop, type Rate } from './load.js';

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** GET with a bearer token over a keep-alive connection; the status and the body's length. */
export function get(url: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

export function closeSeedAgent(): void {
  agent.destroy();
}

/** What a worker signs in with: the username for even workers, the email (the blind-index lookup) for odd ones. */
const identifier = (u: SeedIdentity, i: number): string => (i % 2 === 0 ? u.username : u.email);

/** Each worker signs in as its own synthetic user, again and again, with the seed password. */
export function signInLoad(base: string, users: SeedIdentity[], seconds: number, warmupMs: number): Promise<Rate> {
  return closedLoop({
    workers: users.length, warmupMs, seconds,
    makeWorker: (i) => {
      const body = JSON.stringify({ username: identifier(users[i]!, i), password: SEED_PASSWORD });
      return async () => (await post(`${base}/api/v1/auth/login`, body)).status === 200;
    },
  });
}

/** One sign-in per user, `parallel` at a time (for refresh chains and validate tokens). */
export async function signInEach(base: string, users: SeedIdentity[], parallel = 8): Promise<Tokens[]> {
  const tokens: Tokens[] = new Array(users.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < users.length; i = next++) tokens[i] = await login(base, identifier(users[i]!, i), SEED_PASSWORD);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, users.length) }, worker));
  return tokens;
}

export interface AuditRate extends Rate {
  /** Entries the answers counted (`total`), on average. */
  meanTotal: number;
}

/**
 * `GET /api/v1/admin/audit?<query()>` one at a time for `seconds` after a warm-up, a new query
 * string each time: the latency an administrator sees, not a throughput.
 */
export async function auditLoad(base: string, token: string, query: () => string, seconds: number, warmupMs: number): Promise<AuditRate> {
  let totals = 0;
  let answers = 0;
  const rate = await closedLoop({
    workers: 1, warmupMs, seconds,
    makeWorker: () => async () => {
      const res = await get(`${base}/api/v1/admin/audit?${query()}`, token);
      if (res.status !== 200) {
        console.error(`audit query: ${res.status} ${res.body.slice(0, 300)}`);
        return false;
      }
      totals += (JSON.parse(res.body) as { total: number }).total;
      answers++;
      return true;
    },
  });
  return { ...rate, meanTotal: answers === 0 ? 0 : totals / answers };
}
