/**
 * The push delivery rows (issue 14 section 5; ARCHITECTURE.md section 6: ">= 500 messages/s,
 * none lost after `kill -9`"). The built server on a database of its own, its push provider the
 * test harness's fake FCM (test/harness/fcm.ts) in this process, and a few users with several
 * active devices each, registered through the API.
 *
 * - Rate: `POST /api/v1/notifications/send` fills the queue (requests in parallel, one message
 *   per device of the user named); the server's own `push delivery` worker drains it meanwhile.
 *   The figure is the drain rate once the queue is full: messages marked `sent` after the last
 *   enqueue answered, over the time from then to the last `sent_at` (the server's clock, read
 *   from `push_messages`). The fake's count of accepted messages is the cross-check.
 * - Crash: the queue filled again; when about half is sent the server is killed with SIGKILL and
 *   started again on the same database, and the bench polls until no message is pending (a batch
 *   the dead node had claimed comes back when its 60 s lease ends). Every message is then
 *   checked: `sent` or `failed`, each `sent` one seen by the fake, and deliveries of the same
 *   message beyond the first counted (each message carries its own `seq` in `push_data`, and
 *   with the device token that names it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../test/harness/postgres.js';
import type { FakeFcm } from '../../test/harness/fcm.js';
import { createUser, login, postJson } from './api.js';
import { post } from './client.js';
import { postmasterPid, watchCpu } from './cpu.js';
import { sleep, startNode, type Child } from './proc.js';
import { ADMIN, SERVER_JS, strongroomEnv } from './strongroom.js';

export interface PushBenchOptions {
  /** A fresh database: the server migrates it and bootstraps its administrator. */
  databaseUrl: string;
  fcm: FakeFcm;
  /** Messages per run (a multiple of users x devices). */
  messages: number;
  users: number;
  devicesPerUser: number;
  /** Send requests in flight at once while filling the queue. */
  enqueueConcurrency: number;
  /** Give up waiting for the queue to empty after this long (the crash run waits out a 60 s lease). */
  timeoutSec: number;
  /** Extra node flags for the server (`--cpu-prof` to profile). */
  nodeArgs?: string[];
  /** More server nodes on the same database during the rate run (how far the machine goes beyond one node's pipeline). */
  extraNodes?: number;
  /** Skip the kill -9 run (profiling the rate alone). */
  rateOnly?: boolean;
  log?: (line: string) => void;
}

export const PUSH_DEFAULTS = { messages: 10_000, users: 10, devicesPerUser: 5, enqueueConcurrency: 16, timeoutSec: 240 } as const;

export interface PushRate {
  messages: number;
  /** Seconds to enqueue them all (the worker delivering meanwhile). */
  enqueueSec: number;
  /** Sent before the queue was full (not in the figure). */
  sentWhileFilling: number;
  /** The figure: sent after the queue was full, per second, until the last was sent. */
  perSec: number;
  drained: number;
  drainSec: number;
  /** Time in the drain with nothing sent for over 200 ms (between the worker's turns), and how many such gaps. */
  idleSec: number;
  idleGaps: number;
  /** From the first enqueue to the last `sent`, everything included. */
  overallPerSec: number;
  sent: number;
  failed: number;
  /** Accepted by the fake (must equal `sent`: no crash here). */
  fakeAccepted: number;
  /** Server nodes delivering. */
  nodes: number;
  /** CPU milliseconds per message during the drain: the server (all nodes), PostgreSQL (all backends), this process (the fake FCM and the polling). */
  cpuMsPerMessage: { server: number; postgres: number; bench: number };
  /** Share of the machine other processes (not this bench's) used during the drain. */
  foreign: number;
}

export interface PushCrash {
  messages: number;
  /** At the kill: sent, and claimed (leased) but not yet marked. */
  sentAtKill: number;
  leasedAtKill: number;
  /** Accepted by the fake before the kill. */
  fakeAtKill: number;
  /** From the kill until the restarted server answered /health. */
  restartSec: number;
  /** From the kill until only the dead node's claimed messages were pending (the rest sent by the restarted node). */
  restSec: number;
  /** From the kill until no message was pending. */
  recoverSec: number;
  sent: number;
  failed: number;
  pending: number;
  /** Messages neither sent nor failed, or marked sent and never accepted by the fake. */
  lost: number;
  /** Deliveries of a message beyond its first (same seq and device token). */
  duplicates: number;
  /** Messages claimed more than once (attempts > 1). */
  reclaimed: number;
  failureReasons: Record<string, number>;
}

