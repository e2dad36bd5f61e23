/**
 * The Settings screens' pictures for docs/console.md (called by scripts/console-screenshots.ts,
 * signed in as an administrator): the directory settings and a passing connection test against a
 * real OpenLDAP (test/harness/slapd.ts, started here and stopped after), the directory settings'
 * form and its confirmation, the SAML settings and their form, the rate limits and the keys.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { Registry } from '../../src/app.js';
import { certificateBody, DEFAULT_ATTRIBUTE_MAP, NAMEID_FORMATS } from '../../src/platform/config-saml.js';
import { selfSignedCertificatePem } from '../../src/platform/crypto/self-signed.js';
import { startSlapd } from '../../test/harness/slapd.js';

type Shot = (page: Page, name: string) => Promise<void>;

/** Scrolls the page so that the settings' form starts at the top of the window. */
async function toForm(page: Page): Promise<void> {
  await page.getByRole('heading', { name: 'Change the settings', level: 2 }).evaluate((h) => h.scrollIntoView({ block: 'start' }));
}

async function storeSaml(s: Registry): Promise<void> {
  const idpCert = certificateBody(selfSignedCertificatePem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'idp.bank.example', Date.now(), 365))!;
  await s.db.transaction().execute((trx) => s.samlSettings.save(trx, {
    enabled: true, spEntityId: 'https://auth.bank.example/saml', acsUrl: 'https://auth.bank.example/api/v1/auth/saml/acs', sloUrl: 'https://auth.bank.example/api/v1/auth/saml/sls',
    idpEntityId: 'https://idp.bank.example/adfs/services/trust', idpSsoUrl: 'https://idp.bank.example/adfs/ls/', idpSloUrl: null, idpCerts: [idpCert], nameIdFormat: NAMEID_FORMATS.persistent,
    allowedRelayOrigins: ['https://app.bank.example'], allowIdpInitiated: false, clockSkewSec: 60, attributeMap: DEFAULT_ATTRIBUTE_MAP, groupRoles: { staff: ['Tellers'], admin: ['Strongroom Admins'] },
  }, null));
  await s.samlSettings.announce();
}

export async function configScreenshots(page: Page, s: Registry, shot: Shot): Promise<void> {
  const dir = await startSlapd();
  try {
    await s.db.transaction().execute((trx) => s.ldapSettings.save(trx, {
      uri: dir.uri, bindDn: dir.bindDn, bindPassword: dir.bindPassword, baseDn: dir.baseDn, userFilter: '(&(objectClass=inetOrgPerson)(uid={username}))',
      attrMail: 'mail', attrName: 'displayName', groupMemberAttr: 'memberOf', startTls: true, caCert: readFileSync(dir.caFile, 'utf8'),
      groupRoles: { tellers: ['staff'], auditors: ['operator'] }, groupsBaseDn: `ou=groups,${dir.baseDn}`,
    }, null));
    await s.ldapSettings.announce();
    await page.setViewportSize({ width: 1280, height: 1750 });
    await page.getByRole('navigation').getByRole('link', { name: 'Directory (LDAP)' }).click();
    await page.getByLabel('Username to look up (optional)').fill('alice');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText(/works with these settings/).waitFor();
    await shot(page, 'console-settings-ldap');
    await page.setViewportSize({ width: 1280, height: 1900 });
    await toForm(page);
    await shot(page, 'console-settings-ldap-form');
    await page.setViewportSize({ width: 1280, height: 900 });
    const form = page.getByRole('form', { name: 'Directory settings' });
    await form.getByLabel('Roles of group 2 (comma-separated)').fill('operator, agent');
    await form.getByRole('button', { name: 'Save…' }).click();
    await page.getByRole('dialog').getByText(/^Changed:/).waitFor();
    await shot(page, 'console-settings-ldap-confirm');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  } finally {
    await dir.stop();
  }
  await storeSaml(s);
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.getByRole('navigation').getByRole('link', { name: 'SAML' }).click();
  await page.getByRole('link', { name: 'Download the metadata (XML)' }).waitFor();
  await shot(page, 'console-settings-saml');
  await page.setViewportSize({ width: 1280, height: 2300 });
  await toForm(page);
  await shot(page, 'console-settings-saml-form');
  await page.setViewportSize({ width: 1280, height: 1600 });
  await page.getByRole('navigation').getByRole('link', { name: 'Rate limits' }).click();
  await page.getByRole('row', { name: 'signin', exact: true }).waitFor();
  await shot(page, 'console-settings-rate-limits');
  await page.setViewportSize({ width: 1280, height: 1100 });
  await page.getByRole('navigation').getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('rowheader', { name: 'Token signing' }).first().waitFor();
  await shot(page, 'console-settings-keys');
}
