import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../test/harness/certificates.js';
import { certificateBodies, DEFAULT_ATTRIBUTE_MAP, NAMEID_FORMATS, readSamlEnv, type SamlSettings, samlSettingsProblems } from './config-saml.js';

let dir: string;
let pem: string;
let other: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-saml-config-'));
  pem = selfSignedCertificate(dir, 'idp', 2).pem;
  other = selfSignedCertificate(dir, 'idp-next', 2).pem;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const body = (p: string): string => p.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '');

const valid = (): SamlSettings => ({
  enabled: true, spEntityId: 'https://auth.bank.example/saml', acsUrl: 'https://auth.bank.example/api/v1/auth/saml/acs', sloUrl: null,
  idpEntityId: 'https://idp.bank.example', idpSsoUrl: 'https://idp.bank.example/sso', idpSloUrl: null, idpCerts: [body(pem)],
  nameIdFormat: NAMEID_FORMATS.persistent, allowedRelayOrigins: ['https://app.bank.example'], allowIdpInitiated: false, clockSkewSec: 60,
  attributeMap: DEFAULT_ATTRIBUTE_MAP, groupRoles: {},
});

describe('SAML certificates', () => {
  it('takes PEM, several PEMs (rotation) and a bare base64 body; refuses what does not parse', () => {
    expect(certificateBodies(pem)).toEqual([body(pem)]);
    expect(certificateBodies(`${pem}\n${other}`)).toEqual([body(pem), body(other)]);
    expect(certificateBodies(body(pem))).toEqual([body(pem)]);
    expect(certificateBodies('not a certificate')).toBeUndefined();
    expect(certificateBodies(`${pem}\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----`)).toBeUndefined();
  });
});

describe('samlSettingsProblems', () => {
  it('accepts a complete configuration', () => {
    expect(samlSettingsProblems(valid(), true)).toEqual([]);
  });

  it('names each bad field: plain http in production, relative URLs, a non-URN NameID format, a path in an origin, a negative skew, no certificate', () => {
    const s = { ...valid(), acsUrl: 'http://auth.bank.example/acs', idpSsoUrl: '/sso', nameIdFormat: 'persistent', allowedRelayOrigins: ['https://app.bank.example/path'], clockSkewSec: -1, idpCerts: [], spEntityId: ' ' };
    expect(samlSettingsProblems(s, true).map((p) => p.field).sort()).toEqual(['acs_url', 'allowed_relay_origins', 'clock_skew_sec', 'idp_sso_url', 'idp_x509cert', 'nameid_format', 'sp_entity_id']);
    expect(samlSettingsProblems({ ...valid(), acsUrl: 'http://localhost:3000/acs' }, false)).toEqual([]);
  });
});

describe('readSamlEnv', () => {
  const env = (vars: Record<string, string>, files: Record<string, string> = {}) => {
    const problems: string[] = [];
    const settings = readSamlEnv((n) => vars[n], (p) => {
      if (!(p in files)) throw new Error(`ENOENT: no such file ${p}`);
      return files[p]!;
    }, problems, true);
    return { settings, problems };
  };

  it('is undefined when no identity provider is named', () => {
    expect(env({})).toEqual({ settings: undefined, problems: [] });
  });

  it('reads the variables, with the defaults', () => {
    const { settings, problems } = env({
      SAML_SP_ENTITY_ID: 'https://auth.bank.example/saml', SAML_ACS_URL: 'https://auth.bank.example/api/v1/auth/saml/acs', SAML_IDP_ENTITY_ID: 'https://idp.bank.example',
      SAML_IDP_SSO_URL: 'https://idp.bank.example/sso', SAML_IDP_X509CERT: pem, SAML_ALLOWED_RELAY_ORIGINS: 'https://app.bank.example, https://web.bank.example',
    });
    expect(problems).toEqual([]);
    expect(settings).toMatchObject({ enabled: true, nameIdFormat: NAMEID_FORMATS.persistent, idpCerts: [body(pem)], allowedRelayOrigins: ['https://app.bank.example', 'https://web.bank.example'], clockSkewSec: 60, allowIdpInitiated: false });
  });

  it('reads SAML_CONFIG_FILE, each variable overriding its field; a missing or malformed file, and bad values, are problems naming the variable', () => {
    const file = JSON.stringify({ sp_entity_id: 'https://auth.bank.example/saml', acs_url: 'https://auth.bank.example/acs', idp_entity_id: 'https://idp.bank.example', idp_sso_url: 'https://idp.bank.example/sso', idp_x509cert: `${pem}${other}`, group_roles: { staff: ['Tellers'] }, attribute_map: { branch: ['branchCode'] } });
    const { settings, problems } = env({ SAML_CONFIG_FILE: '/etc/saml.json', SAML_IDP_ENTITY_ID: 'https://idp2.bank.example' }, { '/etc/saml.json': file });
    expect(problems).toEqual([]);
    expect(settings).toMatchObject({ idpEntityId: 'https://idp2.bank.example', idpCerts: [body(pem), body(other)], groupRoles: { staff: ['Tellers'] } });
    expect(settings!.attributeMap.branch).toEqual(['branchCode']);
    expect(settings!.attributeMap.email).toEqual(DEFAULT_ATTRIBUTE_MAP.email);
    expect(env({ SAML_CONFIG_FILE: '/nowhere.json' }).problems[0]).toMatch(/^SAML_CONFIG_FILE \/nowhere.json cannot be used: ENOENT/);
    expect(env({ SAML_CONFIG_FILE: '/etc/saml.json' }, { '/etc/saml.json': '[1]' }).problems[0]).toMatch(/not a JSON object/);
    const bad = env({ SAML_IDP_ENTITY_ID: 'https://idp.bank.example', SAML_IDP_SSO_URL: 'http://idp.bank.example/sso', SAML_IDP_X509CERT: 'nonsense', SAML_ENABLED: 'maybe' }).problems;
    expect(bad).toEqual(expect.arrayContaining([
      expect.stringMatching(/^SAML_ENABLED must be 1 or 0/), expect.stringMatching(/^SAML_IDP_X509CERT .* is not a certificate/),
      expect.stringMatching(/^SAML_IDP_SSO_URL must be https/), expect.stringMatching(/^SAML_SP_ENTITY_ID is required/), expect.stringMatching(/^SAML_ACS_URL is not an absolute URL/),
    ]));
  });
});
