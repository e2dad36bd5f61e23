/**
 * The synchronous push path (issue 14 section 2: `POST /api/v1/notifications/devices/{id}/test`)
 * against the local FCM HTTP v1 fake and its OAuth2 token endpoint (test/harness/fcm.ts), which
 * check the service account's JWT and the message as Google does: SPEC's push errors (an invalid
 * token 400, an unregistered or revoked one 410 and marked inactive, a provider failure 500), the
 * access token cached, a stale one fetched again, a forged key refused, a hanging provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/platform/http/app.js';
import { startFakeFcm, type FakeFcm } from '../harness/fcm.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { auditTotal, bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

let fcm: FakeFcm;
let t: TestApp;
let who: string;
let uuid: string;

const token = (n: number): string => `push${n}:APA91bH2x7k3Lq9Zr0Xc3A_${'k'.repeat(100)}`;

async function device(app: App, bearerToken: string, n: number): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/notifications/devices/register', headers: bearer(bearerToken), payload: { push_token: token(n), platform: 'mobile' } });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: string }).id;
}

const test = (app: App, bearerToken: string, id: string) => app.inject({ method: 'POST', url: `/api/v1/notifications/devices/${id}/test`, headers: bearer(bearerToken) });
const activeOf = async (id: string): Promise<boolean> => (await t.s.db.selectFrom('device_tokens').select('is_active').where('uuid', '=', id).executeTakeFirstOrThrow()).is_active;

beforeAll(async () => {
  fcm = await startFakeFcm();
  t = await createTestApp({ env: { ...fcm.env, PUSH_TIMEOUT_MS: '300' } });
  uuid = (await seedUser(t.s, 'push.amina')).uuid;
  who = (await signIn(t.app, 'push.amina')).access_token;
});
afterAll(async () => {
  await t.close();
  await fcm.close();
});

describe('test notification (FCM HTTP v1)', () => {
  it('sends through FCM with an RS256 service-account grant; the message reaches the fake; the device\'s last_used_at is set; the access token is cached', async () => {
    const id = await device(t.app, who, 1);
    const res = await test(t.app, who, id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'sent', device_id: id, message_id: expect.stringMatching(/^projects\/strongroom-test\/messages\//) });
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/); // the device's uuid, not the internal integer
    expect(fcm.sent.at(-1)).toEqual({ token: token(1), notification: { title: 'Test notification', body: 'Notifications reach this device.' }, data: { kind: 'test' } });
    expect(fcm.grants).toEqual({ accepted: 1, refused: [] });
    expect((await test(t.app, who, id)).statusCode).toBe(200);
    expect(fcm.grants.accepted).toBe(1); // cached until it expires
    const row = await t.s.db.selectFrom('device_tokens').select('last_used_at').where('uuid', '=', id).executeTakeFirstOrThrow();
    expect(row.last_used_at).not.toBeNull();
  });

  it('an access token the provider no longer accepts is fetched again once, and the send goes through', async () => {
    const id = await device(t.app, who, 2);
    fcm.revokeAccessTokens();
    const before = fcm.unauthorised;
    expect((await test(t.app, who, id)).statusCode).toBe(200);
    expect(fcm.unauthorised).toBe(before + 1);
    expect(fcm.grants.accepted).toBe(2);
  });

  it('UNREGISTERED: 410 PUSH_TOKEN_GONE, the token inactive by itself (audited); a second test is 410 without calling the provider', async () => {
    const id = await device(t.app, who, 3);
    fcm.fail(token(3), 'UNREGISTERED');
    const res = await test(t.app, who, id);
    expect(withoutRequestId(expectError(res, 410, 'PUSH_TOKEN_GONE').details)).toEqual({ reason: 'unregistered' });
    expect(await activeOf(id)).toBe(false);
    expect(await auditTotal(t.s, uuid, 'DEVICE_TOKEN_DEACTIVATED')).toBe(1);
    const [entry] = (await t.s.audit.query({ userId: uuid, eventType: 'DEVICE_TOKEN_DEACTIVATED', limit: 1, offset: 0 })).entries;
    expect(entry!.details).toMatchObject({ device_token_id: id, by: 'push_provider', reason: 'unregistered' }); // named by its uuid
    const sentBefore = fcm.sent.length;
    expect(withoutRequestId(expectError(await test(t.app, who, id), 410, 'PUSH_TOKEN_GONE').details)).toEqual({ reason: 'inactive' });
    expect(fcm.sent.length).toBe(sentBefore);
  });

  it('SENDER_ID_MISMATCH: 410 and inactive; INVALID_ARGUMENT on the token (FCM\'s message naming the registration token): 400 PUSH_TOKEN_INVALID and inactive', async () => {
    const a = await device(t.app, who, 4);
    fcm.fail(token(4), 'SENDER_ID_MISMATCH');
    expect(withoutRequestId(expectError(await test(t.app, who, a), 410, 'PUSH_TOKEN_GONE').details)).toEqual({ reason: 'sender_id_mismatch' });
    expect(await activeOf(a)).toBe(false);
    const b = await device(t.app, who, 5);
    fcm.fail(token(5), 'INVALID_ARGUMENT');
    expectError(await test(t.app, who, b), 400, 'PUSH_TOKEN_INVALID');
    expect(await activeOf(b)).toBe(false);
  });

  it('provider failures are 500 PUSH_PROVIDER_FAILED naming the reason, and leave the token active: INTERNAL, UNAVAILABLE, QUOTA_EXCEEDED, THIRD_PARTY_AUTH_ERROR', async () => {
    for (const [n, code, reason] of [[6, 'INTERNAL', 'internal'], [7, 'UNAVAILABLE', 'unavailable'], [8, 'QUOTA_EXCEEDED', 'quota_exceeded'], [9, 'THIRD_PARTY_AUTH_ERROR', 'third_party_auth']] as const) {
      const id = await device(t.app, who, n);
      fcm.fail(token(n), code, 30);
      expect(withoutRequestId(expectError(await test(t.app, who, id), 500, 'PUSH_PROVIDER_FAILED').details), code).toEqual({ reason });
      expect(await activeOf(id), code).toBe(true);
    }
  });

  it('a provider that hangs: 500 PUSH_PROVIDER_FAILED timeout after PUSH_TIMEOUT_MS, the token left active', async () => {
    const id = await device(t.app, who, 10);
    fcm.hang(token(10));
    expect(withoutRequestId(expectError(await test(t.app, who, id), 500, 'PUSH_PROVIDER_FAILED').details)).toEqual({ reason: 'timeout' });
    expect(await activeOf(id)).toBe(true);
  });

  it('threat: another user\'s device id is 404; no token is 401', async () => {
    const id = await device(t.app, who, 11);
    await seedUser(t.s, 'push.kofi');
    const kofi = (await signIn(t.app, 'push.kofi')).access_token;
    expectError(await test(t.app, kofi, id), 404, 'DEVICE_TOKEN_NOT_FOUND');
    expectError(await t.app.inject({ method: 'POST', url: `/api/v1/notifications/devices/${id}/test` }), 401, 'TOKEN_MISSING');
  });

  it('threat: a service-account key file whose key the provider does not know: the grant is refused (bad signature), 500 auth, nothing sent', async () => {
    const forged = await createTestApp({ env: { ...fcm.env, PUSH_CREDENTIALS_PATH: fcm.forgedCredentialsPath() } });
    try {
      await seedUser(forged.s, 'push.forged');
      const bearerToken = (await signIn(forged.app, 'push.forged')).access_token;
      const id = await device(forged.app, bearerToken, 12);
      const sentBefore = fcm.sent.length;
      expect(withoutRequestId(expectError(await test(forged.app, bearerToken, id), 500, 'PUSH_PROVIDER_FAILED').details)).toEqual({ reason: 'auth' });
      expect(fcm.grants.refused).toContain('bad signature');
      expect(fcm.sent.length).toBe(sentBefore);
      const refusals = fcm.grants.refused.length;
      expect(withoutRequestId(expectError(await test(forged.app, bearerToken, id), 500, 'PUSH_PROVIDER_FAILED').details)).toEqual({ reason: 'auth' });
      expect(fcm.grants.refused.length).toBe(refusals); // a refused key is not presented again at once
    } finally {
      await forged.close();
    }
  });

  it('without PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH: 503 PUSH_NOT_CONFIGURED', async () => {
    const bare = await createTestApp();
    try {
      await seedUser(bare.s, 'push.bare');
      const bearerToken = (await signIn(bare.app, 'push.bare')).access_token;
      const id = await device(bare.app, bearerToken, 13);
      expectError(await test(bare.app, bearerToken, id), 503, 'PUSH_NOT_CONFIGURED');
    } finally {
      await bare.close();
    }
  });
});
