/**
 * The real-time channel (issue 30, section 1) over a real listening server and real sockets, on
 * both databases, with a frozen clock: the access token in the first message (never the URL), a
 * sealed `ready` under the session key; tampered and replayed frames closed 4400; no auth in time
 * 4401; sign-out 4001 (and the user's other socket told); a refresh 4002; token expiry 4003 when the
 * heartbeat runs after the clock moved; the SDK decrypting events; resume after reconnect; a slow
 * reader closed 1013 rather than buffered; the per-session socket limit; security alerts and
 * recoveries reaching the account holder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import WebSocket from 'ws';
import { StrongroomClient, type RealtimeEvent, type WebSocketConstructor } from '../../packages/client/src/index.js';
import { AccessErrors } from '../../src/access/errors.js';
import { HEARTBEAT_JOB } from '../../src/realtime/module.js';
import { CLOSE } from '../../src/realtime/types.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { captureLog, type LogLine } from '../harness/log-capture.js';
import { bearer, seedUser, signIn, STRONG_PASSWORD, withoutRiskResponses, type SignedIn } from '../harness/fixtures.js';
import { listenForSockets, TestSocket } from '../harness/realtime-client.js';

const MINUTE = 60_000;

describe('real-time channel', () => {
  let t: TestApp;
  let url: string;
  let userId: number;
  let logLines: LogLine[];

  beforeAll(async () => {
    const captured = captureLog('debug');
    logLines = captured.lines;
    t = await createTestApp({ log: captured.log, env: { REALTIME_AUTH_TIMEOUT_SECONDS: '1', REALTIME_MAX_BUFFERED_KB: '16', REALTIME_MAX_SOCKETS_PER_SESSION: '2',
      SESSION_INACTIVITY_MINUTES: '120' } }); // longer than the access token, so that its expiry can be seen (4003)
    await withoutRiskResponses(t.s);
    userId = (await seedUser(t.s, 'rt.user')).id;
    url = await listenForSockets(t.app);
  });
  afterAll(async () => t?.close());

  const session = async (): Promise<SignedIn & { key: Buffer }> => {
    const s = await signIn(t.app, 'rt.user');
    return { ...s, key: (await t.s.sessions.get(s.session_id))!.aesKey! };
  };
  /** The next frame that is not an event (a sign-in may end an older session: its `session.ended_elsewhere` reaches every socket). */
  const notEvent = async (socket: TestSocket) => {
    for (;;) {
      const f = await socket.next();
      if (f.type !== 'event') return f;
    }
  };
  const alert = (n: number) => ({ type: 'security.alert' as const, data: { alert_id: `a-${n}`, rule: 'test', severity: 'high' } });

  it('a plain GET answers 426; the token in the URL is refused (4401)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/ws' });
    expect(res.statusCode).toBe(426);
    expect(res.json()).toMatchObject({ error_code: 'REALTIME_UPGRADE_REQUIRED' });
    const s = await session();
    const inUrl = await TestSocket.open(`${url}?access_token=${s.access_token}`);
    expect((await inUrl.closed).code).toBe(CLOSE.UNAUTHENTICATED);
  });

  it('token leak through logs: a token put in the URL is written to no log line', async () => {
    const s = await session();
    const inUrl = await TestSocket.open(`${url}?access_token=${s.access_token}&x=1`);
    expect((await inUrl.closed).code).toBe(CLOSE.UNAUTHENTICATED);
    const plain = await t.app.inject({ method: 'GET', url: `/api/v1/ws?access_token=${s.access_token}` });
    expect(plain.statusCode).toBe(426);
    expect(logLines.some((l) => l.route === '/api/v1/ws')).toBe(true); // the access line is there, by route
    expect(JSON.stringify(logLines)).not.toContain(s.access_token);
  });

  it('the first message authenticates; the ready frame and events are sealed under the session key', async () => {
    const s = await session();
    const { socket, ready } = await TestSocket.ready(url, s.access_token, s.key);
    expect(ready).toMatchObject({ session_id: s.session_id, heartbeat_seconds: 30, resume_minutes: 10 });
    const id = await t.s.realtime.publish({ userId }, alert(1));
    const e = await socket.event();
    expect(e).toMatchObject({ id, type: 'security.alert', data: { alert_id: 'a-1' } });
    socket.send('ping', {});
    expect((await socket.next()).type).toBe('pong');
    socket.close();
  });

  it('a wrong or missing token, or no auth in time, closes 4401', async () => {
    const bad = await TestSocket.open(url);
    bad.auth('not-a-token');
    expect(await bad.closed).toMatchObject({ code: CLOSE.UNAUTHENTICATED, reason: 'TOKEN_INVALID' });
    const notAuth = await TestSocket.open(url);
    notAuth.sendRaw(JSON.stringify({ type: 'hello' }));
    expect((await notAuth.closed).code).toBe(CLOSE.UNAUTHENTICATED);
    const silent = await TestSocket.open(url); // REALTIME_AUTH_TIMEOUT_SECONDS=1
    expect(await silent.closed).toMatchObject({ code: CLOSE.UNAUTHENTICATED, reason: 'no auth message in time' });
  });

  it('a tampered frame, a replayed sequence number and an unsealed frame each close 4400', async () => {
    const s = await session();
    const tampered = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    const frame = tampered.send('ping', {}, 1);
    expect((await tampered.next()).type).toBe('pong');
    const flipped = Buffer.from(frame.ciphertext, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    tampered.sendRaw(JSON.stringify({ ...frame, seq: 2, ciphertext: flipped.toString('base64') }));
    expect((await tampered.closed).code).toBe(CLOSE.BAD_FRAME);

    const replayed = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    const once = replayed.send('ping', {}, 1);
    expect((await replayed.next()).type).toBe('pong');
    replayed.sendRaw(JSON.stringify(once));
    expect((await replayed.closed).code).toBe(CLOSE.BAD_FRAME);

    const plain = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    plain.sendRaw(JSON.stringify({ type: 'resume', after: 0 }));
    expect((await plain.closed).code).toBe(CLOSE.BAD_FRAME);
  });

  it('frames replayed across sockets: a frame of one socket closes another socket of the same session 4400; a reused connection_id is refused 4401', async () => {
    const s = await session();
    const a = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    const b = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    const frame = a.send('ping', {});
    expect((await notEvent(a)).type).toBe('pong');
    b.sendRaw(JSON.stringify(frame)); // same key, same type, a fresh number for b: only the socket differs
    expect(await b.closed).toMatchObject({ code: CLOSE.BAD_FRAME });
    const noId = await TestSocket.open(url);
    noId.sendRaw(JSON.stringify({ type: 'auth', access_token: s.access_token }));
    expect((await noId.closed).code).toBe(CLOSE.UNAUTHENTICATED);
    const twin = await TestSocket.open(url);
    twin.connectionId = a.connectionId;
    twin.key = s.key;
    twin.auth(s.access_token);
    expect(await twin.closed).toMatchObject({ code: CLOSE.UNAUTHENTICATED, reason: 'connection_id in use: choose a new random one' });
    a.close();
  });

  it('the SDK subscribes, decrypts every event in order and calls the typed handler', async () => {
    const sdk = new StrongroomClient({ baseUrl: url.replace('ws://', 'http://').replace('/api/v1/ws', '') });
    await sdk.login({ username: 'rt.user', password: STRONG_PASSWORD });
    const got: RealtimeEvent[] = [];
    const alerts: string[] = [];
    let arrived: () => void = () => undefined;
    const two = new Promise<void>((resolve) => { arrived = resolve; });
    const sub = sdk.realtime({
      onEvent: (e) => {
        got.push(e);
        if (got.length === 2) arrived();
      },
      on: { 'security.alert': (data) => alerts.push(data.alert_id) },
    }, { WebSocket: WebSocket as unknown as WebSocketConstructor });
    await sub.ready;
    const first = await t.s.realtime.publish({ userId }, alert(10));
    const second = await t.s.realtime.publish({ userId }, { type: 'recovery.started', data: { kind: 'password' } });
    await two;
    expect(got.map((e) => [e.id, e.type])).toEqual([[first, 'security.alert'], [second, 'recovery.started']]);
    expect(alerts).toEqual(['a-10']);
    expect(sub.lastEventId).toBe(second);
    sub.close();
  });

  it('resume after reconnect sends what was missed, in order, within REALTIME_RESUME_MINUTES', async () => {
    const s = await session();
    const first = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    const seen = await t.s.realtime.publish({ userId }, alert(20));
    expect((await first.event()).id).toBe(seen);
    first.close();
    await first.closed;
    const missed = [await t.s.realtime.publish({ userId }, alert(21)), await t.s.realtime.publish({ sessionId: s.session_id }, alert(22))];
    const again = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    again.send('resume', { after: seen });
    expect([(await again.event()).id, (await again.event()).id]).toEqual(missed);
    expect((await again.next())).toMatchObject({ type: 'resumed', body: { after: seen, delivered: 2, complete: true } });
    again.close();
    await again.closed;
    // Older than the window: not sent again (and the clean-up job deletes them).
    t.clock.advance(11 * MINUTE);
    const late = (await TestSocket.ready(url, s.access_token, s.key)).socket; // a new socket of the same session, whose token is still valid
    late.send('resume', { after: seen });
    expect((await late.next())).toMatchObject({ type: 'resumed', body: { delivered: 0 } });
    await t.scheduler.runNow('realtime event clean-up');
    expect(await t.s.db.selectFrom('realtime_events').select('id').where('user_id', '=', userId).execute()).toEqual([]);
    late.close();
  });

  it('resume flooding: a second resume on one socket closes it 4400', async () => {
    const s = await session();
    const socket = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    socket.send('resume', { after: 0 });
    expect((await notEvent(socket)).type).toBe('resumed');
    socket.send('resume', { after: 0 });
    expect(await socket.closed).toMatchObject({ code: CLOSE.BAD_FRAME, reason: 'one resume per socket' });
  });

  it('frame flooding: more than 32 frames waiting on one socket close it 1008', async () => {
    const s = await session();
    const socket = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    const raw = (socket.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
    raw.cork(); // one write: the server reads every frame before it handles the first
    for (let i = 0; i < 100; i += 1) socket.send('ping', {});
    raw.uncork();
    expect(await socket.closed).toMatchObject({ code: CLOSE.FLOODED, reason: 'too many frames waiting' });
  });

  it('socket outlives idle session: the heartbeat ends a session idle past its timeout (4001) and tells the others', async () => {
    const idle = await session();
    const idleSocket = (await TestSocket.ready(url, idle.access_token, idle.key)).socket;
    t.clock.advance(t.s.config.sessions.inactivitySec * 1000 - 5 * MINUTE);
    const active = await session();
    const activeSocket = (await TestSocket.ready(url, active.access_token, active.key)).socket;
    t.clock.advance(5 * MINUTE + 1000);
    activeSocket.send('ping', {}); // this client is there (a socket keeps no session alive: it records no activity)
    expect((await notEvent(activeSocket)).type).toBe('pong');
    idleSocket.send('ping', {});
    expect((await notEvent(idleSocket)).type).toBe('pong');
    await t.scheduler.runNow(HEARTBEAT_JOB);
    expect(await idleSocket.closed).toMatchObject({ code: CLOSE.SESSION_ENDED });
    expect(await activeSocket.event()).toMatchObject({ type: 'session.ended_elsewhere', data: { session_id: idle.session_id, reason: 'inactivity' } });
    expect((await t.s.sessions.get(idle.session_id))?.isActive).toBe(false);
    activeSocket.close();
  });

  it('events lost to sequence gaps: an event whose lower id becomes visible after a higher one was sent is still delivered, once', async () => {
    const s = await session();
    const { socket } = await TestSocket.ready(url, s.access_token, s.key);
    // An id taken by a writer whose row is not visible yet (another node's, or a transaction still open)...
    const reserved = Number((await sql<{ id: string }>`SELECT nextval(pg_get_serial_sequence('realtime_events', 'id')) AS id`.execute(t.s.db)).rows[0]!.id);
    const higher = await t.s.realtime.publish({ userId }, alert(30));
    expect((await socket.event()).id).toBe(higher);
    // ...that commits after the higher one was sent.
    await sql`INSERT INTO realtime_events (id, user_id, session_id, type, data, created_at) OVERRIDING SYSTEM VALUE
      VALUES (${reserved}, ${userId}, NULL, 'security.alert', ${JSON.stringify({ alert_id: 'late' })}::jsonb, ${new Date(t.clock.now())})`.execute(t.s.db);
    await t.s.bus.publish({ type: 'realtime.event', userId });
    expect(await socket.event()).toMatchObject({ id: reserved, data: { alert_id: 'late' } });
    const next = await t.s.realtime.publish({ userId }, alert(31));
    expect((await socket.event()).id).toBe(next); // the late one is not sent twice
    socket.close();
  });

  it('socket outlives access policy: a socket the session\'s access policy refuses at a heartbeat is closed 4401 POLICY_RESTRICTED', async () => {
    const s = await session();
    const { socket } = await TestSocket.ready(url, s.access_token, s.key);
    socket.send('ping', {});
    expect((await notEvent(socket)).type).toBe('pong');
    const policy = t.s.accessPolicy as { checkSession: typeof t.s.accessPolicy.checkSession };
    const own = policy.checkSession;
    policy.checkSession = async (check) => {
      if (check.sessionId === s.session_id) throw AccessErrors.POLICY_RESTRICTED({ rule: 'schedule' }); // its hours ended since it opened
      return own.call(t.s.accessPolicy, check);
    };
    try {
      await t.scheduler.runNow(HEARTBEAT_JOB);
    } finally {
      policy.checkSession = own;
    }
    expect(await socket.closed).toMatchObject({ code: CLOSE.UNAUTHENTICATED, reason: 'POLICY_RESTRICTED' });
    expect((await t.s.sessions.get(s.session_id))?.isActive).toBe(true); // refused, not ended: as an HTTP request would be
  });

  it('sign-out closes the session\'s sockets 4001 and tells the user\'s other sessions', async () => {
    const a = await session();
    const b = await session();
    const sa = (await TestSocket.ready(url, a.access_token, a.key)).socket;
    const sb = (await TestSocket.ready(url, b.access_token, b.key)).socket;
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(a.access_token), payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    expect((await sa.closed).code).toBe(CLOSE.SESSION_ENDED);
    expect(await sb.event()).toMatchObject({ type: 'session.ended_elsewhere', data: { session_id: a.session_id, reason: 'logout' } });
    sb.close();
  });

  it('a refresh (new session key) closes 4002; token expiry closes 4003 when the heartbeat runs on the moved clock', async () => {
    const s = await session();
    const rotated = (await TestSocket.ready(url, s.access_token, s.key)).socket;
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: s.refresh_token } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await rotated.closed).code).toBe(CLOSE.KEY_ROTATED);

    const fresh = await session();
    const expiring = (await TestSocket.ready(url, fresh.access_token, fresh.key)).socket;
    await t.scheduler.runNow(HEARTBEAT_JOB);
    expect(t.s.realtime.size).toBe(1); // still valid: pinged, kept
    t.clock.advance(t.s.config.tokens.accessTtlSec * 1000);
    await t.scheduler.runNow(HEARTBEAT_JOB);
    expect((await expiring.closed).code).toBe(CLOSE.TOKEN_EXPIRED);
  });

  it('past REALTIME_MAX_SOCKETS_PER_SESSION the oldest socket of the session is closed 4008', async () => {
    const s = await session();
    const sockets = [];
    for (let i = 0; i < 3; i += 1) sockets.push((await TestSocket.ready(url, s.access_token, s.key)).socket);
    expect((await sockets[0]!.closed).code).toBe(CLOSE.REPLACED);
    expect(t.s.realtime.size).toBe(2);
    for (const x of sockets) x.close();
  });

  it('a slow reader is closed 1013 once REALTIME_MAX_BUFFERED_KB is unsent, not buffered without limit', async () => {
    const s = await session();
    const { socket } = await TestSocket.ready(url, s.access_token, s.key);
    const raw = (socket.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    raw.pause(); // the client stops reading: the kernel's buffers fill, then the server's
    const big = 'x'.repeat(256 * 1024);
    let published = 0;
    while (t.s.realtime.size > 0 && published < 400) {
      await t.s.realtime.publish({ sessionId: s.session_id }, { type: 'security.alert', data: { big } });
      await t.s.realtime.settled();
      published += 1;
    }
    expect(t.s.realtime.size).toBe(0);
    raw.resume();
    expect((await socket.closed).code).toBe(CLOSE.SLOW_CONSUMER);
  });

  it('alert delivery by polling: an alert raised in a transaction has its event written in it, delivered at commit, never after a rollback', async () => {
    const s = await session();
    const { socket } = await TestSocket.ready(url, s.access_token, s.key);
    const user = (await t.s.users.findById(userId))!;
    const input = (dedupeKey: string) => ({ rule: 'impossible_travel', severity: 'high' as const, userId: user.uuid, auditId: null, channel: 'web', ipHash: null, location: null, score: 80, indicators: [], dedupeKey });
    await expect(t.s.db.transaction().execute(async (trx) => {
      await t.s.alerts.raise(trx, input('rt-trx-rolled-back'));
      throw new Error('the caller\'s change failed');
    })).rejects.toThrow('the caller\'s change failed');
    let alertId: string | null = null;
    let writtenInside = 0;
    await t.s.db.transaction().execute(async (trx) => {
      alertId = await t.s.alerts.raise(trx, input('rt-trx-committed'));
      writtenInside = (await trx.selectFrom('realtime_events').select('id').where('user_id', '=', userId).where(sql<boolean>`data->>'alert_id' = ${alertId}`).execute()).length;
    });
    expect(writtenInside).toBe(1); // with the alert, in the caller's transaction
    let first = await socket.event();
    while (first.type === 'session.ended_elsewhere') first = await socket.event(); // a sign-in may end an older session
    expect(first).toMatchObject({ type: 'security.alert', data: { alert_id: alertId } }); // the rolled-back one never came
    socket.close();
  });

  it('a security alert about the account and a recovery started on it reach the holder', async () => {
    const s = await session();
    const { socket } = await TestSocket.ready(url, s.access_token, s.key);
    const user = (await t.s.users.findById(userId))!;
    await t.s.alerts.raise(t.s.db, { rule: 'impossible_travel', severity: 'high', userId: user.uuid, auditId: null, channel: 'web', ipHash: null, location: null, score: 80, indicators: [], dedupeKey: 'rt-test-1' });
    expect(await socket.event()).toMatchObject({ type: 'security.alert', data: { rule: 'impossible_travel', severity: 'high', channel: 'web' } });
    await t.s.recovery.initiate('rt.user', 'password', { ip: '127.0.0.1', userAgent: 'test', fingerprint: '', channel: 'web' });
    expect(await socket.event()).toMatchObject({ type: 'recovery.started', data: { kind: 'password', at_branch: false } });
    socket.close();
  });
});

