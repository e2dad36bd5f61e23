/**
 * The console's settings screens in real Chromium, against a service enforcing transport
 * encryption and a real OpenLDAP (test/harness/slapd.ts): the directory settings in force and the
 * connection test (every step passes for a user the directory holds, whose groups and mapped role
 * are shown; a closed port fails at the first step, said in words), the SAML settings and the
 * metadata download (the file is the service's metadata XML), the rate limits table and the keys
 * table; then both settings edited: another server without the bind password stopped by the form
 * (the field says why; nothing sent, no failure audited), a refused value said by its field with
 * nothing stored, a change saved after the confirmation (stored, audited, the bind password kept),
 * the connection test run at once with the new settings; and settings from the LDAP_* variables
 * said to be so, the password asked for before sending, and once saved stored (source database). Each screen and dialog: no CSP
 * violation, no serious or critical axe-core finding.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { certificateBody, DEFAULT_ATTRIBUTE_MAP, NAMEID_FORMATS } from '../../src/platform/config-saml.js';
import { selfSignedCertificatePem } from '../../src/platform/crypto/self-signed.js';
import { createTestApp, type TestApp } from '../harness/app.js';
import { serveToChromium } from '../harness/chromium.js';
import { checkScreen } from '../harness/console-checks.js';
import { signIn, watchCsp } from '../harness/console-pages.js';
import { seedUser, STRONG_PASSWORD } from '../harness/fixtures.js';
import { freePort } from '../harness/postgres.js';
import { startSlapd, type RunningSlapd } from '../harness/slapd.js';

let t: TestApp;
let dir: RunningSlapd;
let browser: Browser;
let origin: string;

/** Stores directory settings as the configuration route would, and tells the node. */
async function storeLdap(uri: string): Promise<void> {
  await t.s.db.transaction().execute((trx) => t.s.ldapSettings.save(trx, {
    uri, bindDn: dir.bindDn, bindPassword: dir.bindPassword, baseDn: dir.baseDn, userFilter: '(&(objectClass=inetOrgPerson)(uid={username}))',
    attrMail: 'mail', attrName: 'displayName', groupMemberAttr: 'memberOf', startTls: true, caCert: readFileSync(dir.caFile, 'utf8'),
    groupRoles: { tellers: ['staff'] }, groupsBaseDn: `ou=groups,${dir.baseDn}`,
  }, null));
  await t.s.ldapSettings.announce();
}

async function storeSaml(): Promise<void> {
  const idpCert = certificateBody(selfSignedCertificatePem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'idp.bank.example', Date.now(), 365))!;
  await t.s.db.transaction().execute((trx) => t.s.samlSettings.save(trx, {
    enabled: true, spEntityId: 'https://auth.bank.example/saml', acsUrl: 'https://auth.bank.example/api/v1/auth/saml/acs', sloUrl: 'https://auth.bank.example/api/v1/auth/saml/sls',
    idpEntityId: 'https://idp.bank.example', idpSsoUrl: 'https://idp.bank.example/sso', idpSloUrl: null, idpCerts: [idpCert], nameIdFormat: NAMEID_FORMATS.persistent,
    allowedRelayOrigins: ['https://app.bank.example'], allowIdpInitiated: false, clockSkewSec: 60, attributeMap: DEFAULT_ATTRIBUTE_MAP, groupRoles: { staff: ['Tellers'] },
  }, null));
  await t.s.samlSettings.announce();
}

beforeAll(async () => {
  dir = await startSlapd();
  t = await createTestApp({ env: { ENFORCE_TRANSPORT_ENCRYPTION: '1', MFA_REQUIRED_ROLES: 'staff' } });
  await seedUser(t.s, 'config.admin', { roles: ['admin'] });
  await storeLdap(dir.uri);
  await storeSaml();
  ({ origin, browser } = await serveToChromium(t.app));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await dir?.stop();
});

const nav = (page: Page, name: string) => page.getByRole('navigation').getByRole('link', { name, exact: true });
const stepRow = (page: Page, step: string) => page.getByRole('grid', { name: 'Steps of the test' }).getByRole('row').filter({ hasText: step });

