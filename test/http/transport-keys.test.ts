/**
 * Transport keys over time (SPEC Transport encryption 2 and 4, issue 3 section 1): rotation of
 * the server's RSA key pair (the previous key accepted until its own `expires_at`, `key_id`
 * choosing the key, revocation at once, rotation when due), the 24-hour session key, and two
 * nodes on one database sharing the keyring. Time moves only with the ManualClock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import type { AccessClaims } from '../../src/tokens/service.js';
import { createTestApp, dbKind, freshPostgresDatabase, openTestDatabase, testSecrets, type TestApp } from '../harness/app.js';
import { bearer, expectError, seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { ENCRYPTED, openPreAuth, openSession, preAuthBody, sessionBody } from '../harness/transport-client.js';

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
interface PublicKey {
  public_key: string;
  key_id: string;
  expires_at: string;
}

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;
const USER = 'keys.user';

const apps: TestApp[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const t of apps.splice(0)) await t.close();
});

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ env: { MAX_CONCURRENT_SESSIONS: '20', ...env } });
  apps.push(t);
  await seedUser(t.s, USER, { roles: ['admin'] });
  return t;
}

const publicKey = async (t: TestApp): Promise<PublicKey> => (await t.app.inject({ method: 'GET', url: '/api/v1/auth/public_key' })).json<PublicKey>();

function signIn(t: TestApp, pem: string, keyId?: string): Promise<Res> {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: ENCRYPTED, payload: preAuthBody(pem, { username: USER, password: STRONG_PASSWORD }, keyId === undefined ? {} : { keyId }) });
}

/** Decrypted and answered: the answer is sealed to the client key (whatever the route said). */
function accepted(res: Res): ReturnType<typeof openPreAuth> {
  expect(res.statusCode, res.body.slice(0, 200)).not.toBe(400);
  expect(res.headers['x-encrypted']).toBe('true');
  return openPreAuth(res.json());
}

const refused = (res: Res): void => {
  expectError(res, 400, 'DECRYPTION_FAILED');
  expect(res.headers['x-encrypted']).toBeUndefined();
};

// Apps are built in hooks (generous timeout): an in-memory PGlite migrates from scratch each time.
describe('server key rotation', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await app();
  });

  it('rotate() publishes a new key; the old one is still accepted, with or without its key_id', async () => {
    const old = await publicKey(t);
    const newId = await t.s.transportKeys.rotate();
    const next = await publicKey(t);
    expect(next.key_id).toBe(newId);
    expect(next.key_id).not.toBe(old.key_id);
    expect(next.public_key).not.toBe(old.public_key);
    expect(Date.parse(next.expires_at)).toBe(t.clock.now() + 97 * DAY); // 90 days current + 7 days of grace

    expect(accepted(await signIn(t, old.public_key)).body).toMatchObject({ token_type: 'bearer' });
    expect(accepted(await signIn(t, old.public_key, old.key_id)).body).toMatchObject({ token_type: 'bearer' });
    expect(accepted(await signIn(t, next.public_key, next.key_id)).body).toMatchObject({ token_type: 'bearer' });
  });

  it('key_id selects the key: an envelope for one key announced as the other is refused', async () => {
    const old = await publicKey(t);
    await t.s.transportKeys.rotate();
    const next = await publicKey(t);
    refused(await signIn(t, old.public_key, next.key_id));
    refused(await signIn(t, next.public_key, old.key_id));
  });

  it('the old key is accepted until its expires_at, and refused after it', async () => {
    const old = await publicKey(t);
    t.clock.advance(50 * DAY);
    await t.s.transportKeys.rotate();
    const next = await publicKey(t);

    t.clock.set(Date.parse(old.expires_at) - MINUTE);
    await t.s.transportKeys.reload();
    accepted(await signIn(t, old.public_key));
    accepted(await signIn(t, old.public_key, old.key_id));

    t.clock.set(Date.parse(old.expires_at) + MINUTE);
    await t.s.transportKeys.reload();
    refused(await signIn(t, old.public_key));
    refused(await signIn(t, old.public_key, old.key_id));
    expect((await publicKey(t)).key_id).toBe(next.key_id);
    accepted(await signIn(t, next.public_key, next.key_id));
  });

  it('rotate({revokePrevious: true}) refuses the old key at once', async () => {
    const old = await publicKey(t);
    await t.s.transportKeys.rotate({ revokePrevious: true });
    const next = await publicKey(t);
    refused(await signIn(t, old.public_key));
    refused(await signIn(t, old.public_key, old.key_id));
    accepted(await signIn(t, next.public_key));
  });

  it('rotateIfDue rotates after TRANSPORT_KEY_ROTATION_DAYS (default 90), not before', async () => {
    const first = await publicKey(t);
    expect(await t.s.transportKeys.rotateIfDue()).toBe(false);
    t.clock.advance(90 * DAY - MINUTE);
    expect(await t.s.transportKeys.rotateIfDue()).toBe(false);
    expect((await publicKey(t)).key_id).toBe(first.key_id);
    t.clock.advance(MINUTE);
    expect(await t.s.transportKeys.rotateIfDue()).toBe(true);
    const second = await publicKey(t);
    expect(second.key_id).not.toBe(first.key_id);
    accepted(await signIn(t, first.public_key)); // still inside its 7 days of grace
    accepted(await signIn(t, second.public_key));
    expect(await t.s.transportKeys.rotateIfDue()).toBe(false);
  });

});

describe('server key rotation, TRANSPORT_KEY_ROTATION_DAYS=30', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await app({ TRANSPORT_KEY_ROTATION_DAYS: '30' });
  });

  it('rotateIfDue follows the configured period', async () => {
    t.clock.advance(30 * DAY - MINUTE);
    expect(await t.s.transportKeys.rotateIfDue()).toBe(false);
    t.clock.advance(MINUTE);
    expect(await t.s.transportKeys.rotateIfDue()).toBe(true);
  });
});

