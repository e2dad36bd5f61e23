/**
 * Queued push delivery (issue 14 section 2) against the local FCM fake: `notifications/send`
 * queues one message per active device, the worker (the `push delivery` job) claims and sends
 * them and marks them sent with the provider's id; retryable failures come back after the
 * backoff (at least Retry-After), up to the limit, then fail; an unregistered token fails its
 * message and turns inactive by itself; claims are exclusive; SPEC's limits are enforced. The
 * clock is frozen and moved; nothing sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushMessagesTable } from '../../src/platform/db/schema.js';
import { startFakeFcm, type FakeFcm } from '../harness/fcm.js';
import { createTestApp, createTwoNodes, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

let fcm: FakeFcm;
let t: TestApp;
let sender: string;

const token = (n: number): string => `outbox${n}:APA91bH2x7k3Lq9Zr0Xc3A_${'m'.repeat(90)}`;

async function userWithDevices(name: string, tokens: number[], inactive: number[] = []): Promise<string> {
  const { uuid } = await seedUser(t.s, name);
  const who = (await signIn(t.app, name)).access_token;
  for (const n of tokens) {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(who), payload: { push_token: token(n), platform: 'mobile' } });
    const { id } = res.json() as { id: string };
    if (inactive.includes(n)) await t.app.inject({ method: 'PUT', url: `/api/v1/notifications/devices/${id}/deactivate`, headers: bearer(who) });
  }
  return uuid;
}

const send = (body: Record<string, unknown>, who = sender) => t.app.inject({ method: 'POST', url: '/api/v1/notifications/send', headers: bearer(who), payload: body });
const deliver = () => t.scheduler.runNow('push delivery');

/** Moves the frozen clock; the sender signs in again (its session would have timed out). */
async function advance(ms: number): Promise<void> {
  t.clock.advance(ms);
  sender = (await signIn(t.app, 'push.service')).access_token;
}
const messages = async (ids: string[]) => (await t.s.db.selectFrom('push_messages').selectAll().where('id', 'in', ids).orderBy('id').execute()) as unknown as Array<Omit<PushMessagesTable, 'id' | 'status' | 'attempts'> & { id: string; status: string; attempts: number; next_attempt_at: Date }>;

beforeAll(async () => {
  fcm = await startFakeFcm();
  t = await createTestApp({ env: fcm.env });
  await seedUser(t.s, 'push.service', { roles: ['admin'] });
  sender = (await signIn(t.app, 'push.service')).access_token;
});
afterAll(async () => {
  await t.close();
  await fcm.close();
});