export interface PushBench {
  users: number;
  devicesPerUser: number;
  rate: PushRate;
  crash: PushCrash | undefined;
}

interface Device {
  userUuid: string;
  /** The device token's public id (a uuid), as the register answer gives it. */
  deviceId: string;
  token: string;
}

/** An FCM-like registration token (about 150 characters), distinct per user and device. */
function fakePushToken(user: number, device: number): string {
  const tail = Buffer.from(`${user}-${device}-${'x'.repeat(100)}`).toString('base64url');
  return `bench${user}d${device}:APA91b${tail}`;
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

export async function pushBench(o: PushBenchOptions): Promise<PushBench> {
  const log = o.log ?? ((line: string) => console.log(line));
  const perRequest = o.devicesPerUser;
  if (o.messages % (o.users * perRequest) !== 0) throw new Error(`messages (${o.messages}) must be a multiple of users x devices (${o.users * perRequest})`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-push-bench-'));
  const env = strongroomEnv({ DATA_DIR: dataDir, DATABASE_URL: o.databaseUrl, ...o.fcm.env });
  const start = async (name: string): Promise<Child> => startNode(name, [...(o.nodeArgs ?? []), SERVER_JS], env, await freePort());
  const db = new pg.Client({ connectionString: o.databaseUrl });
  let server: Child | undefined;
  const extra: Child[] = [];
  try {
    server = await start('strongroom (push)');
    await db.connect();
    const postmaster = postmasterPid(Number(new URL(o.databaseUrl).port)) ?? -1;

    log(`  ${o.users} users with ${o.devicesPerUser} devices each ...`);
    const admin = await login(server.url, ADMIN.username, ADMIN.password);
    const devices: Device[] = [];
    const base = server.url;
    await Promise.all(Array.from({ length: o.users }, async (_, u) => {
      const username = `pushbench${u}`;
      const password = 'Pz7#kLq2!wRt9$mN';
      const userUuid = await createUser(base, admin.access_token, username, password);
      const user = await login(base, username, password);
      for (let d = 0; d < o.devicesPerUser; d++) {
        const token = fakePushToken(u, d);
        const r = await postJson(`${base}/api/v1/notifications/devices/register`, { push_token: token, platform: d % 2 === 0 ? 'mobile' : 'web', device_name: `Bench phone ${d}` }, user.access_token);
        if (r.status !== 201) throw new Error(`register device ${d} of ${username}: ${r.status} ${JSON.stringify(r.json)}`);
        devices.push({ userUuid, deviceId: r.json.id as string, token });
      }
    }));
    const users = [...new Set(devices.map((d) => d.userUuid))];
    const tokenOf = new Map(devices.map((d) => [d.deviceId, d.token]));
    const auth = { authorization: `Bearer ${admin.access_token}` };

    /** Fills the queue: `messages / devicesPerUser` send requests, round robin over the users; `seq` numbers them. */
    const enqueue = async (run: string): Promise<number> => {
      const requests = o.messages / perRequest;
      let next = 0;
      let queued = 0;
      await Promise.all(Array.from({ length: o.enqueueConcurrency }, async () => {
        while (next < requests) {
          const seq = next++;
          const body = JSON.stringify({ user_id: users[seq % users.length], title: 'Money received', body: `Kofi Mensah sent you 1,500.00 KES. Ref TRX-${seq}`, push_data: { kind: 'transfer', bench: run, seq: String(seq) } });
          const res = await post(`${base}/api/v1/notifications/send`, body, auth);
          if (res.status !== 202) throw new Error(`send ${run}/${seq}: ${res.status} ${res.body}`);
          queued += (JSON.parse(res.body) as { queued: number }).queued;
        }
      }));
      if (queued !== o.messages) throw new Error(`queued ${queued} messages, expected ${o.messages}`);
      return queued;
    };
    const maxId = async (): Promise<string> => (await db.query<{ id: string }>('SELECT coalesce(max(id), 0)::text AS id FROM push_messages')).rows[0]!.id;
    const counts = async (after: string) => {
      const r = (await db.query<{ pending: string; sent: string; failed: string; leased: string; total: string }>(
        `SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'sent') AS sent,
                count(*) FILTER (WHERE status = 'failed') AS failed, count(*) FILTER (WHERE status = 'pending' AND lease_until > now()) AS leased, count(*) AS total
         FROM push_messages WHERE id > $1`, [after])).rows[0]!;
      return { pending: Number(r.pending), sent: Number(r.sent), failed: Number(r.failed), leased: Number(r.leased), total: Number(r.total) };
    };
    const fakeOf = (run: string) => o.fcm.sent.filter((m) => m.data?.bench === run);
    const waitDrained = async (after: string, what: string, each?: (c: Awaited<ReturnType<typeof counts>>) => void): Promise<void> => {
      const deadline = Date.now() + o.timeoutSec * 1000;
      for (;;) {
        const c = await counts(after);
        each?.(c);
        if (c.pending === 0) return;
        if (Date.now() > deadline) throw new Error(`${what}: ${c.pending} messages still pending after ${o.timeoutSec} s (sent ${c.sent}, failed ${c.failed}, leased ${c.leased})`);
        await sleep(100);
      }
    };

    // Rate.
    log(`  rate: ${o.messages} messages (${o.messages / perRequest} send requests, ${o.enqueueConcurrency} in flight), then until none is pending ...`);
    for (let i = 0; i < (o.extraNodes ?? 0); i++) extra.push(await start(`strongroom (push, node ${i + 2})`));
    const rateAfter = await maxId();
    const t0 = Date.now();
    await enqueue('rate');
    const tFull = Date.now();
    const sentWhileFilling = (await counts(rateAfter)).sent;
    const watch = watchCpu();
    await waitDrained(rateAfter, 'rate run');
    const cpu = watch.end([process.pid, postmaster], { server: { pid: server.pid }, postgres: { pid: postmaster, tree: true }, bench: { pid: process.pid }, ...Object.fromEntries(extra.map((x, i) => [`node${i + 2}`, { pid: x.pid }])) });
    for (const x of extra.splice(0)) await x.stop();
    const r = (await db.query<{ drained: string; last: Date; sent: string; failed: string }>(
      `SELECT count(*) FILTER (WHERE sent_at > $2) AS drained, max(sent_at) AS last, count(*) FILTER (WHERE status = 'sent') AS sent, count(*) FILTER (WHERE status = 'failed') AS failed
       FROM push_messages WHERE id > $1`, [rateAfter, new Date(tFull)])).rows[0]!;
    const idle = (await db.query<{ sec: number | null; n: string }>(
      `SELECT sum(gap) AS sec, count(*) AS n FROM (
         SELECT extract(epoch FROM sent_at - lag(sent_at) OVER (ORDER BY sent_at))::float8 AS gap FROM push_messages WHERE id > $1 AND sent_at > $2
       ) g WHERE gap > 0.2`, [rateAfter, new Date(tFull)])).rows[0]!;
    const drained = Number(r.drained);
    const drainSec = (r.last.getTime() - tFull) / 1000;
    const perMessage = (sec: number | undefined) => round((1000 * (sec ?? 0)) / drained, 3);
    const rate: PushRate = {
      messages: o.messages, enqueueSec: round((tFull - t0) / 1000), sentWhileFilling, perSec: round(drained / drainSec, 1), drained, drainSec: round(drainSec), idleSec: round(idle.sec ?? 0), idleGaps: Number(idle.n),
      overallPerSec: round(Number(r.sent) / ((r.last.getTime() - t0) / 1000), 1), sent: Number(r.sent), failed: Number(r.failed), fakeAccepted: fakeOf('rate').length,
      nodes: 1 + (o.extraNodes ?? 0),
      cpuMsPerMessage: { server: perMessage(Object.entries(cpu.sec).filter(([k]) => k === 'server' || k.startsWith('node')).reduce((n, [, v]) => n + v, 0)), postgres: perMessage(cpu.sec.postgres), bench: perMessage(cpu.sec.bench) },
      foreign: round(cpu.foreign, 3),
    };
    log(`  rate: ${rate.perSec}/s (${drained} in ${rate.drainSec} s after the queue was full, ${rate.idleSec} s of it in ${rate.idleGaps} gaps between worker turns; ${sentWhileFilling} sent while filling it in ${rate.enqueueSec} s); the fake accepted ${rate.fakeAccepted}`);

    if (o.rateOnly) return { users: o.users, devicesPerUser: o.devicesPerUser, rate, crash: undefined };

    // Crash.
    log(`  kill -9: ${o.messages} messages again, SIGKILL at about half sent, restart, until none is pending ...`);
    const crashAfter = await maxId();
    await enqueue('crash');
    for (;;) {
      const c = await counts(crashAfter);
      if (c.sent >= o.messages / 2 || c.pending === 0) break;
      await sleep(20);
    }
    const victim = server;
    process.kill(victim.pid, 'SIGKILL');
    const tKill = Date.now();
    while (isAlive(victim.pid)) await sleep(10);
    await victim.stop(); // forgets it (it is dead already)
    server = undefined;
    const atKill = await counts(crashAfter);
    const fakeAtKill = fakeOf('crash').length;
    log(`  killed with ${atKill.sent} sent, ${atKill.leased} claimed and not marked, ${atKill.pending} pending; the fake had accepted ${fakeAtKill}`);
    server = await start('strongroom (push, after kill -9)');
    const tUp = Date.now();
    let tRest: number | undefined;
    await waitDrained(crashAfter, 'crash run', (c) => {
      if (tRest === undefined && c.pending <= atKill.leased) tRest = Date.now();
    });
    const tDone = Date.now();

    // The outbox names a device by its internal key; the register answers gave the public id (uuid).
    const rows = (await db.query<{ status: string; device_uuid: string; seq: string; attempts: number; failure_reason: string | null }>(
      `SELECT m.status, d.uuid::text AS device_uuid, m.data->>'seq' AS seq, m.attempts, m.failure_reason
       FROM push_messages m JOIN device_tokens d ON d.id = m.device_token_id WHERE m.id > $1`, [crashAfter])).rows;
    const deliveries = new Map<string, number>();
    for (const m of fakeOf('crash')) deliveries.set(`${m.data!.seq}/${m.token}`, (deliveries.get(`${m.data!.seq}/${m.token}`) ?? 0) + 1);
    const failureReasons: Record<string, number> = {};
    let lost = 0;
    for (const row of rows) {
      if (row.status === 'failed') failureReasons[row.failure_reason ?? 'unknown'] = (failureReasons[row.failure_reason ?? 'unknown'] ?? 0) + 1;
      if (row.status === 'pending' || (row.status === 'sent' && !deliveries.has(`${row.seq}/${tokenOf.get(row.device_uuid)}`))) lost++;
    }
    const c = await counts(crashAfter);
    const crash: PushCrash = {
      messages: rows.length, sentAtKill: atKill.sent, leasedAtKill: atKill.leased, fakeAtKill,
      restartSec: round((tUp - tKill) / 1000), restSec: round(((tRest ?? tDone) - tKill) / 1000), recoverSec: round((tDone - tKill) / 1000),
      sent: c.sent, failed: c.failed, pending: c.pending, lost: lost + Math.max(0, o.messages - rows.length),
      duplicates: [...deliveries.values()].reduce((n, k) => n + k - 1, 0),
      reclaimed: rows.filter((row) => row.attempts > 1).length, failureReasons,
    };
    log(`  after the restart: ${crash.sent} sent, ${crash.failed} failed, ${crash.pending} pending, ${crash.lost} lost, ${crash.duplicates} duplicates; ${crash.recoverSec} s from the kill to none pending (all but the dead node's claimed batch after ${crash.restSec} s)`);
    return { users: o.users, devicesPerUser: o.devicesPerUser, rate, crash };
  } finally {
    for (const x of extra) await x.stop();
    await server?.stop();
    await db.end().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
