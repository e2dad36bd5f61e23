/**
 * `npx tsx bench/push.ts`: the push delivery rows of `npm run bench` alone (issue 14 section 5),
 * on a PostgreSQL of its own with its durable defaults and the test harness's fake FCM. Needs
 * the built server (`npm run build`). Options: `--messages N` (per run), `--users N`,
 * `--devices N` (per user), `--concurrency N` (send requests in flight while filling the queue),
 * `--rate-only` (no kill -9 run), `--nodes N` (server nodes in the rate run), `--cpu-prof DIR` (the server's CPU profile, written at its stop).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startFakeFcm } from '../test/harness/fcm.js';
import { startPostgres } from '../test/harness/postgres.js';
import { pushBench, PUSH_DEFAULTS } from './lib/push.js';

const { values } = parseArgs({ options: { messages: { type: 'string' }, users: { type: 'string' }, devices: { type: 'string' }, concurrency: { type: 'string' }, 'rate-only': { type: 'boolean' }, nodes: { type: 'string' }, 'cpu-prof': { type: 'string' } } });
const num = (v: string | undefined, fallback: number): number => (v === undefined ? fallback : Number(v));

const postgres = await startPostgres({ durable: true });
const fcm = await startFakeFcm();
try {
  const client = new pg.Client({ connectionString: postgres.url('postgres') });
  await client.connect();
  await client.query('CREATE DATABASE push_bench');
  const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  await client.end();
  const r = await pushBench({
    databaseUrl: postgres.url('push_bench'), fcm,
    messages: num(values.messages, PUSH_DEFAULTS.messages), users: num(values.users, PUSH_DEFAULTS.users), devicesPerUser: num(values.devices, PUSH_DEFAULTS.devicesPerUser),
    enqueueConcurrency: num(values.concurrency, PUSH_DEFAULTS.enqueueConcurrency), timeoutSec: PUSH_DEFAULTS.timeoutSec,
    rateOnly: values['rate-only'] ?? false, extraNodes: num(values.nodes, 1) - 1, ...(values['cpu-prof'] === undefined ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] }),
  });
  const { rate, crash } = r;
  console.log('');
  console.log(`PostgreSQL ${version} (durable defaults), ${r.users} users x ${r.devicesPerUser} devices, ${rate.messages} messages per run, ${rate.nodes} server node${rate.nodes === 1 ? '' : 's'} in the rate run, the fake FCM in this process:`);
  console.log('| Measure | Figure | Target |');
  console.log('|---|---|---|');
  console.log(`| push delivered per second (queue full to empty) | ${rate.perSec} /s (${rate.drained} in ${rate.drainSec} s) | >= 500 /s (${rate.perSec >= 500 ? 'met' : 'NOT MET'}) |`);
  console.log(`| ... from the first enqueue to the last sent | ${rate.overallPerSec} /s (enqueue took ${rate.enqueueSec} s; ${rate.sentWhileFilling} sent meanwhile) | |`);
  console.log(`| ... nothing sent (gaps over 200 ms, between the worker's turns) | ${rate.idleSec} s in ${rate.idleGaps} gaps | |`);
  console.log(`| ... sent / failed / accepted by the fake | ${rate.sent} / ${rate.failed} / ${rate.fakeAccepted} | equal, none failed |`);
  console.log(`| ... CPU per message: server / PostgreSQL / bench (fake) | ${rate.cpuMsPerMessage.server} / ${rate.cpuMsPerMessage.postgres} / ${rate.cpuMsPerMessage.bench} ms (other processes: ${Math.round(100 * rate.foreign)}% of the machine) | |`);
  if (crash) {
    console.log(`| kill -9 mid-run: lost | ${crash.lost} of ${crash.messages} (sent ${crash.sent}, failed ${crash.failed}, pending ${crash.pending}) | 0 (${crash.lost === 0 && crash.pending === 0 ? 'met' : 'NOT MET'}) |`);
    console.log(`| ... duplicates | ${crash.duplicates} (${crash.leasedAtKill} claimed and not marked at the kill; ${crash.reclaimed} claimed twice) | <= one batch (50) |`);
    console.log(`| ... at the kill | ${crash.sentAtKill} sent, the fake had accepted ${crash.fakeAtKill} | |`);
    console.log(`| ... recovery | ${crash.recoverSec} s from the kill to none pending (restart ${crash.restartSec} s; all but the dead node's claimed batch out ${crash.restSec} s after the kill) | |`);
    if (Object.keys(crash.failureReasons).length > 0) console.log(`Failures: ${JSON.stringify(crash.failureReasons)}`);
  }
} finally {
  await fcm.close();
  postgres.stop();
}