describe('real-time channel limits', () => {
  let t: TestApp;
  let url: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { REALTIME_MAX_SOCKETS_PER_SESSION: '2', REALTIME_MAX_SOCKETS_PER_USER: '2', RATE_LIMIT_TOKEN_IP: '5/1m' } });
    await withoutRiskResponses(t.s);
    await seedUser(t.s, 'rt.limits');
    url = await listenForSockets(t.app);
  });
  afterAll(async () => t?.close());

  const session = async (): Promise<SignedIn & { key: Buffer }> => {
    const s = await signIn(t.app, 'rt.limits');
    return { ...s, key: (await t.s.sessions.get(s.session_id))!.aesKey! };
  };

  it('alert silencing by socket eviction: past the per-user limit a new socket is refused (4029), the other session\'s socket stays', async () => {
    const holder = await session();
    const thief = await session();
    const holderSocket = (await TestSocket.ready(url, holder.access_token, holder.key)).socket; // open 1
    const thiefSocket = (await TestSocket.ready(url, thief.access_token, thief.key)).socket; // open 2
    const refused = await TestSocket.open(url); // open 3
    refused.key = thief.key;
    refused.auth(thief.access_token);
    expect(await refused.closed).toMatchObject({ code: CLOSE.TOO_MANY_SOCKETS });
    expect(t.s.realtime.size).toBe(2);
    const id = await t.s.realtime.publish({ sessionId: holder.session_id }, { type: 'security.alert', data: { alert_id: 'kept' } });
    expect(await holderSocket.event()).toMatchObject({ id, data: { alert_id: 'kept' } });
    holderSocket.close();
    thiefSocket.close();
    await holderSocket.closed;
    await thiefSocket.closed;
  });

  it('unauthenticated socket flood: past the pending cap a socket is closed 1013; past the per-address rate limit the upgrade answers 429', async () => {
    const waiting = await TestSocket.open(url); // open 4: waits for its auth
    t.s.realtime.maxPendingAuth = t.s.realtime.pendingAuth;
    const busy = await TestSocket.open(url); // open 5
    expect(await busy.closed).toMatchObject({ code: CLOSE.BUSY });
    await expect(TestSocket.open(url)).rejects.toThrow('upgrade refused: 429'); // open 6
    waiting.close();
  });
});
