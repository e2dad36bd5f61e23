/**
 * What the risk evaluation of sign-ins costs (issue 29): sign-in and validate with RISK_EVALUATION
 * on and off, in turns in one run. Two Strongroom children on one PostgreSQL database and one
 * DATA_DIR (the same accounts, the same keys), one with the evaluation off; each turn loads one of
 * them while the other idles. Each client signs in as an account of its own, from public
 * addresses of one country (X-Forwarded-For, the servers trusting loopback as their proxy) with a
 * device fingerprint of its own: the path a real sign-in takes (the history read while the
 * password is compared, a country looked up, the profile written in the session's transaction).
 * From 127.0.0.1 itself the evaluation would see an internal address: no country, no network.
 */
import pg from 'pg';
import { createUser, login } from './api.js';
import { post } from './client.js';
import { combineCpu, type CpuUse } from './cpu.js';
import { cannon, closedLoop, combineRates, type Rate } from './load.js';
import type { Child } from './proc.js';
import { ADMIN } from './strongroom.js';

/** Sign-in turns of `loginSeconds` after a warm-up each; validate turns of `validateSeconds`. */
export const RISK_BENCH = { workers: 8, loginSeconds: 3, loginWarmupMs: 1000, validateSeconds: 1, database: 'strongroom_risk_bench' };

/**
 * Client i's public range and the three addresses it signs in from, each in another /24, all
 * three in one country of the bundled country database (not every /16 is: 81.2 is Russian,
 * British and Czech). The check after the sign-in turns fails the bench, not the figure, when a
 * database update moves one to no country or to another.
 */
const RANGES = ['41.90', '85.240', '86.140', '2.28', '62.210', '177.10', '49.206', '99.230'];
const addressesOf = (i: number): string[] => [17, 101, 203].map((c) => `${RANGES[i % RANGES.length]}.${c}.${10 + i}`);

interface Client {
  username: string;
  password: string;
  fingerprint: string;
  addresses: string[];
}

const clients: Client[] = Array.from({ length: RISK_BENCH.workers }, (_, i) => ({
  username: `riskbench${i}`, password: `Xq7#Lm${i}!vR2$pT9w`, fingerprint: `bench-device-${i}-7f3a9c`, addresses: addressesOf(i),
}));

const headersOf = (c: Client, n: number): Record<string, string> => ({ 'x-forwarded-for': c.addresses[n % c.addresses.length]!, 'x-device-fingerprint': c.fingerprint });

export interface Measured {
  rate: Rate;
  cpu: CpuUse;
}

export interface RiskBenchOptions {
  /** The URL of database `db` on the bench's PostgreSQL: RISK_BENCH.database is made there. */
  postgresUrl: (db: string) => string;
  /** The DATA_DIR both servers share (their generated keys). */
  dataDir: string;
  start: (name: string, extra: Record<string, string>) => Promise<Child>;
  /** bench/run.ts's `measure`: a clean window, the CPU of `focus` and of everything else. */
  measure: (what: string, focus: number, load: () => Promise<Rate>) => Promise<Measured>;
  rounds: number;
  validate: { connections: number; seconds: number; warmupSec: number };
}

export interface RiskBench {
  loginOff: Measured;
  loginOn: Measured;
  validateOff: Measured;
  validateOn: Measured;
  /** Sign-ins the profiles counted after the login turns: every one of the risk-on server's, none of the other's (checked). */
  profileSignIns: number;
}

/** Every client signs in again and again, each time from the next of its addresses. */
function riskLoginLoad(base: string, seconds: number, warmupMs: number): Promise<Rate> {
  return closedLoop({
    workers: clients.length, warmupMs, seconds,
    makeWorker: (i) => {
      const c = clients[i]!;
      const body = JSON.stringify({ username: c.username, password: c.password });
      let n = 0;
      return async () => {
        const res = await post(`${base}/api/v1/auth/login`, body, headersOf(c, n++));
        if (res.status !== 200) console.error(`risk bench: sign-in of ${c.username} answered ${res.status} ${res.body.slice(0, 300)}`);
        return res.status === 200;
      };
    },
  });
}

async function signIn(base: string, c: Client, n: number): Promise<string> {
  const res = await post(`${base}/api/v1/auth/login`, JSON.stringify({ username: c.username, password: c.password }), headersOf(c, n));
  if (res.status !== 200) throw new Error(`risk bench: sign-in of ${c.username} answered ${res.status} ${res.body}`);
  return (JSON.parse(res.body) as { access_token: string }).access_token;
}

function validateLoad(base: string, token: string, connections: number, seconds: number): Promise<Rate> {
  return cannon({ url: `${base}/api/v1/auth/validate`, method: 'POST', headers: { authorization: `Bearer ${token}`, ...headersOf(clients[0]!, 0) }, connections, seconds });
}

