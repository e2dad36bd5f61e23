/**
 * The SAML IdP harness (test/harness/idp.ts) on its own, without our SP: a hand-made SP metadata
 * and AuthnRequest, SimpleSAMLphp's answers decoded and their signatures checked by `xmlsec1`.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aptInstall } from '../harness/apt.js';
import { type IdpPage, type RunningIdp, startIdp } from '../harness/idp.js';

const SP_ENTITY_ID = 'https://sp.test/api/v1/auth/saml/metadata';
const ACS = 'https://sp.test/api/v1/auth/saml/acs';
const SLS = 'https://sp.test/api/v1/auth/saml/sls';
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';

const SP_METADATA = `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${SP_ENTITY_ID}">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false" WantAssertionsSigned="true">
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${SLS}"/>
    <md:NameIDFormat>${PERSISTENT}</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ACS}" index="1"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`;

const alice = {
  username: 'alice', password: `pw-${randomBytes(6).toString('hex')}&'"<x>`,
  email: 'alice@bank.test', displayName: 'Alice Archer', groups: ['Tellers', 'Branch Managers'], branch: 'NBO-001', phone: '+254700000001',
};
const bob = { username: 'bob', password: `pw-${randomBytes(6).toString('hex')}`, email: 'bob@bank.test' };

let idp: RunningIdp;
let work: string;

beforeAll(async () => {
  aptInstall(['xmlsec1'], 'command -v xmlsec1 >/dev/null');
  work = mkdtempSync(path.join(os.tmpdir(), 'strongroom-idp-test-'));
  idp = await startIdp({ users: [alice, bob], spMetadataXml: SP_METADATA });
  writeFileSync(path.join(work, 'idp.pem'), idp.certPem);
});

afterAll(async () => {
  await idp?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

function authnRequestUrl(id: string, relayState: string): string {
  const xml = `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"
 ID="${id}" Version="2.0" IssueInstant="${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}" Destination="${idp.ssoUrl}"
 ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" AssertionConsumerServiceURL="${ACS}">
  <saml:Issuer>${SP_ENTITY_ID}</saml:Issuer>
  <samlp:NameIDPolicy Format="${PERSISTENT}" AllowCreate="true"/>
</samlp:AuthnRequest>`;
  const q = new URLSearchParams({ SAMLRequest: deflateRawSync(xml).toString('base64'), RelayState: relayState });
  return `${idp.ssoUrl}?${q}`;
}

const newId = (): string => `_${randomBytes(20).toString('hex')}`;

/** The page must be the POST to our ACS; returns the decoded Response XML. */
function samlResponse(page: IdpPage): { xml: string; relayState: string | undefined } {
  if (page.kind !== 'post') throw new Error(`expected a POST to the SP, got ${JSON.stringify(page).slice(0, 2000)}\n${idp.log().slice(-6000)}`);
  expect(page.action).toBe(ACS);
  expect(page.fields.SAMLResponse).toBeTruthy();
  return { xml: Buffer.from(page.fields.SAMLResponse!, 'base64').toString('utf8'), relayState: page.fields.RelayState };
}

const decode = (s: string): string => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#0?39;/g, "'").replace(/&amp;/g, '&');

function attribute(xml: string, name: string): string[] | undefined {
  const m = new RegExp(`<saml:Attribute Name="${name}"[^>]*>([\\s\\S]*?)</saml:Attribute>`).exec(xml);
  return m ? [...m[1]!.matchAll(/<saml:AttributeValue[^>]*>([^<]*)<\/saml:AttributeValue>/g)].map((v) => decode(v[1]!)) : undefined;
}

function nameId(xml: string): { format: string | undefined; value: string } {
  const m = /<saml:NameID\b([^>]*)>([^<]+)<\/saml:NameID>/.exec(xml);
  if (!m) throw new Error(`no NameID in ${xml}`);
  return { format: /Format="([^"]+)"/.exec(m[1]!)?.[1], value: decode(m[2]!) };
}

