/**
 * The development push outbox: without a provider, outside production (PUSH_DEV_OUTBOX), a
 * message goes through the same queue and worker as with Firebase and is "sent" to the log,
 * so push can be tried on a laptop. The log shows the device masked, never the whole token.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevPushOutbox } from '../../src/notifications/dev-outbox.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, seedUser, signIn } from '../harness/fixtures.js';

let t: TestApp;
const lines: Array<Record<string, unknown>> = [];
const pushToken = `devbox1:APA91bH2x7k3Lq9Zr0Xc3A_${'q'.repeat(90)}`;

beforeAll(async () => {
  const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done(); } }));
  t = await createTestApp({ env: { PUSH_DEV_OUTBOX: '1' }, log });
});
afterAll(async () => t.close());

describe('development push outbox', () => {
  it('a queued message is sent to the log by the worker, marked sent with an outbox id; the token is masked in the log', async () => {
    await seedUser(t.s, 'devbox.admin', { roles: ['admin'] });
    const { uuid } = await seedUser(t.s, 'devbox.amina');
    const admin = (await signIn(t.app, 'devbox.admin')).access_token;
    const amina = (await signIn(t.app, 'devbox.amina')).access_token;
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(amina), payload: { push_token: pushToken, platform: 'mobile' } })).statusCode).toBe(201);

    const res = await t.app.inject({ method: 'POST', url: '/api/v1/notifications/send', headers: bearer(admin), payload: { user_id: uuid, title: 'Money received', body: 'Kofi sent you 1,500.00 KES.' } });
    expect(res.statusCode, res.body).toBe(202);
    const [id] = (res.json() as { message_ids: string[] }).message_ids;
    expect(await t.scheduler.runNow('push delivery')).toBe(true);

    const row = await t.s.db.selectFrom('push_messages').select(['status', 'provider_message_id']).where('id', '=', id!).executeTakeFirstOrThrow();
    expect(row.status).toBe('sent');
    expect(row.provider_message_id).toMatch(/^dev-outbox\/[0-9a-f-]{36}$/);
    const outbox = t.s.push as DevPushOutbox;
    expect(outbox).toBeInstanceOf(DevPushOutbox);
    expect(outbox.messages.at(-1)).toMatchObject({ messageId: row.provider_message_id, device: 'devbox…qqqq', title: 'Money received', body: 'Kofi sent you 1,500.00 KES.' });
    const line = lines.find((l) => l.message_id === row.provider_message_id);
    expect(line).toMatchObject({ level: 40, outbox: true, method: 'push', device: 'devbox…qqqq' });
    expect(String(line!.msg)).toContain('"Money received": Kofi sent you 1,500.00 KES.');
    expect(JSON.stringify(lines)).not.toContain(pushToken);
  });
});
