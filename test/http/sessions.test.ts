/**
 * Sessions (SPEC "Session", "States" and Authentication 5-6; ruling 7): the recorded fields,
 * the inactivity timeout, the concurrency limit in multi mode, single mode, session history,
 * and last_activity written at most once per SESSION_ACTIVITY_WRITE_SECONDS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, type SignedIn } from '../harness/fixtures.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

type Res = Awaited<ReturnType<typeof login>>;

function validate(app: TestApp, token: string, headers: Record<string, string> = {}): Promise<Res> {
  return app.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token, headers) });
}

function refresh(app: TestApp, refreshToken: string): Promise<Res> {
  return app.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: refreshToken } });
}

async function sessionRow(app: TestApp, sessionId: string) {
  return app.s.database.db.selectFrom('sessions').selectAll().where('session_id', '=', sessionId).executeTakeFirstOrThrow();
}

async function history(app: TestApp, sessionId: string) {
  return app.s.database.db.selectFrom('session_history').select(['event', 'reason', 'user_id', 'at']).where('session_id', '=', sessionId).orderBy('id').execute();
}

const ms = (d: Date | string): number => new Date(d).getTime();

describe('session record', () => {
  it('holds SPEC\'s fields: device fingerprint, hashed IP, user agent, channel, mfa_completed, expiry', async () => {
    const user = await seedUser(t.s, 'field.check');
    const res = await login(t.app, 'field.check', undefined, { device_fingerprint: 'fp-android-7f3a', channel: 'mobile' }, { 'user-agent': 'StrongroomMobile/2.1 (Android 14)' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as SignedIn;
    const row = await sessionRow(t, body.session_id);
    expect(row).toMatchObject({
      session_id: body.session_id,
      user_id: user.id,
      device_fingerprint: 'fp-android-7f3a',
      user_agent: 'StrongroomMobile/2.1 (Android 14)',
      channel: 'mobile',
      is_active: true,
      mfa_completed: false,
      ended_at: null,
      end_reason: null,
    });
    expect(row.ip_address).toMatch(/^[0-9a-f]{64}$/);
    expect(row.ip_address).toBe(t.s.ipHasher.hex('127.0.0.1'));
    expect(ms(row.created_at)).toBe(t.clock.now());
    expect(ms(row.last_activity)).toBe(t.clock.now());
    expect(ms(row.expires_at)).toBe(t.clock.now() + t.s.config.tokens.refreshTtlSec * SECOND);

    expect((await validate(t, body.access_token, { 'x-device-fingerprint': 'fp-android-7f3a' })).statusCode).toBe(200);
    expect(await history(t, body.session_id)).toEqual([expect.objectContaining({ event: 'created', reason: null, user_id: user.id })]);
  });

  it('keeps session history: the start and the end with its reason', async () => {
    await seedUser(t.s, 'history.user');
    const s = await signIn(t.app, 'history.user');
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token) });
    expect(out.statusCode).toBe(200);
    expect((await history(t, s.session_id)).map((h) => [h.event, h.reason])).toEqual([['created', null], ['ended', 'logout']]);
    expect(await sessionRow(t, s.session_id)).toMatchObject({ is_active: false, end_reason: 'logout' });
  });
});

describe('inactivity timeout', () => {
  it('15 minutes and 1 second after the last request the session is expired: 401 SESSION_EXPIRED', async () => {
    await seedUser(t.s, 'idle.user');
    const s = await signIn(t.app, 'idle.user');
    t.clock.advance(14 * MINUTE + 59 * SECOND);
    expect((await validate(t, s.access_token)).statusCode).toBe(200); // the idle time starts again
    t.clock.advance(14 * MINUTE + 59 * SECOND);
    expect((await validate(t, s.access_token)).statusCode).toBe(200);
    t.clock.advance(15 * MINUTE + SECOND);
    expectError(await validate(t, s.access_token), 401, 'SESSION_EXPIRED');
    expectError(await validate(t, s.access_token), 401, 'SESSION_INVALID'); // it stays ended
    expectError(await refresh(t, s.refresh_token), 401, 'TOKEN_REVOKED');
    expect(await sessionRow(t, s.session_id)).toMatchObject({ is_active: false, end_reason: 'inactivity' });
    expect((await history(t, s.session_id)).map((h) => h.reason)).toEqual([null, 'inactivity']);
    await signIn(t.app, 'idle.user'); // re-authentication works
  });

  it('a request every 10 minutes keeps it alive for more than an hour', async () => {
    await seedUser(t.s, 'busy.user');
    const start = t.clock.now();
    let s = await signIn(t.app, 'busy.user');
    for (let minute = 10; minute <= 80; minute += 10) {
      t.clock.advance(10 * MINUTE);
      if (minute === 50) {
        // The access token lives 60 minutes; the client refreshes it within the same session.
        const r = await refresh(t, s.refresh_token);
        expect(r.statusCode, r.body).toBe(200);
        s = r.json() as SignedIn;
        continue;
      }
      const res = await validate(t, s.access_token);
      expect(res.statusCode, `at ${minute} min: ${res.body}`).toBe(200);
      expect((res.json() as { session_id: string }).session_id).toBe(s.session_id);
    }
    expect(t.clock.now() - start).toBe(80 * MINUTE);
    expect(ms((await sessionRow(t, s.session_id)).last_activity)).toBe(t.clock.now());
    t.clock.advance(15 * MINUTE + SECOND);
    expectError(await validate(t, s.access_token), 401, 'SESSION_EXPIRED');
  });
});

describe('last_activity writes', () => {
  it('are not made on every request: at most once per SESSION_ACTIVITY_WRITE_SECONDS (60 s)', async () => {
    expect(t.s.config.sessions.activityWriteSec).toBe(60);
    await seedUser(t.s, 'hot.path');
    const start = t.clock.now();
    const s = await signIn(t.app, 'hot.path');
    for (let i = 0; i < 5; i++) {
      t.clock.advance(10 * SECOND);
      for (let j = 0; j < 3; j++) expect((await validate(t, s.access_token)).statusCode).toBe(200);
    }
    // 15 validations over 50 s: the row still holds the sign-in time.
    expect(ms((await sessionRow(t, s.session_id)).last_activity)).toBe(start);

    t.clock.advance(11 * SECOND);
    expect((await validate(t, s.access_token)).statusCode).toBe(200);
    expect(ms((await sessionRow(t, s.session_id)).last_activity)).toBe(start + 61 * SECOND);
    t.clock.advance(SECOND);
    expect((await validate(t, s.access_token)).statusCode).toBe(200);
    expect(ms((await sessionRow(t, s.session_id)).last_activity)).toBe(start + 61 * SECOND);
  });
});

describe('multi-session mode (default, MAX_CONCURRENT_SESSIONS=3)', () => {
  it('the 4th sign-in ends the oldest session; the others stay', async () => {
    expect(t.s.config.sessions).toMatchObject({ mode: 'multi', maxConcurrent: 3 });
    await seedUser(t.s, 'four.devices');
    const sessions: SignedIn[] = [];
    for (let i = 0; i < 4; i++) {
      sessions.push(await signIn(t.app, 'four.devices'));
      t.clock.advance(SECOND);
    }
    const [oldest, ...rest] = sessions;
    expectError(await validate(t, oldest!.access_token), 401, 'SESSION_INVALID');
    expectError(await refresh(t, oldest!.refresh_token), 401, 'TOKEN_REVOKED');
    for (const s of rest) expect((await validate(t, s.access_token)).statusCode).toBe(200);
    expect(await sessionRow(t, oldest!.session_id)).toMatchObject({ is_active: false, end_reason: 'concurrency_limit' });

    // The next one ends the then-oldest, the 2nd.
    const fifth = await signIn(t.app, 'four.devices');
    expectError(await validate(t, rest[0]!.access_token), 401, 'SESSION_INVALID');
    for (const s of [rest[1]!, rest[2]!, fifth]) expect((await validate(t, s.access_token)).statusCode).toBe(200);
  });

  it('parallel sign-ins never leave more than 3 active sessions', async () => {
    const user = await seedUser(t.s, 'parallel.devices');
    const results = await Promise.all(Array.from({ length: 6 }, () => login(t.app, 'parallel.devices')));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const active = await t.s.database.db.selectFrom('sessions').select('session_id').where('user_id', '=', user.id).where('is_active', '=', true).execute();
    expect(active).toHaveLength(3);
  });
});

describe('single-session mode', () => {
  let single: TestApp;
  beforeAll(async () => {
    single = await createTestApp({ env: { SESSION_MODE: 'single' } });
  });
  afterAll(async () => single.close());

  it('a new sign-in ends the previous session', async () => {
    await seedUser(single.s, 'one.device');
    const first = await signIn(single.app, 'one.device');
    single.clock.advance(SECOND);
    const second = await signIn(single.app, 'one.device');
    expectError(await validate(single, first.access_token), 401, 'SESSION_INVALID');
    expectError(await refresh(single, first.refresh_token), 401, 'TOKEN_REVOKED');
    expect((await validate(single, second.access_token)).statusCode).toBe(200);
    expect(await sessionRow(single, first.session_id)).toMatchObject({ is_active: false, end_reason: 'superseded' });
    expect((await history(single, first.session_id)).map((h) => [h.event, h.reason])).toEqual([['created', null], ['ended', 'superseded']]);

    const third = await signIn(single.app, 'one.device');
    expectError(await validate(single, second.access_token), 401, 'SESSION_INVALID');
    expect((await validate(single, third.access_token)).statusCode).toBe(200);
  });
});