/** xmlsec1 checks one signature (by XPath) against the IdP's certificate only (no KeyInfo trust). */
function xmlsecVerify(xml: string, signatureXPath: string): void {
  const file = path.join(work, `${newId()}.xml`);
  writeFileSync(file, xml);
  execFileSync('xmlsec1', [
    '--verify', '--pubkey-cert-pem', path.join(work, 'idp.pem'), '--enabled-key-data', 'rsa',
    '--id-attr:ID', 'urn:oasis:names:tc:SAML:2.0:protocol:Response', '--id-attr:ID', 'urn:oasis:names:tc:SAML:2.0:assertion:Assertion',
    '--node-xpath', signatureXPath, file,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function expectSignedResponseAndAssertion(xml: string): void {
  const responseId = /<samlp:Response\b[^>]*\sID="([^"]+)"/.exec(xml)?.[1];
  const assertionId = /<saml:Assertion\b[^>]*\sID="([^"]+)"/.exec(xml)?.[1];
  const [head, assertion] = xml.split(/<saml:Assertion\b/);
  for (const [part, id] of [[head, responseId], [assertion, assertionId]] as const) {
    expect(id).toBeTruthy();
    const signature = /<ds:Signature\b[\s\S]*?<\/ds:Signature>/.exec(part ?? '')?.[0] ?? '';
    expect(signature).toContain(`<ds:SignatureMethod Algorithm="${RSA_SHA256}"/>`);
    expect(signature).toContain(`<ds:DigestMethod Algorithm="${SHA256}"/>`);
    expect(signature).toContain(`URI="#${id}"`);
    expect(signature).toContain(idp.certBody);
  }
  xmlsecVerify(xml, "/*[local-name()='Response']/*[local-name()='Signature']");
  xmlsecVerify(xml, "//*[local-name()='Assertion']/*[local-name()='Signature']");
  // and it does fail when the signed content changes (the NameID, here).
  const tampered = xml.replace(/(<saml:NameID\b[^>]*>)/, '$1x');
  expect(tampered).not.toBe(xml);
  expect(() => xmlsecVerify(tampered, "//*[local-name()='Assertion']/*[local-name()='Signature']")).toThrow();
}

function expectLoginForm(page: IdpPage): void {
  if (page.kind !== 'page') throw new Error(`expected the login form, got ${JSON.stringify(page).slice(0, 500)}`);
  expect(page.status).toBe(200);
  expect(page.html).toMatch(/<input[^>]*name="password"/);
  expect(page.html).toMatch(/<input[^>]*name="AuthState"/);
}