/** `sides` take turns, `rounds` times each; each side's windows are then added up. */
async function inTurns(rounds: number, sides: Array<() => Promise<Measured>>): Promise<Measured[]> {
  const runs: Measured[][] = sides.map(() => []);
  for (let r = 0; r < rounds; r++) for (const [i, side] of sides.entries()) runs[i]!.push(await side());
  return runs.map((ms) => ({ rate: combineRates(ms.map((m) => m.rate)), cpu: combineCpu(ms.map((m) => ({ cpu: m.cpu, seconds: m.rate.seconds }))) }));
}

/** One client's profile; its fields null when the account has none. */
interface ProfileRow { username: string; success_count: number | null; located_country: string | null; devices: number | null; countries: number | null }

async function profiles(databaseUrl: string): Promise<ProfileRow[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return (await db.query<ProfileRow>(`SELECT u.username, p.success_count, p.located_country, cardinality(p.devices) AS devices,
        (SELECT count(*)::int FROM jsonb_object_keys(p.countries)) AS countries
      FROM users u LEFT JOIN risk_profiles p ON p.user_id = u.id WHERE u.username LIKE 'riskbench%' ORDER BY u.username`)).rows;
  } finally {
    await db.end();
  }
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const db = new pg.Client({ connectionString: adminUrl });
  await db.connect();
  try {
    await db.query(`CREATE DATABASE ${name}`);
  } finally {
    await db.end();
  }
}

export async function riskBench(o: RiskBenchOptions): Promise<RiskBench> {
  await createDatabase(o.postgresUrl('postgres'), RISK_BENCH.database);
  const databaseUrl = o.postgresUrl(RISK_BENCH.database);
  const env = { DATABASE_URL: databaseUrl, DATA_DIR: o.dataDir, TRUST_PROXY: 'loopback' };
  // The first migrates the database and makes the administrator; the second starts while the
  // first makes the clients' accounts.
  const on = await o.start('strongroom (risk evaluation on)', { ...env, RISK_EVALUATION: '1' });
  const starting = o.start('strongroom (risk evaluation off)', { ...env, RISK_EVALUATION: '0' });
  starting.catch(() => undefined);
  try {
    const admin = await login(on.url, ADMIN.username, ADMIN.password);
    await Promise.all(clients.map((c) => createUser(on.url, admin.access_token, c.username, c.password)));
    const off = await starting;

    // No sign-in before the turns: the risk-on server's first of each client (in its first
    // warm-up) begins the profile and raises nothing; every later one is from a known device in
    // a usual country, as most sign-ins are.
    const { rounds, validate: v } = o;
    const [loginOff, loginOn] = await inTurns(rounds, [
      () => o.measure('login (risk off)', off.pid, () => riskLoginLoad(off.url, RISK_BENCH.loginSeconds, RISK_BENCH.loginWarmupMs)),
      () => o.measure('login (risk on)', on.pid, () => riskLoginLoad(on.url, RISK_BENCH.loginSeconds, RISK_BENCH.loginWarmupMs)),
    ]);
    // The path measured was the real one: every client located in a country, on one device, in
    // one country throughout (so nothing was raised); every sign-in of the risk-on server counted
    // in the profiles, none of the other's.
    const after = await profiles(databaseUrl);
    const profileSignIns = after.reduce((a, p) => a + (p.success_count ?? 0), 0);
    if (after.length !== clients.length || profileSignIns !== loginOn!.rate.all || after.some((p) => p.located_country === null || p.countries !== 1 || p.devices !== 1)) {
      throw new Error(`risk bench: the risk-on server made ${loginOn!.rate.all} sign-ins, each client from one country and one device; the profiles say ${JSON.stringify(after)}`);
    }

    // Sessions opened after the sign-in turns: no later sign-in ends them (MAX_CONCURRENT_SESSIONS).
    const tokenOff = await signIn(off.url, clients[0]!, 0);
    const tokenOn = await signIn(on.url, clients[0]!, 0);
    await validateLoad(off.url, tokenOff, v.connections, v.warmupSec);
    await validateLoad(on.url, tokenOn, v.connections, v.warmupSec);
    const [validateOff, validateOn] = await inTurns(rounds, [
      () => o.measure('validate (risk off)', off.pid, () => validateLoad(off.url, tokenOff, v.connections, v.seconds)),
      () => o.measure('validate (risk on)', on.pid, () => validateLoad(on.url, tokenOn, v.connections, v.seconds)),
    ]);
    return { loginOff: loginOff!, loginOn: loginOn!, validateOff: validateOff!, validateOn: validateOn!, profileSignIns };
  } finally {
    await on.stop();
    await (await starting.catch(() => undefined))?.stop();
  }
}
