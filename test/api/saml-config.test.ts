/**
 * The SAML configuration route (issue 12 section 1): administrators only; no body reads what is
 * in force (the IdP certificates described, returned as PEM only when asked for); a body is
 * validated (400 SAML_CONFIG_INVALID naming each field), stored, audited and announced; the
 * stored record wins over the SAML_* variables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../harness/app.js';
import { selfSignedCertificate } from '../harness/certificates.js';
import { bearer, expectError, seedUser, signIn } from '../harness/fixtures.js';

let t: TestApp;
let dir: string;
let idpPem: string;
let nextPem: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-saml-'));
  idpPem = selfSignedCertificate(dir, 'idp.bank.test').pem;
  nextPem = selfSignedCertificate(dir, 'idp-next.bank.test').pem;
  // The variables name an IdP: the stored record must win over them once posted.
  t = await createTestApp({ env: { SAML_IDP_ENTITY_ID: 'https://env-idp.bank.test', SAML_IDP_SSO_URL: 'https://env-idp.bank.test/sso', SAML_IDP_X509CERT: idpPem, SAML_SP_ENTITY_ID: 'https://env-sp.bank.test', SAML_ACS_URL: 'https://env-sp.bank.test/acs' } });
  await seedUser(t.s, 'saml.admin', { roles: ['admin'] });
  await seedUser(t.s, 'saml.clerk', { roles: ['staff'] });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const admin = async () => (await signIn(t.app, 'saml.admin')).access_token;

function config(body?: unknown, token?: string, query = '') {
  return t.app.inject({ method: 'POST', url: `/api/v1/auth/saml/config${query}`, headers: token === undefined ? {} : bearer(token), ...(body === undefined ? {} : { payload: body as Record<string, unknown> }) });
}

const settings = () => ({
  sp_entity_id: 'https://auth.bank.test/saml', acs_url: 'https://auth.bank.test/api/v1/auth/saml/acs', slo_url: 'https://auth.bank.test/api/v1/auth/saml/sls',
  idp_entity_id: 'https://idp.bank.test', idp_sso_url: 'https://idp.bank.test/sso', idp_x509cert: idpPem,
  allowed_relay_origins: ['https://app.bank.test'], group_roles: { staff: ['Tellers'], admin: ['Strongroom Admins'] }, attribute_map: { branch: ['branchCode'] },
});

describe('POST /api/v1/auth/saml/config', () => {
  it('needs config.manage: no token 401, a staff member 403 PERMISSION_DENIED, reading and writing alike', async () => {
    expectError(await config(), 401, 'TOKEN_MISSING');
    const clerk = (await signIn(t.app, 'saml.clerk')).access_token;
    expectError(await config(undefined, clerk), 403, 'PERMISSION_DENIED');
    expectError(await config(settings(), clerk), 403, 'PERMISSION_DENIED');
  });

  it('with no body reads the variables in force; the certificate is described, and returned as PEM only when asked for', async () => {
    const token = await admin();
    const read = await config(undefined, token);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ configured: true, source: 'environment', idp_entity_id: 'https://env-idp.bank.test', saml_enabled: true, nameid_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' });
    expect(read.json().idp_certificates).toEqual([expect.objectContaining({ subject: 'CN=idp.bank.test', sha256: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/) })]);
    expect(read.json()).not.toHaveProperty('idp_x509cert');
    const withCert = await config({}, token, '?include_certificate=true');
    expect(withCert.json().idp_x509cert.replace(/\s/g, '')).toBe(idpPem.replace(/\s/g, ''));
  });

  it('answers 400 SAML_CONFIG_INVALID naming each bad field, and stores nothing', async () => {
    const token = await admin();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...settings(), idp_x509cert: 'not a certificate' }, 'idp_x509cert'],
      [{ ...settings(), idp_x509cert: `${idpPem}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n` }, 'idp_x509cert'],
      [{ ...settings(), acs_url: '/relative/acs' }, 'acs_url'],
      [{ ...settings(), idp_sso_url: 'ftp://idp.bank.test/sso' }, 'idp_sso_url'],
      [{ ...settings(), nameid_format: 'persistent' }, 'nameid_format'],
      [{ ...settings(), allowed_relay_origins: ['https://app.bank.test/after/login'] }, 'allowed_relay_origins'],
      [{ ...settings(), group_roles: { wizards: ['Magicians'] } }, 'wizards'],
      [{ ...settings(), clock_skew_sec: 3600 }, 'clock_skew_sec'],
      [{ ...settings(), surprise: true }, 'surprise'],
      [{ ...settings(), idp_entity_id: undefined }, 'idp_entity_id'],
    ];
    for (const [body, field] of cases) {
      const error = expectError(await config(body, token), 400, 'SAML_CONFIG_INVALID');
      expect(JSON.stringify(error.details), JSON.stringify(body)).toContain(field);
    }
    expect(await t.s.database.db.selectFrom('saml_config').select('singleton_key').execute()).toEqual([]);
  });

  it('stores a valid configuration (two certificates during a rotation), which then wins over the variables; audited, every node told', async () => {
    const token = await admin();
    let heard = 0;
    t.s.bus.subscribe((e) => {
      if (e.type === 'saml-config.changed') heard++;
    });
    expect((await config({ ...settings(), idp_x509cert: `${idpPem}${nextPem}` }, token)).json()).toEqual({ status: 'success' });
    const read = (await config(undefined, token)).json();
    expect(read).toMatchObject({
      configured: true, source: 'database', idp_entity_id: 'https://idp.bank.test', sp_entity_id: 'https://auth.bank.test/saml', slo_url: 'https://auth.bank.test/api/v1/auth/saml/sls',
      allowed_relay_origins: ['https://app.bank.test'], group_roles: { staff: ['Tellers'], admin: ['Strongroom Admins'] }, allow_idp_initiated: false, clock_skew_sec: 60,
    });
    expect(read.idp_certificates.map((c: { subject: string }) => c.subject)).toEqual(['CN=idp.bank.test', 'CN=idp-next.bank.test']);
    expect(read.attribute_map.branch).toEqual(['branchCode']);
    expect(read.attribute_map.email).toContain('urn:oid:0.9.2342.19200300.100.1.3');
    const audits = await t.s.database.db.selectFrom('audit_log').select('details').where('event_type', '=', 'SAML_CONFIG_CHANGED').execute();
    expect(audits).toHaveLength(1);
    await expect.poll(() => heard).toBeGreaterThan(0);
    // An update replaces it.
    expect((await config({ ...settings(), saml_enabled: false }, token)).json()).toEqual({ status: 'success' });
    expect((await config(undefined, token)).json()).toMatchObject({ saml_enabled: false, idp_certificates: [expect.objectContaining({ subject: 'CN=idp.bank.test' })] });
  });

  it('hostile strings (XML, NUL) are refused or stored as text, never a 500', async () => {
    const token = await admin();
    const xml = await config({ ...settings(), sp_entity_id: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>' }, token);
    expect(xml.statusCode).toBe(200);
    expectError(await config({ ...settings(), idp_entity_id: 'https://idp\u0000.bank.test' }, token), 400, 'SAML_CONFIG_INVALID');
    expect((await config({ ...settings() }, token)).statusCode).toBe(200);
  });
});

describe('SP metadata (GET and POST /api/v1/auth/saml/metadata)', () => {
  it('is public XML naming the entity id, the ACS (HTTP-POST), the SLS (both bindings) and the NameID format; POST gives the same inside JSON', async () => {
    expect((await config(settings(), await admin())).json()).toEqual({ status: 'success' });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/metadata' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/samlmetadata+xml; charset=utf-8');
    expect(res.body).toContain('entityID="https://auth.bank.test/saml"');
    expect(res.body).toContain('<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://auth.bank.test/api/v1/auth/saml/acs" index="0" isDefault="true"/>');
    expect(res.body).toContain('<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://auth.bank.test/api/v1/auth/saml/sls"/>');
    expect(res.body).toContain('<md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>');
    expect(res.body).toContain('WantAssertionsSigned="true"');
    const post = await t.app.inject({ method: 'POST', url: '/api/v1/auth/saml/metadata' });
    expect(post.statusCode, post.body).toBe(200);
    expect(post.json()).toEqual({ metadata: res.body, content_type: 'application/samlmetadata+xml; charset=utf-8' });
  });

  it('threat: markup in a configured value cannot change the metadata\'s structure: it is escaped', async () => {
    const token = await admin();
    const hostile = 'https://auth.bank.test/saml"/><md:AssertionConsumerService Location="https://evil.example/acs"/><!DOCTYPE x [<!ENTITY e "x">]>&e;';
    expect((await config({ ...settings(), sp_entity_id: hostile }, token)).json()).toEqual({ status: 'success' });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/metadata' });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('evil.example/acs"/>');
    expect(res.body).not.toContain('<!DOCTYPE');
    expect(res.body).toContain('entityID="https://auth.bank.test/saml&quot;/&gt;&lt;md:AssertionConsumerService');
    expect(res.body.match(/<md:AssertionConsumerService /g)).toHaveLength(1);
    expectError(await config({ ...settings(), sp_entity_id: 'https://auth.bank.test/\u0007saml' }, token), 400, 'SAML_CONFIG_INVALID');
    expect((await config(settings(), token)).statusCode).toBe(200);
  });
});

describe('SP metadata without a configuration', () => {
  it('is 404 SAML_NOT_CONFIGURED, on GET and POST', async () => {
    const bare = await createTestApp();
    try {
      expectError(await bare.app.inject({ method: 'GET', url: '/api/v1/auth/saml/metadata' }), 404, 'SAML_NOT_CONFIGURED');
      expectError(await bare.app.inject({ method: 'POST', url: '/api/v1/auth/saml/metadata' }), 404, 'SAML_NOT_CONFIGURED');
    } finally {
      await bare.close();
    }
  });
});
