/**
 * Threat: a captured pre-auth envelope sent again (issue 9, section 5). Before the replay
 * cache, one encrypted login was accepted 20 times. An envelope accepted within
 * TRANSPORT_REPLAY_WINDOW_SECONDS is refused as 400 DECRYPTION_FAILED on every node; the tests
 * count the sign-ins it produced, not only the statuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { App } from '../../src/platform/http/app.js';
import { createTestApp, useTwoNodes, type TestApp } from '../harness/app.js';
import { auditTotal, expectError, seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { ENCRYPTED, fetchServerPem, preAuthBody } from '../harness/transport-client.js';

const WINDOW_SEC = 300;


const send = (app: App, envelope: object) => app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: envelope });

describe('pre-auth envelope replay', () => {
  let t: TestApp;
  let clock: ManualClock;
  let pem: string;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0));
    t = await createTestApp({ clock, env: { TRANSPORT_REPLAY_WINDOW_SECONDS: String(WINDOW_SEC) } });
    pem = await fetchServerPem(t.app);
  });
  afterAll(async () => t.close());

  it('replayed encrypted login: the same envelope again is a plaintext 400 DECRYPTION_FAILED and signs in nothing', async () => {
    const user = await seedUser(t.s, 'replay.victim');
    const envelope = preAuthBody(pem, { username: 'replay.victim', password: STRONG_PASSWORD });
    expect((await send(t.app, envelope)).statusCode).toBe(200);
    const replayed = await send(t.app, envelope);
    expectError(replayed, 400, 'DECRYPTION_FAILED');
    expect(replayed.headers['x-encrypted']).toBeUndefined();
    expect(await auditTotal(t.s, user.uuid, 'USER_LOGIN')).toBe(1);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^strongroom_transport_replays_refused_total 1$/m);
  });

  it('20 copies of one envelope in parallel: exactly one is accepted, one session made', async () => {
    const user = await seedUser(t.s, 'replay.burst');
    const envelope = preAuthBody(pem, { username: 'replay.burst', password: STRONG_PASSWORD });
    const results = await Promise.all(Array.from({ length: 20 }, () => send(t.app, envelope)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 400, 'DECRYPTION_FAILED');
    expect(await auditTotal(t.s, user.uuid, 'USER_LOGIN')).toBe(1);
    expect(await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', user.id).execute()).toHaveLength(1);
  });

  it('an envelope that does not open is not remembered: junk cannot fill the cache or block the genuine one', async () => {
    const before = await t.s.database.db.selectFrom('transport_replay').select('digest').execute();
    const envelope = preAuthBody(pem, { username: 'replay.victim', password: STRONG_PASSWORD });
    const tampered = { data: { ...envelope.data, tag: Buffer.alloc(16).toString('base64') } };
    expectError(await send(t.app, tampered), 400, 'DECRYPTION_FAILED');
    expect(await t.s.database.db.selectFrom('transport_replay').select('digest').execute()).toHaveLength(before.length);
    expect((await send(t.app, envelope)).statusCode).toBe(200); // the genuine envelope, first seen now
  });

  it('a record holds for the whole window, and the clean-up job deletes it after', async () => {
    const envelope = preAuthBody(pem, { username: 'nobody.here', password: STRONG_PASSWORD });
    expect((await send(t.app, envelope)).statusCode).toBe(401); // sealed to the client; the status is plain
    clock.advance((WINDOW_SEC - 1) * 1000);
    expect(await t.scheduler.runNow('transport replay clean-up')).toBe(true);
    expectError(await send(t.app, envelope), 400, 'DECRYPTION_FAILED');
    clock.advance(1000);
    expect(await t.scheduler.runNow('transport replay clean-up')).toBe(true);
    expect(await t.s.database.db.selectFrom('transport_replay').select('digest').execute()).toHaveLength(0);
  });

  it('the window is TRANSPORT_REPLAY_WINDOW_SECONDS and no longer: a record past it is replaced even before the clean-up (the documented limit of an envelope without a timestamp)', async () => {
    const envelope = preAuthBody(pem, { username: 'nobody.either', password: STRONG_PASSWORD });
    expect((await send(t.app, envelope)).statusCode).toBe(401);
    clock.advance(WINDOW_SEC * 1000);
    expect((await send(t.app, envelope)).statusCode).toBe(401); // accepted again: the record had ended
    expectError(await send(t.app, envelope), 400, 'DECRYPTION_FAILED'); // and recorded anew
  });
});

describe('pre-auth envelope replay across two nodes', () => {
  const nodes = useTwoNodes();

  it('an envelope accepted by node a is refused by node b', async () => {
    const { a, b } = nodes;
    const user = await seedUser(a.s, 'replay.two.nodes');
    const envelope = preAuthBody(await fetchServerPem(a.app), { username: 'replay.two.nodes', password: STRONG_PASSWORD });
    expect((await send(a.app, envelope)).statusCode).toBe(200);
    expectError(await send(b.app, envelope), 400, 'DECRYPTION_FAILED');
    expect(await auditTotal(a.s, user.uuid, 'USER_LOGIN')).toBe(1);
  });

  it('20 copies of one envelope split over two nodes in parallel: one sign-in in all, one session', async () => {
    const { a, b } = nodes;
    const user = await seedUser(a.s, 'replay.two.burst');
    const envelope = preAuthBody(await fetchServerPem(a.app), { username: 'replay.two.burst', password: STRONG_PASSWORD });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 === 0 ? a.app : b.app, envelope)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 400, 'DECRYPTION_FAILED');
    expect(await auditTotal(a.s, user.uuid, 'USER_LOGIN')).toBe(1);
    expect(await a.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', user.id).execute()).toHaveLength(1);
  });
});