/** An access token for the same session, issued now (what a refresh would give, without re-keying). */
async function accessTokenFor(t: TestApp, token: string): Promise<string> {
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as AccessClaims;
  const { sub, user_id, roles, permissions, session_id, device_fingerprint, ip_address } = claims;
  return (await t.s.tokens.issue('access', { sub, user_id, roles, permissions, session_id, device_fingerprint, ip_address })).token;
}

describe('the session key', () => {
  let t: TestApp;
  beforeEach(async () => {
    // Inactivity is not under test: one call every 12 hours keeps the session alive.
    t = await app({ SESSION_INACTIVITY_MINUTES: '1440' });
  });

  it('expires after SESSION_KEY_TTL_HOURS (24); an encrypted refresh hands out a new working key', async () => {
    const pem = (await publicKey(t)).public_key;
    const login = accepted(await signIn(t, pem));
    const key = login.key;
    const listUsers = (token: string, headers: Record<string, string> = ENCRYPTED) => t.app.inject({ method: 'GET', url: '/api/v1/admin/users?limit=1', headers: { ...headers, ...bearer(token) } });

    t.clock.advance(12 * HOUR);
    const midday = await listUsers(await accessTokenFor(t, String(login.body.access_token)));
    expect(midday.statusCode).toBe(200);
    expect(openSession(key, midday.json())).toMatchObject({ limit: 1 });

    t.clock.advance(12 * HOUR - MINUTE); // 23 h 59 min after sign-in: still valid
    const late = await listUsers(await accessTokenFor(t, String(login.body.access_token)));
    expect(late.statusCode).toBe(200);
    expect(openSession(key, late.json())).toMatchObject({ limit: 1 });

    t.clock.advance(2 * MINUTE); // 24 h 1 min
    const token = await accessTokenFor(t, String(login.body.access_token));
    refused(await listUsers(token));
    refused(await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(token) }, payload: sessionBody(key, {}) }));
    expect((await listUsers(token, {})).statusCode).toBe(200); // the session itself is alive, in plaintext

    const refreshed = accepted(await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', headers: ENCRYPTED, payload: preAuthBody(pem, { refresh_token: login.body.refresh_token }) }));
    expect(refreshed.body).toMatchObject({ session_id: login.body.session_id });
    expect(refreshed.key.equals(key)).toBe(false);
    const session = await t.s.sessions.get(String(login.body.session_id));
    expect(session?.aesKeyExpiresAt).toBe(t.clock.now() + 24 * HOUR);
    const again = await listUsers(String(refreshed.body.access_token));
    expect(again.statusCode).toBe(200);
    expect(openSession(refreshed.key, again.json())).toMatchObject({ limit: 1 });
    // The expired key opens nothing any more, even with the new token.
    refused(await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...ENCRYPTED, ...bearer(String(refreshed.body.access_token)) }, payload: sessionBody(key, {}) }));
  });
});

describe('two nodes on one database', () => {
  let a: TestApp;
  let b: TestApp;
  beforeEach(async () => {
    ({ a, b } = await twoNodes());
    await seedUser(a.s, USER, { roles: ['admin'] });
  });

  async function twoNodes(): Promise<{ a: TestApp; b: TestApp }> {
    const secrets = testSecrets();
    const clock = new ManualClock(Date.now());
    if (dbKind() === 'postgres') {
      const url = await freshPostgresDatabase();
      const a = await createTestApp({ database: await openTestDatabase('postgres', url), secrets, clock });
      apps.push(a);
      const b = await createTestApp({ database: await openTestDatabase('postgres', url), secrets, clock });
      apps.push(b);
      return { a, b };
    }
    // PGlite is one process: both nodes share its handle (and its local bus); close it once, last.
    const database = await openTestDatabase('pglite');
    const a = await createTestApp({ database, secrets, clock });
    const b = await createTestApp({ database, secrets, clock });
    closers.push(() => a.close(), () => b.app.close());
    return { a, b };
  }

  it('publish the same key, see a rotation made on the other, and decrypt what the other sealed', async () => {
    expect((await publicKey(b)).key_id).toBe((await publicKey(a)).key_id);

    // B reloads when it hears A's announcement: capture that reload to wait for it.
    let reloaded: Promise<void> | undefined;
    const reload = b.s.transportKeys.reload.bind(b.s.transportKeys);
    b.s.transportKeys.reload = () => (reloaded = reload());
    const heard = new Promise<void>((resolve) => b.s.database.bus.subscribe((e) => e.type === 'transport-keys.changed' && resolve()));
    const newId = await a.s.transportKeys.rotate();
    await heard;
    await reloaded;
    const onB = await publicKey(b);
    expect(onB.key_id).toBe(newId);

    // Signed in on B with the key A created; the session key then works on A.
    const login = accepted(await signIn(b, onB.public_key, onB.key_id));
    const res = await a.app.inject({ method: 'GET', url: '/api/v1/admin/users?limit=1', headers: { ...ENCRYPTED, ...bearer(String(login.body.access_token)) } });
    expect(res.statusCode).toBe(200);
    expect(openSession(login.key, res.json())).toMatchObject({ limit: 1 });
  });

  it('a revocation on one node is refused by the other', async () => {
    const old = await publicKey(a);
    await a.s.transportKeys.rotate({ revokePrevious: true });
    await b.s.transportKeys.reload(); // what the announcement triggers
    refused(await signIn(b, old.public_key));
    accepted(await signIn(b, (await publicKey(b)).public_key));
  });
});
