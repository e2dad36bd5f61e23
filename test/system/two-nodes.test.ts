/**
 * Two Strongroom nodes on one PostgreSQL, each with its own pool, caches and LISTEN connection.
 *
 * Stated bound (docs/operations.md): a revocation made on one node is refused by every other
 * node as soon as the NOTIFY arrives; if the notification is lost, the periodic re-sync
 * (CACHE_SYNC_MS, default 2 s) catches it. Both paths are exercised here without sleeping:
 * the first by awaiting the notification itself, the second by running the re-sync job.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BusEvent } from '../../src/platform/db/bus.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, expectError, login, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';
import { ENCRYPTED, openPreAuth, openSession, preAuthBody, fetchServerPem } from '../harness/transport-client.js';

let a: TestApp;
let b: TestApp;

beforeEach(async () => {
  const url = await freshPostgresDatabase();
  const secrets = testSecrets();
  const clock = new ManualClock(Date.now());
  a = await createTestApp({ database: await openTestDatabase('postgres', url), secrets, clock });
  b = await createTestApp({ database: await openTestDatabase('postgres', url), secrets, clock });
  await seedUser(a.s, 'kofi.mensah');
});

afterEach(async () => {
  await a.close();
  await b.close();
});

function nextEvent(t: TestApp, match: (e: BusEvent) => boolean): Promise<BusEvent> {
  return new Promise((resolve) => t.s.database.bus.subscribe((e) => match(e) && resolve(e)));
}

/** The cache re-sync jobs, as the scheduler's timers run them; both must run. */
async function syncCaches(t: TestApp): Promise<void> {
  expect(await t.scheduler.runNow('denylist sync')).toBe(true);
  expect(await t.scheduler.runNow('session sync')).toBe(true);
}

const validate = (t: TestApp, token: string) => t.app.inject({ method: 'POST', url: '/api/v1/auth/validate', headers: bearer(token) });

describe('two nodes on one PostgreSQL', () => {
  it('a token signed on one node validates on the other (shared keyring)', async () => {
    const s = await signIn(a.app, 'kofi.mensah');
    expect((await validate(b, s.access_token)).statusCode).toBe(200);
  });

  it('logout on node A is refused on node B once the NOTIFY arrives', async () => {
    const s = await signIn(a.app, 'kofi.mensah');
    expect((await validate(b, s.access_token)).statusCode).toBe(200); // B now caches the session
    const heard = Promise.all([
      nextEvent(b, (e) => e.type === 'token.denied'),
      nextEvent(b, (e) => e.type === 'session.ended' && e.sessionId === s.session_id),
    ]);
    expect((await a.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token) })).statusCode).toBe(200);
    await heard;
    expectError(await validate(b, s.access_token), 401, 'TOKEN_REVOKED');
  });

  it('a refresh on node A re-keys the session; node B answers under the new key once the NOTIFY arrives', async () => {
    await seedUser(a.s, 'kofi.admin', { roles: ['admin'] });
    const serverPem = await fetchServerPem(a.app);
    const signedIn = openPreAuth((await a.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(serverPem, { username: 'kofi.admin', password: STRONG_PASSWORD }) })).json());
    const sessionId = String(signedIn.body.session_id);
    const sealedGet = (t: TestApp, token: string) => t.app.inject({ method: 'GET', url: '/api/v1/admin/users?limit=1', headers: { ...ENCRYPTED, ...bearer(token) } });
    const first = await sealedGet(b, String(signedIn.body.access_token)); // B now caches the session and its first key
    expect(openSession(signedIn.key, first.json())).toHaveProperty('users');

    const heard = nextEvent(b, (e) => e.type === 'session.changed' && e.sessionId === sessionId);
    const refreshed = await a.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', headers: ENCRYPTED, payload: preAuthBody(serverPem, { refresh_token: signedIn.body.refresh_token }) });
    expect(refreshed.statusCode).toBe(200);
    const next = openPreAuth(refreshed.json());
    expect(next.key.equals(signedIn.key)).toBe(false);
    await heard;
    for (const node of [a, b]) expect(openSession(next.key, (await sealedGet(node, String(next.body.access_token))).json())).toHaveProperty('users');
  });

  it('without the notification, the periodic re-sync still refuses the token on node B', async () => {
    const s = await signIn(a.app, 'kofi.mensah');
    expect((await validate(b, s.access_token)).statusCode).toBe(200);
    // Lose B's notifications: close its listener, then end the session on A.
    await b.s.database.bus.close();
    await syncCaches(b); // first sync sets the high-water mark
    expect((await a.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(s.access_token) })).statusCode).toBe(200);
    expect((await validate(b, s.access_token)).statusCode).toBe(200); // stale: nothing told B yet
    await syncCaches(b); // what the CACHE_SYNC_MS timers run
    expectError(await validate(b, s.access_token), 401, 'TOKEN_REVOKED');
  });

  it('a rotated signing key reaches the other node', async () => {
    const kid = await a.s.keyring.rotate();
    const s = await signIn(a.app, 'kofi.mensah');
    expect(s.access_token).toBeTruthy();
    expect((await validate(b, s.access_token)).statusCode).toBe(200);
    expect(b.s.keyring.signingKey('access').kid).toBe(kid);
  });

  it('failed attempts on both nodes add up to one lockout', async () => {
    for (let i = 0; i < 5; i++) {
      const node = i % 2 === 0 ? a : b;
      const res = await login(node.app, 'kofi.mensah', 'Wrong#Passw0rd!');
      expect(res.statusCode).toBe(i < 4 ? 401 : 429);
    }
    expectError(await login(a.app, 'kofi.mensah', STRONG_PASSWORD), 429, 'ACCOUNT_LOCKED');
    expectError(await login(b.app, 'kofi.mensah', STRONG_PASSWORD), 429, 'ACCOUNT_LOCKED');
  });

  it('single-session mode across nodes: a sign-in on B ends the session from A', async () => {
    await a.close();
    await b.close();
    const url = await freshPostgresDatabase();
    const secrets = testSecrets();
    const env = { SESSION_MODE: 'single' };
    a = await createTestApp({ env, database: await openTestDatabase('postgres', url), secrets });
    b = await createTestApp({ env, database: await openTestDatabase('postgres', url), secrets });
    await seedUser(a.s, 'kofi.mensah');
    const first = await signIn(a.app, 'kofi.mensah');
    expect((await validate(a, first.access_token)).statusCode).toBe(200);
    const heard = nextEvent(a, (e) => e.type === 'session.ended' && e.sessionId === first.session_id);
    await signIn(b.app, 'kofi.mensah');
    await heard;
    expectError(await validate(a, first.access_token), 401, 'SESSION_INVALID');
  });
});