describe('push outbox', () => {
  it('queues one message per active device (202), and the worker sends each once, marked sent with the provider\'s id', async () => {
    const user = await userWithDevices('outbox.amina', [1, 2, 3], [3]);
    const res = await send({ user_id: user, title: 'Money received', body: 'Kofi sent you 1,500.00 KES.', push_data: { kind: 'transfer', reference: 'TRX-42' }, image_url: 'https://cdn.bank.example/t.png' });
    expect(res.statusCode, res.body).toBe(202);
    const { queued, message_ids: ids } = res.json() as { queued: number; message_ids: string[] };
    expect(queued).toBe(2);
    expect((await messages(ids)).map((m) => m.status)).toEqual(['pending', 'pending']);
    expect(await deliver()).toBe(true);
    const after = await messages(ids);
    expect(after.map((m) => [m.status, m.attempts])).toEqual([['sent', 1], ['sent', 1]]);
    expect(after.every((m) => /^projects\/strongroom-test\/messages\//.test(m.provider_message_id ?? ''))).toBe(true);
    const mine = fcm.sent.filter((m) => [token(1), token(2)].includes(m.token));
    expect(mine).toHaveLength(2);
    expect(mine.find((m) => m.token === token(1))).toEqual({ token: token(1), notification: { title: 'Money received', body: 'Kofi sent you 1,500.00 KES.', image: 'https://cdn.bank.example/t.png' }, data: { kind: 'transfer', reference: 'TRX-42' } });
    expect(fcm.sent.some((m) => m.token === token(3))).toBe(false); // the inactive device
    const used = await t.s.db.selectFrom('device_tokens').select(['last_used_at']).where('user_id', '=', (await t.s.users.findByUuid(user))!.id).orderBy('id').execute();
    expect(used.map((d) => d.last_used_at !== null)).toEqual([true, true, false]); // the batch's last use, written once for both
    await deliver();
    expect(fcm.sent.filter((m) => [token(1), token(2)].includes(m.token))).toHaveLength(2); // nothing sent twice
  });

  it('a retryable failure comes back after its backoff, never before Retry-After, and is sent then', async () => {
    const user = await userWithDevices('outbox.kofi', [4]);
    fcm.fail(token(4), 'UNAVAILABLE', 120);
    const [id] = ((await send({ user_id: user, title: 'Hello', body: 'Again' })).json() as { message_ids: string[] }).message_ids;
    await deliver();
    let [m] = await messages([id!]);
    expect(m).toMatchObject({ status: 'pending', attempts: 1, failure_reason: 'unavailable' });
    expect(new Date(m!.next_attempt_at).getTime() - t.clock.now()).toBeGreaterThanOrEqual(120_000);
    await deliver(); // not due yet
    expect((await messages([id!]))[0]!.attempts).toBe(1);
    fcm.clear();
    await advance(121_000);
    await deliver();
    [m] = await messages([id!]);
    expect(m).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('gives up after the attempt limit: failed with the reason, the token left active', async () => {
    const user = await userWithDevices('outbox.lindiwe', [5]);
    fcm.fail(token(5), 'INTERNAL');
    const [id] = ((await send({ user_id: user, title: 'Hello', body: 'There' })).json() as { message_ids: string[] }).message_ids;
    for (let i = 0; i < 5; i++) {
      await deliver();
      await advance(11 * 60_000); // past the longest backoff
    }
    expect((await messages([id!]))[0]).toMatchObject({ status: 'failed', attempts: 5, failure_reason: 'internal' });
    expect((await t.s.db.selectFrom('device_tokens').select('is_active').where('user_id', '=', (await t.s.users.findByUuid(user))!.id).executeTakeFirstOrThrow()).is_active).toBe(true);
    fcm.clear();
  });

  it('done-when: a token the provider reports unregistered fails its message and turns inactive by itself; the next notification skips it', async () => {
    const user = await userWithDevices('outbox.thabo', [6, 7]);
    fcm.fail(token(6), 'UNREGISTERED');
    const ids = ((await send({ user_id: user, title: 'Sign-in', body: 'New sign-in on the web' })).json() as { message_ids: string[] }).message_ids;
    await deliver();
    expect((await messages(ids)).map((m) => [m.status, m.failure_reason])).toEqual([['failed', 'unregistered'], ['sent', null]]);
    const devices = await t.s.db.selectFrom('device_tokens').select(['uuid', 'is_active']).where('user_id', '=', (await t.s.users.findByUuid(user))!.id).orderBy('id').execute();
    expect(devices.map((d) => d.is_active)).toEqual([false, true]);
    const retired = await t.s.db.selectFrom('audit_log').select('details').where('event_type', '=', 'DEVICE_TOKEN_DEACTIVATED').execute();
    expect(retired.map((r) => r.details)).toContainEqual({ device_token_id: devices[0]!.uuid, by: 'push_provider', reason: 'unregistered', push_message_id: ids[0] }); // named by its uuid
    expect(((await send({ user_id: user, title: 'Again', body: 'Only the live one' })).json() as { queued: number }).queued).toBe(1);
    fcm.clear();
  });

  it('concurrency: two workers claiming at once get disjoint messages, every one exactly once', async () => {
    const user = await userWithDevices('outbox.claims', [8]);
    await deliver(); // what earlier tests left queued goes first: the claims below are these twenty
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(...((await send({ user_id: user, title: `N${i}`, body: 'x' })).json() as { message_ids: string[] }).message_ids);
    const [a, b] = await Promise.all([t.s.pushOutbox.claim(12), t.s.pushOutbox.claim(12)]);
    const claimed = [...a!, ...b!].map((m) => m.id);
    expect(claimed.sort()).toEqual([...ids].sort()); // all twenty, each by one worker only
    expect(await t.s.pushOutbox.claim(50)).toEqual([]); // leased: nobody else takes them
    await advance(61_000); // the leases end (a crashed node's claims come back)
    const before = fcm.sent.filter((m) => m.token === token(8)).length;
    await Promise.all([deliver(), t.s.pushOutbox.deliver()]); // two workers at once
    await deliver();
    expect(fcm.sent.filter((m) => m.token === token(8)).length - before).toBe(20); // each sent exactly once
    expect((await messages(ids)).every((m) => m.status === 'sent')).toBe(true);
  });

  it('a queued message whose device changed hands meanwhile is never sent to the new owner\'s phone: failed token_deleted', async () => {
    const seller = await userWithDevices('outbox.seller', [12]);
    await deliver();
    const ids = ((await send({ user_id: seller, title: 'Your balance', body: 'private to the seller' })).json() as { message_ids: string[] }).message_ids;
    await seedUser(t.s, 'outbox.buyer');
    const buyer = (await signIn(t.app, 'outbox.buyer')).access_token;
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(buyer), payload: { push_token: token(12), platform: 'mobile' } })).statusCode).toBe(200); // moved
    const before = fcm.sent.filter((m) => m.token === token(12)).length;
    await deliver();
    expect((await messages(ids)).map((m) => [m.status, m.failure_reason])).toEqual([['failed', 'token_deleted']]);
    expect(fcm.sent.filter((m) => m.token === token(12)).length).toBe(before);
  });

  it('a message whose every claim ended in a crash (never an answer) is given up once claimed more than the attempts allow: failed attempts_exhausted, never sent', async () => {
    const user = await userWithDevices('outbox.poison', [10]);
    await deliver(); // what earlier tests left
    const ids = ((await send({ user_id: user, title: 'Poison', body: 'kills nodes' })).json() as { message_ids: string[] }).message_ids;
    // Five claims, each by a node that died before any answer, their leases over (written as they
    // would stand; the clock is not moved five minutes: the fake provider checks the service
    // account's JWT against the real time).
    await t.s.db.updateTable('push_messages').set({ attempts: 5, lease_until: null }).where('id', 'in', ids).execute();
    const before = fcm.sent.filter((m) => m.token === token(10)).length;
    await deliver();
    expect((await messages(ids)).map((m) => [m.status, m.failure_reason, m.attempts])).toEqual([['failed', 'attempts_exhausted', 6]]);
    expect(fcm.sent.filter((m) => m.token === token(10)).length).toBe(before);
  });

  it('the worker\'s turn stops when the node stops, and when a round sent nothing (a failing provider is not hammered)', async () => {
    const user = await userWithDevices('outbox.turns', [11]);
    await deliver();
    for (let i = 0; i < 120; i++) await send({ user_id: user, title: `T${i}`, body: 'x' }); // more than two batches
    const stopped = new AbortController();
    stopped.abort();
    expect(await t.s.pushOutbox.drain(stopped.signal)).toEqual({ claimed: 0, sent: 0, retried: 0, failed: 0 });
    fcm.fail(token(11), 'UNAVAILABLE');
    const failing = await t.s.pushOutbox.drain();
    expect(failing).toMatchObject({ claimed: 50, sent: 0, retried: 50 }); // one full round, nothing taken: the turn ends
    fcm.clear();
    const good = await t.s.pushOutbox.drain();
    expect(good).toMatchObject({ claimed: 70, sent: 70 }); // the other seventy, in full and short batches, in one turn
  });

  it('refuses SPEC\'s limits with 422 naming the field, an unknown user 404, a caller without notifications.send 403; nothing queued', async () => {
    const user = await userWithDevices('outbox.limits', [9]);
    for (const [body, field] of [
      [{ title: 't'.repeat(241), body: 'b' }, 'title'],
      [{ title: 't', body: 'b'.repeat(241) }, 'body'],
      [{ title: 't', body: 'b', push_data: { n: 1 } }, 'push_data.n'],
      [{ title: 't', body: 'b', push_data: { nested: { a: 'b' } } }, 'push_data.nested'],
      [{ title: 't', body: 'b', image_url: 'http://cdn.bank.example/x.png' }, 'image_url'],
    ] as const) {
      const { details } = expectError(await send({ user_id: user, ...body }), 422, 'VALIDATION_ERROR') as { details: { fields: Array<{ field: string }> } };
      expect(details.fields.map((f) => f.field)).toContain(field);
    }
    expectError(await send({ user_id: '00000000-0000-4000-8000-000000000000', title: 't', body: 'b' }), 404, 'USER_NOT_FOUND');
    await seedUser(t.s, 'outbox.customer');
    const customer = (await signIn(t.app, 'outbox.customer')).access_token;
    expectError(await send({ user_id: user, title: 't', body: 'b' }, customer), 403, 'PERMISSION_DENIED');
    const queued = await t.s.db.selectFrom('push_messages').select('id').where('user_id', '=', (await t.s.users.findByUuid(user))!.id).execute();
    expect(queued).toHaveLength(0);
  });

  it('without a push provider configured: 503 PUSH_NOT_CONFIGURED and nothing queued that nobody would send', async () => {
    const bare = await createTestApp();
    try {
      const { uuid } = await seedUser(bare.s, 'outbox.bare', { roles: ['admin'] });
      const admin = (await signIn(bare.app, 'outbox.bare')).access_token;
      expectError(await bare.app.inject({ method: 'POST', url: '/api/v1/notifications/send', headers: bearer(admin), payload: { user_id: uuid, title: 't', body: 'b' } }), 503, 'PUSH_NOT_CONFIGURED');
      expect(await bare.s.db.selectFrom('push_messages').select('id').execute()).toHaveLength(0);
      expect(await bare.scheduler.runNow('push delivery')).toBe(true); // the job is there, and does nothing
    } finally {
      await bare.close();
    }
  });
});

