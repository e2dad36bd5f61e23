/**
 * SPEC "Unified third-party login" (POST /api/v1/auth/third-party/login) without a directory:
 * `saml` starts a SAML sign-in as saml/login does; a field of the other provider is refused; an
 * LDAP sign-in without credentials is refused before anything. The LDAP sign-in itself through
 * this route is tested against slapd in test/http/ldap-signin.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { selfSignedCertificate } from '../harness/certificates.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

let t: TestApp;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-third-party-'));
  t = await createTestApp();
  await seedUser(t.s, 'third.party.admin', { roles: ['admin'] });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const login = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/auth/third-party/login', payload });

describe('POST /api/v1/auth/third-party/login', () => {
  it('provider saml before SAML is configured: 404 SAML_NOT_CONFIGURED; provider ldap without a directory: 401 LDAP_NOT_CONFIGURED', async () => {
    expectError(await login({ provider: 'saml' }), 404, 'SAML_NOT_CONFIGURED');
    expectError(await login({ provider: 'ldap', username: 'someone', password: 'Some#Passw0rd' }), 401, 'LDAP_NOT_CONFIGURED');
  });

  it('provider saml starts a SAML sign-in: the IdP URL with an AuthnRequest recorded with relay_state, channel and the browser binding (its cookie set)', async () => {
    const token = (await signIn(t.app, 'third.party.admin')).access_token;
    const configured = await t.app.inject({
      method: 'POST', url: '/api/v1/auth/saml/config', headers: bearer(token),
      payload: { sp_entity_id: 'https://auth.bank.test/saml', acs_url: 'https://auth.bank.test/api/v1/auth/saml/acs', idp_entity_id: 'https://idp.bank.test', idp_sso_url: 'https://idp.bank.test/sso', idp_x509cert: selfSignedCertificate(dir, 'idp').pem, allowed_relay_origins: ['https://app.bank.test'] },
    });
    expect(configured.statusCode, configured.body).toBe(200);
    const res = await login({ provider: 'saml', relay_state: 'https://app.bank.test/home', channel: 'mobile' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'saml_redirect', expires_in: 600 });
    expect(body.access_token).toBe(body.redirect_url);
    const url = new URL(body.redirect_url);
    expect(url.origin).toBe('https://idp.bank.test');
    expect(inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString()).toContain(`ID="${body.request_id}"`);
    const recorded = await t.s.database.db.selectFrom('saml_requests').selectAll().where('id', '=', body.request_id).executeTakeFirstOrThrow();
    expect(recorded).toMatchObject({ relay_url: 'https://app.bank.test/home', channel: 'mobile' });
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^__Host-strongroom_saml=[A-Za-z0-9_-]{43}; Path=\/; Secure; HttpOnly; SameSite=None; Max-Age=600$/);
    expect(recorded.browser_binding).toEqual(createHash('sha256').update(cookie.split(';')[0]!.split('=')[1]!).digest());
    expectError(await login({ provider: 'saml', relay_state: 'https://evil.example/home' }), 422, 'SAML_RELAY_STATE_NOT_ALLOWED');
  });

  it('refuses the other provider\'s fields (a password sent with saml is not silently dropped): 422 THIRD_PARTY_FIELD_NOT_ALLOWED naming them', async () => {
    expect(withoutRequestId(expectError(await login({ provider: 'saml', username: 'x', password: 'y' }), 422, 'THIRD_PARTY_FIELD_NOT_ALLOWED').details)).toEqual({ provider: 'saml', fields: ['username', 'password'] });
    expect(withoutRequestId(expectError(await login({ provider: 'ldap', username: 'x', password: 'y', relay_state: 'https://app.bank.test/' }), 422, 'THIRD_PARTY_FIELD_NOT_ALLOWED').details)).toEqual({ provider: 'ldap', fields: ['relay_state'] });
  });

  it('provider ldap without a username or password: 400 LDAP_CREDENTIALS_MISSING naming them; an unknown provider or field: 422', async () => {
    expect(withoutRequestId(expectError(await login({ provider: 'ldap', username: ' ' }), 400, 'LDAP_CREDENTIALS_MISSING').details)).toEqual({ fields: ['username', 'password'] });
    expectError(await login({ provider: 'oauth' }), 422, 'VALIDATION_ERROR');
    expectError(await login({ provider: 'ldap', surprise: 1 }), 422, 'VALIDATION_ERROR');
    expectError(await login({}), 422, 'VALIDATION_ERROR');
  });
});