describe('the console\'s settings in Chromium', () => {
  it('LDAP settings and the connection test (every step for alice, then a closed port), SAML settings and the metadata download, the rate limits, the keys', async () => {
    const page = await (await browser.newContext({ acceptDownloads: true })).newPage();
    const csp = await watchCsp(page);
    const res = await page.goto(`${origin}/console/settings/ldap`);
    expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await signIn(page, 'config.admin', STRONG_PASSWORD);
    await page.getByRole('heading', { name: 'Directory (LDAP)', level: 1 }).waitFor();
    for (const name of ['Directory (LDAP)', 'SAML', 'Rate limits', 'Keys']) await nav(page, name).waitFor();
    const ldapForm = page.getByRole('form', { name: 'Directory settings' });
    await ldapForm.waitFor();
    expect(await ldapForm.getByLabel('Server', { exact: true }).inputValue()).toBe(dir.uri);
    expect(await ldapForm.getByLabel('Service account password').inputValue()).toBe('');
    await page.getByText('These settings are stored in the database.').waitFor();
    await checkScreen(page, csp, 'LDAP settings');

    const before = dir.log().length;
    await page.getByLabel('Username to look up (optional)').fill('alice');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText(`The directory at ${dir.uri} works with these settings.`).waitFor();
    for (const step of ['Server reachable', 'TLS', 'Service account bind', 'User found', 'Groups']) expect(await stepRow(page, step).textContent()).toContain('Passed');
    const found = page.getByRole('definition').filter({ hasText: dir.users.alice.dn });
    await found.waitFor();
    expect(await page.getByLabel('The user found').textContent()).toContain('Roles these groups givestaff');
    // The directory saw the service account's bind and the search for alice.
    await dir.waitForLog(new RegExp(`BIND dn="${dir.bindDn}"`, 'i'), before);
    await dir.waitForLog(/SRCH .*filter="\(&\(objectClass=inetOrgPerson\)\(uid=alice\)\)"/, before);
    expect(await page.content()).not.toContain(dir.bindPassword);
    await checkScreen(page, csp, 'LDAP connection test passed');

    await storeLdap(`ldap://127.0.0.1:${await freePort()}`);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText(/does not work with these settings/).waitFor();
    expect(await stepRow(page, 'Server reachable').textContent()).toMatch(/Failed.*The server cannot be reached.*ECONNREFUSED/);
    expect(await stepRow(page, 'Service account bind').textContent()).toContain('Not run');
    await checkScreen(page, csp, 'LDAP connection test failed');
    await storeLdap(dir.uri);

    // SAML: the settings in force, and the metadata downloaded is the service's own.
    await nav(page, 'SAML').click();
    await page.getByRole('heading', { name: 'SAML', level: 1 }).waitFor();
    await page.getByText(/^CN=idp\.bank\.example, valid until/).waitFor();
    expect(await page.getByRole('form', { name: 'SAML settings' }).getByLabel('This service\'s entity id').inputValue()).toBe('https://auth.bank.example/saml');
    await checkScreen(page, csp, 'SAML settings');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download the metadata (XML)' }).click()]);
    expect(download.suggestedFilename()).toBe('strongroom-sp-metadata.xml');
    const xml = readFileSync((await download.path())!, 'utf8');
    expect(xml).toBe((await t.app.inject({ method: 'GET', url: '/api/v1/auth/saml/metadata' })).body);
    expect(xml).toContain('entityID="https://auth.bank.example/saml"');

    // Rate limits: as the service is configured, with the routes of each group.
    await nav(page, 'Rate limits').click();
    const limits = page.getByRole('grid', { name: 'Rate limits by group' });
    const signin = limits.getByRole('row', { name: 'signin', exact: true });
    await signin.waitFor();
    expect(await signin.getByRole('listitem').allTextContents()).toContain('POST /api/v1/auth/login');
    const configured = t.s.config.rateLimits.signin;
    expect(await signin.textContent()).toContain(`${configured.ip!.limit} per ${configured.ip!.windowSec / 60} min`);
    expect(await signin.textContent()).toContain('RATE_LIMIT_SIGNIN_ACCOUNT');
    await checkScreen(page, csp, 'rate limits');

    // Keys: the signing key the service holds, its age and the command that rotates it.
    await nav(page, 'Keys').click();
    const kid = (await t.s.db.selectFrom('jwt_signing_keys').select('kid').orderBy('version', 'desc').executeTakeFirstOrThrow()).kid;
    const jwt = page.getByRole('grid', { name: 'Keys' }).getByRole('row').filter({ hasText: kid });
    await jwt.waitFor();
    expect(await jwt.textContent()).toMatch(/Token signing.*HS256.*Current.*0 days.*strongroom rotate-keys.*Rotates on/);
    const transport = page.getByRole('grid', { name: 'Keys' }).getByRole('row').filter({ hasText: t.s.transportKeys.current().keyId });
    expect(await transport.textContent()).toMatch(/Transport encryption.*RSA-2048.*strongroom rotate-transport-key/);
    await page.getByRole('heading', { name: 'How to rotate' }).waitFor();
    await checkScreen(page, csp, 'keys');
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|pageerror/i.test(e))).toEqual([]);
  });

  it('LDAP and SAML settings edited: another server asks for the password before sending, a refused value said by its field and nothing stored, then a change confirmed, stored and used', async () => {
    const page = await (await browser.newContext()).newPage();
    const csp = await watchCsp(page);
    await page.goto(`${origin}/console/settings/ldap`);
    await signIn(page, 'config.admin', STRONG_PASSWORD);
    const form = page.getByRole('form', { name: 'Directory settings' });
    const server = form.getByLabel('Server', { exact: true });
    await server.waitFor();
    expect(await server.inputValue()).toBe(dir.uri);
    expect(await form.getByLabel('Group 1', { exact: true }).inputValue()).toBe('tellers');
    await checkScreen(page, csp, 'LDAP settings form');

    // Another server without the password: the stored one is not sent elsewhere, so the form asks for it and says why; nothing is sent (no refusal to audit).
    const password = form.getByLabel('Service account password');
    const ldapDialog = page.getByRole('dialog', { name: 'Save the directory settings?' });
    await server.fill('https://ldap.bank.example');
    await form.getByText(/^Required: this edit changes Server, and the stored password is kept only for/).waitFor();
    await form.getByRole('button', { name: 'Save…' }).click();
    await form.getByText('Type the service account password to save these settings.').waitFor();
    expect(await password.getAttribute('aria-invalid')).toBe('true');
    expect(await password.getAttribute('aria-required')).toBe('true');
    expect(await ldapDialog.count()).toBe(0);
    await checkScreen(page, csp, 'LDAP password asked for');
    const ldapAudit = () => t.s.db.selectFrom('audit_log').select(['status', 'details']).where('event_type', '=', 'LDAP_CONFIG_CHANGED').where('username', '=', 'config.admin').execute();
    expect(await ldapAudit()).toEqual([]);

    // With the password, a URI that is not ldap:// or ldaps://: the confirmation says what changes, the refusal is said by the field, nothing is stored.
    await password.fill(dir.bindPassword);
    await form.getByRole('button', { name: 'Save…' }).click();
    await ldapDialog.getByText('Changed: Server, Service account password.').waitFor();
    await ldapDialog.getByText(/use the new settings at once/).waitFor();
    await checkScreen(page, csp, 'LDAP save confirmation');
    await ldapDialog.getByRole('button', { name: 'Save', exact: true }).click();
    await form.getByText('must be ldap:// or ldaps://').waitFor();
    await page.getByRole('alert').filter({ hasText: 'The settings were not saved' }).waitFor();
    expect(await server.getAttribute('aria-invalid')).toBe('true');
    expect((await t.s.ldapSettings.current())?.settings.uri).toBe(dir.uri);
    await checkScreen(page, csp, 'LDAP field error');

    // The server back, the password emptied (no longer required), a group added (another added and removed), an attribute changed: saved, the stored password kept.
    await server.fill(dir.uri);
    await password.fill('');
    await form.getByText(/^Never shown\. Leave empty to keep the current one/).waitFor();
    expect(await password.getAttribute('aria-invalid')).toBeNull();
    await form.getByRole('button', { name: 'Add a group' }).click();
    await form.getByLabel('Group 2', { exact: true }).fill('auditors');
    await form.getByLabel('Roles of group 2 (comma-separated)').fill('agent');
    await form.getByRole('button', { name: 'Add a group' }).click();
    await form.getByLabel('Group 3', { exact: true }).fill('nobody');
    await form.getByRole('button', { name: 'Remove group 3' }).click();
    await form.getByLabel('Name attribute').fill('cn');
    await form.getByRole('button', { name: 'Save…' }).click();
    await ldapDialog.getByText('Changed: Name attribute, Groups and their roles.').waitFor();
    await ldapDialog.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/^The directory settings are saved/).waitFor();
    const ldap = (await t.s.ldapSettings.current())!;
    expect(ldap.source).toBe('database');
    expect(ldap.settings.groupRoles).toEqual({ tellers: ['staff'], auditors: ['agent'] });
    expect(ldap.settings.attrName).toBe('cn');
    expect(ldap.settings.bindPassword).toBe(dir.bindPassword);
    // Audited: the save only. The honest edit that changed the server was stopped by the form, so no FAILURE entry (kept for an attempt to send the stored password elsewhere).
    expect((await ldapAudit()).map((a) => a.status)).toEqual(['SUCCESS']);
    expect(await form.getByLabel('Group 2', { exact: true }).inputValue()).toBe('auditors');
    expect(await password.inputValue()).toBe('');

    // The test offered at once runs with the new settings: alice's groups now give agent too.
    await page.getByLabel('Username to look up (optional)').fill('alice');
    await page.getByRole('button', { name: 'Test the connection now' }).click();
    await page.getByText(`The directory at ${dir.uri} works with these settings.`).waitFor();
    expect(await page.getByLabel('The user found').textContent()).toMatch(/Roles these groups give(agent, staff|staff, agent)$/);
    expect(await page.content()).not.toContain(dir.bindPassword);
    await checkScreen(page, csp, 'LDAP saved and tested');

    // SAML: a URL that is not one is refused by its field; then a new IdP, its certificate and a group for admin are saved.
    await nav(page, 'SAML').click();
    const saml = page.getByRole('form', { name: 'SAML settings' });
    const sso = saml.getByLabel('Identity provider\'s sign-in service');
    await sso.waitFor();
    const certificate = saml.getByLabel('Identity provider\'s signing certificate (PEM)');
    expect(await certificate.inputValue()).toContain('-----BEGIN CERTIFICATE-----');
    expect(await saml.getByLabel('Groups that give staff').inputValue()).toBe('Tellers');
    await checkScreen(page, csp, 'SAML settings form');
    await sso.fill('not a url');
    await saml.getByRole('button', { name: 'Save…' }).click();
    const samlDialog = page.getByRole('dialog', { name: 'Save the SAML settings?' });
    await samlDialog.getByText('Changed: Identity provider\'s sign-in service.').waitFor();
    await checkScreen(page, csp, 'SAML save confirmation');
    await samlDialog.getByRole('button', { name: 'Save', exact: true }).click();
    await saml.getByText('is not an absolute URL').waitFor();
    expect(await sso.getAttribute('aria-invalid')).toBe('true');
    expect((await t.s.samlSettings.current())?.settings.idpSsoUrl).toBe('https://idp.bank.example/sso');
    await checkScreen(page, csp, 'SAML field error');

    const pem = selfSignedCertificatePem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'idp2.bank.example', Date.now(), 365);
    await saml.getByLabel('Identity provider\'s entity id').fill('https://idp2.bank.example');
    await sso.fill('https://idp2.bank.example/sso');
    await certificate.fill(pem);
    await saml.getByLabel('Groups that give admin').fill('Strongroom Admins');
    await saml.getByRole('button', { name: 'Save…' }).click();
    await samlDialog.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/^The SAML settings are saved/).waitFor();
    const stored = (await t.s.samlSettings.current())!;
    expect(stored.settings).toMatchObject({ idpEntityId: 'https://idp2.bank.example', idpSsoUrl: 'https://idp2.bank.example/sso', idpCerts: [certificateBody(pem)], spEntityId: 'https://auth.bank.example/saml', allowedRelayOrigins: ['https://app.bank.example'] });
    expect(stored.settings.groupRoles).toEqual({ staff: ['Tellers'], admin: ['Strongroom Admins'] });
    expect(stored.settings.attributeMap).toEqual(DEFAULT_ATTRIBUTE_MAP);
    await page.getByText(/^CN=idp2\.bank\.example, valid until/).waitFor();
    await checkScreen(page, csp, 'SAML saved');
    expect(csp.consoleErrors.filter((e) => /Content.Security.Policy|pageerror/i.test(e))).toEqual([]);
  });

  it('LDAP settings from the environment: said so, the password asked for, and once saved the stored settings win', async () => {
    const env = await createTestApp({ env: { LDAP_URI: dir.uri, LDAP_BIND_DN: dir.bindDn, LDAP_BIND_PASSWORD: dir.bindPassword, LDAP_BASE_DN: dir.baseDn, LDAP_START_TLS: '1', LDAP_CA_FILE: dir.caFile } });
    try {
      await seedUser(env.s, 'env.admin', { roles: ['admin'] });
      await env.app.listen({ host: '127.0.0.1', port: 0 });
      const page = await (await browser.newContext()).newPage();
      const csp = await watchCsp(page);
      await page.goto(`http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}/console/settings/ldap`);
      await signIn(page, 'env.admin', STRONG_PASSWORD);
      await page.getByText(/^These settings come from the server's LDAP_\* environment variables\. Saving stores them in the database/).waitFor();
      const form = page.getByRole('form', { name: 'Directory settings' });
      expect(await form.getByLabel('Server', { exact: true }).inputValue()).toBe(dir.uri);
      await form.getByText(/^Required: no password is stored yet/).waitFor();
      await checkScreen(page, csp, 'LDAP settings from the environment');

      // Saved without the password: the form stops at its field (the variables' password is not copied), nothing is sent or stored.
      const dialog = page.getByRole('dialog', { name: 'Save the directory settings?' });
      await form.getByRole('button', { name: 'Save…' }).click();
      await form.getByText('Type the service account password to save these settings.').waitFor();
      expect(await form.getByLabel('Service account password').getAttribute('aria-invalid')).toBe('true');
      expect(await dialog.count()).toBe(0);
      expect((await env.s.ldapSettings.current())?.source).toBe('environment');
      expect(await env.s.db.selectFrom('audit_log').select('status').where('event_type', '=', 'LDAP_CONFIG_CHANGED').execute()).toEqual([]);

      await form.getByLabel('Service account password').fill(dir.bindPassword);
      await form.getByRole('button', { name: 'Save…' }).click();
      await dialog.getByText(/from then on the LDAP_\* variables are no longer read/).waitFor();
      await dialog.getByText('Changed: Service account password.').waitFor();
      await dialog.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText(/^The directory settings are saved/).waitFor();
      await page.getByText('These settings are stored in the database.').waitFor();
      const stored = (await env.s.ldapSettings.current())!;
      expect(stored.source).toBe('database');
      expect(stored.settings).toMatchObject({ uri: dir.uri, bindDn: dir.bindDn, bindPassword: dir.bindPassword, startTls: true });
      expect(await form.getByLabel('Service account password').inputValue()).toBe('');
      await checkScreen(page, csp, 'LDAP settings stored');
    } finally {
      await env.close();
    }
  });
});