describe('two nodes', () => {
  it('a backlog queued on one node is delivered by both workers draining at once: each message sent exactly once, the latency observed', async () => {
    const { a, b, close } = await createTwoNodes({ env: fcm.env });
    try {
      const { uuid } = await seedUser(a.s, 'nodes.customer');
      const who = (await signIn(a.app, 'nodes.customer')).access_token;
      const devices = [20, 21, 22, 23, 24];
      for (const n of devices) await a.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(who), payload: { push_token: token(n), platform: 'mobile' } });
      await seedUser(a.s, 'nodes.service', { roles: ['admin'] });
      const service = (await signIn(b.app, 'nodes.service')).access_token;
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        const res = await b.app.inject({ method: 'POST', url: '/api/v1/notifications/send', headers: bearer(service), payload: { user_id: uuid, title: 'Statement', body: `Statement ${i}`, push_data: { seq: String(i) } } });
        ids.push(...(res.json() as { message_ids: string[] }).message_ids);
      }
      expect(ids).toHaveLength(300); // six full batches of 50
      const mine = () => fcm.sent.filter((m) => devices.some((n) => m.token === token(n)));
      a.clock.advance(2_000); // (one clock for both nodes) queued two seconds before they are sent
      const [ra, rb] = await Promise.all([a.s.pushOutbox.drain(), b.s.pushOutbox.drain()]);
      expect(ra!.claimed + rb!.claimed).toBe(300);
      expect(ra!.claimed).toBeGreaterThan(0); // both workers took part
      expect(rb!.claimed).toBeGreaterThan(0);
      const seen = mine().map((m) => `${m.token}#${m.data?.seq}`);
      expect(seen).toHaveLength(300);
      expect(new Set(seen).size).toBe(300); // none twice
      const rows = await a.s.db.selectFrom('push_messages').select('status').where('id', 'in', ids).execute();
      expect(rows.every((r) => r.status === 'sent')).toBe(true);
      // The delivery-latency histogram counts what its node sent.
      const metric = async (app: TestApp, what: 'count' | 'sum') => Number(new RegExp(`^strongroom_push_delivery_seconds_${what} ([0-9.]+)$`, 'm').exec(await app.s.metrics.registry.metrics())?.[1] ?? 0);
      expect((await metric(a, 'count')) + (await metric(b, 'count'))).toBe(300);
      expect((await metric(a, 'sum')) + (await metric(b, 'sum'))).toBe(600); // 300 messages, each two seconds
    } finally {
      await close();
    }
  });
});

