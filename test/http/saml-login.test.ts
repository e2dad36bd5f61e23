/**
 * Starting a SAML sign-in (issue 12 section 2): POST /api/v1/auth/saml/login answers the IdP URL
 * with a deflated AuthnRequest (HTTP-Redirect binding) whose ID is recorded in PostgreSQL with
 * the RelayState URL and the channel, and spent once; RelayState limited to the allowed origins.
 * The clock is frozen.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.js';
import { SamlRequests } from '../../src/saml/requests.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { selfSignedCertificate } from '../harness/certificates.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';
import { withoutRequestId } from '../harness/request-id.js';

let t: TestApp;
let dir: string;
const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-saml-login-'));
  t = await createTestApp({ clock: new ManualClock(NOW) });
  await seedUser(t.s, 'saml.login.admin', { roles: ['admin'] });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const settings = () => ({
  sp_entity_id: 'https://auth.bank.test/saml', acs_url: 'https://auth.bank.test/api/v1/auth/saml/acs',
  idp_entity_id: 'https://idp.bank.test', idp_sso_url: 'https://idp.bank.test/sso?tenant=retail', idp_x509cert: selfSignedCertificate(dir, 'idp').pem,
  allowed_relay_origins: ['https://app.bank.test'],
});

async function configure(body: Record<string, unknown>): Promise<void> {
  const token = (await signIn(t.app, 'saml.login.admin')).access_token;
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/config', headers: bearer(token), payload: body });
  expect(res.statusCode, res.body).toBe(200);
}

const start = (payload?: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', ...(payload ? { payload } : {}) });
const requests = () => t.s.database.db.selectFrom('saml_requests').selectAll().execute();

describe('POST /api/v1/auth/saml/login', () => {
  it('is 404 SAML_NOT_CONFIGURED before SAML is configured, and while it is disabled', async () => {
    expectError(await start(), 404, 'SAML_NOT_CONFIGURED');
    await configure({ ...settings(), saml_enabled: false });
    expectError(await start(), 404, 'SAML_NOT_CONFIGURED');
    await configure(settings());
  });

  it('answers the IdP URL (access_token and redirect_url) with a deflated AuthnRequest naming us, our ACS and the NameID format; its ID is the RelayState and is recorded with the relay URL and channel', async () => {
    const res = await start({ relay_state: 'https://app.bank.test/after-login?x=1', channel: 'mobile' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ token_type: 'saml_redirect', expires_in: 600 });
    expect(body.redirect_url).toBe(body.access_token);
    const url = new URL(body.redirect_url);
    expect(`${url.origin}${url.pathname}`).toBe('https://idp.bank.test/sso');
    expect(url.searchParams.get('tenant')).toBe('retail');
    expect(url.searchParams.get('RelayState')).toBe(body.request_id);
    expect(body.request_id).toMatch(/^_[0-9a-f]{40}$/);
    const xml = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
    expect(xml).toContain(`ID="${body.request_id}"`);
    expect(xml).toContain('AssertionConsumerServiceURL="https://auth.bank.test/api/v1/auth/saml/acs"');
    expect(xml).toContain('Destination="https://idp.bank.test/sso?tenant=retail"');
    expect(xml).toMatch(/<saml:Issuer[^>]*>https:\/\/auth\.bank\.test\/saml<\/saml:Issuer>/);
    expect(xml).toContain('Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"');
    const rows = await requests();
    expect(rows.find((r) => r.id === body.request_id)).toMatchObject({ relay_url: 'https://app.bank.test/after-login?x=1', channel: 'mobile' });
    expect(new Date(rows.find((r) => r.id === body.request_id)!.expires_at).getTime()).toBe(NOW + 600_000);
  });

  it('takes the form encoding SPEC shows; no relay_state is allowed (channel web)', async () => {
    const form = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'relay_state=https%3A%2F%2Fapp.bank.test%2Fhome' });
    expect(form.statusCode, form.body).toBe(200);
    const bare = await start();
    expect(bare.statusCode, bare.body).toBe(200);
    const rows = await requests();
    expect(rows.find((r) => r.id === form.json().request_id)).toMatchObject({ relay_url: 'https://app.bank.test/home', channel: 'web' });
    expect(rows.find((r) => r.id === bare.json().request_id)).toMatchObject({ relay_url: null, channel: 'web' });
  });

  it('threat: an open redirect through relay_state: another origin, a look-alike host, credentials in the URL or another scheme is 422 SAML_RELAY_STATE_NOT_ALLOWED, and nothing is recorded', async () => {
    const before = (await requests()).length;
    for (const relay of ['https://evil.example/', 'https://app.bank.test.evil.example/', 'https://app.bank.test@evil.example/', 'http://app.bank.test/', 'javascript:alert(1)//https://app.bank.test', '//evil.example/x', 'https://app.bank.test:8443/']) {
      const error = expectError(await start({ relay_state: relay }), 422, 'SAML_RELAY_STATE_NOT_ALLOWED');
      expect(withoutRequestId(error.details)).toEqual({ allowed_origins: ['https://app.bank.test'] });
    }
    expectError(await start({ channel: 'ussd' }), 422, 'VALIDATION_ERROR');
    expectError(await start({ relay_state: 'https://app.bank.test/', extra: 1 }), 422, 'VALIDATION_ERROR');
    expect(await requests()).toHaveLength(before);
  });
});

describe('SamlRequests (the AuthnRequests sent)', () => {
  it('a request is spent once: of ten parallel consumptions one finds it; an expired one is never found, and the clean-up removes it', async () => {
    const store = new SamlRequests({ db: t.s.database.db, clock: t.clock });
    await store.save('_once', { relayUrl: null, channel: 'web' });
    const found = await Promise.all(Array.from({ length: 10 }, () => store.consume('_once')));
    expect(found.filter((r) => r !== undefined)).toHaveLength(1);
    await store.save('_late', { relayUrl: 'https://app.bank.test/', channel: 'web' });
    (t.clock as ManualClock).advance(600_000);
    try {
      expect(await store.find('_late')).toBeUndefined();
      expect(await store.consume('_late')).toBeUndefined();
      expect(await store.purgeExpired()).toBeGreaterThanOrEqual(1);
      expect((await requests()).map((r) => r.id)).not.toContain('_late');
    } finally {
      (t.clock as ManualClock).advance(-600_000);
    }
  });
});