describe('SimpleSAMLphp IdP harness', () => {
  it('answers an SP-initiated AuthnRequest with a signed Response and Assertion', async () => {
    const id = newId();
    const { xml, relayState } = samlResponse(await idp.browser().visit(authnRequestUrl(id, 'rs-1&x'), alice));
    expect(relayState).toBe('rs-1&x');
    expect(xml).toMatch(new RegExp(`<samlp:Response\\b[^>]*InResponseTo="${id}"`));
    expect(xml).toMatch(new RegExp(`<saml:SubjectConfirmationData\\b[^>]*InResponseTo="${id}"`));
    expect(xml).toContain('<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/>');
    expect(/<saml:Issuer>([^<]+)<\/saml:Issuer>/.exec(xml)?.[1]).toBe(idp.entityId);
    expect(nameId(xml)).toEqual({ format: PERSISTENT, value: 'alice' });
    expect(xml).toMatch(/<saml:AuthnStatement\b[^>]*SessionIndex="_[0-9a-f]+"/);
    expect(attribute(xml, 'uid')).toEqual(['alice']);
    expect(attribute(xml, 'email')).toEqual([alice.email]);
    expect(attribute(xml, 'displayName')).toEqual([alice.displayName]);
    expect(attribute(xml, 'groups')).toEqual(alice.groups);
    expect(attribute(xml, 'branch')).toEqual([alice.branch]);
    expect(attribute(xml, 'phone')).toEqual([alice.phone]);
    expect(xml).toContain('NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"');
    expectSignedResponseAndAssertion(xml);
  });

  it('shows the login form again on a wrong password, and keeps the IdP session after a sign-in', async () => {
    const browser = idp.browser();
    const wrong = await browser.visit(authnRequestUrl(newId(), 'rs-2'), { username: 'alice', password: 'wrong' });
    expectLoginForm(wrong);
    expect(wrong.kind === 'page' && wrong.html).not.toContain('SAMLResponse');

    samlResponse(await browser.visit(authnRequestUrl(newId(), 'rs-3'), alice));
    const id = newId();
    const again = samlResponse(await browser.visit(authnRequestUrl(id, 'rs-4')));
    expect(again.relayState).toBe('rs-4');
    expect(again.xml).toContain(`InResponseTo="${id}"`);
    expect(nameId(again.xml).value).toBe('alice');
    // A new browser has no session: the login form, not a Response.
    expectLoginForm(await idp.browser().visit(authnRequestUrl(newId(), 'rs-5')));
  });

  it('signs in IdP-initiated: no InResponseTo, RelayState passed through', async () => {
    const { xml, relayState } = samlResponse(await idp.browser().idpInitiated(SP_ENTITY_ID, bob, '/after'));
    expect(relayState).toBe('/after');
    expect(xml).not.toContain('InResponseTo');
    expect(nameId(xml)).toEqual({ format: PERSISTENT, value: 'bob' });
    expect(attribute(xml, 'email')).toEqual([bob.email]);
    expect(attribute(xml, 'groups')).toBeUndefined();
    expectSignedResponseAndAssertion(xml);
  });

  it('starts single logout with a signed LogoutRequest to the SP (HTTP-Redirect)', async () => {
    const browser = idp.browser();
    const { xml } = samlResponse(await browser.visit(authnRequestUrl(newId(), 'rs-6'), alice));
    const sessionIndex = /SessionIndex="([^"]+)"/.exec(xml)?.[1];
    const page = await browser.startLogout();
    if (page.kind !== 'redirect') throw new Error(`expected a redirect to the SLS, got ${JSON.stringify(page).slice(0, 2000)}`);
    const url = new URL(page.url);
    expect(`${url.origin}${url.pathname}`).toBe(SLS);
    const request = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
    expect(request).toMatch(/<samlp:LogoutRequest\b[^>]*Destination="https:\/\/sp\.test\/api\/v1\/auth\/saml\/sls"/);
    expect(/<saml:Issuer>([^<]+)<\/saml:Issuer>/.exec(request)?.[1]).toBe(idp.entityId);
    expect(nameId(request)).toEqual({ format: PERSISTENT, value: 'alice' });
    expect(/<samlp:SessionIndex>([^<]+)<\/samlp:SessionIndex>/.exec(request)?.[1]).toBe(sessionIndex);
    expect(url.searchParams.get('SigAlg')).toBe(RSA_SHA256);
    // Redirect binding: the signature covers the raw query up to &Signature (SAML bindings 3.4.4.1).
    const raw = url.search.slice(1);
    const signed = raw.slice(0, raw.indexOf('&Signature='));
    expect(verify('RSA-SHA256', Buffer.from(signed), idp.certPem, Buffer.from(url.searchParams.get('Signature')!, 'base64'))).toBe(true);

    // The SP answers by HTTP-POST (unsigned: the IdP does not ask for signed logout messages):
    // the IdP ends the logout on its own ReturnTo page, and its session is gone.
    const requestId = /<samlp:LogoutRequest\b[^>]*\sID="([^"]+)"/.exec(request)?.[1];
    const response = `<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${newId()}" Version="2.0" IssueInstant="${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}" Destination="${idp.sloUrl}" InResponseTo="${requestId}"><saml:Issuer>${SP_ENTITY_ID}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse>`;
    const done = await browser.post(idp.sloUrl, { SAMLResponse: Buffer.from(response).toString('base64'), RelayState: url.searchParams.get('RelayState')! });
    expect(done.kind === 'page' && done.status).toBe(200);
    expect(done.kind === 'page' && done.html).toMatch(/logged out/i);
    expectLoginForm(await browser.visit(authnRequestUrl(newId(), 'rs-7')));
  });
});
