/**
 * Your own second factors (`GET /api/v1/2fa/factors`), which the account pages list: the
 * caller's enrolled factors by name and the unused backup codes left, never a secret; another
 * person's factors never show; no session, no answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { enrolTotp } from '../harness/authenticator.js';
import { bearer, expectError, seedUser, signIn, STRONG_PASSWORD } from '../harness/fixtures.js';

let t: TestApp;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  t = await createTestApp({ clock });
  await seedUser(t.s, 'own.factors');
  await seedUser(t.s, 'no.factors');
});
afterAll(async () => t?.close());

const factors = (token?: string) => t.app.inject({ method: 'GET', url: '/api/v1/2fa/factors', headers: token ? bearer(token) : {} });

describe('your own second factors', () => {
  it('lists the caller\'s enrolled factors and the backup codes left, nothing secret, and nobody else\'s', async () => {
    const own = await signIn(t.app, 'own.factors');
    const other = await signIn(t.app, 'no.factors');
    expect((await factors(own.access_token)).json()).toEqual({ enrolled: [], backup_codes_left: 0 });

    const { backupCodes, setup } = await enrolTotp(t.app, clock, own.access_token);
    const res = await factors(own.access_token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ enrolled: ['totp'], backup_codes_left: 10 });
    for (const secret of [setup.secret, ...backupCodes]) expect(res.body).not.toContain(secret);

    const used = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'own.factors', password: STRONG_PASSWORD } });
    const token = (used.json() as { details: { two_factor_token: string } }).details.two_factor_token;
    const backup = await t.app.inject({ method: 'POST', url: '/api/v1/2fa/totp/verify-backup-code', payload: { two_factor_token: token, code: backupCodes[0] } });
    expect(backup.statusCode, backup.body).toBe(200);
    expect((await factors(own.access_token)).json()).toEqual({ enrolled: ['totp'], backup_codes_left: 9 });

    expect((await factors(other.access_token)).json()).toEqual({ enrolled: [], backup_codes_left: 0 });
  });

  it('without a session: 401 and nothing listed', async () => {
    expectError(await factors(), 401, 'TOKEN_MISSING');
  });
});
