/**
 * The attack corpus's forge (test/harness/saml-forge.ts) checked by xmlsec1's own verifier: what
 * it signs verifies with the right certificate only, a change breaks it, and the wrapping
 * attacks keep the original signature intact (so a refusal by the SP is the SP's doing).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate, type TestCertificate } from '../harness/certificates.js';
import { ASSERTION, assertionXml, type AssertionSpec, ensureXmlsec, PROTOCOL, responseXml, sign, signBoth, xsw } from '../harness/saml-forge.js';

let dir: string;
let idp: TestCertificate;
let other: TestCertificate;

beforeAll(() => {
  ensureXmlsec();
  dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-forge-test-'));
  idp = selfSignedCertificate(dir, 'idp');
  other = selfSignedCertificate(dir, 'other');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec = (): AssertionSpec => ({
  issuer: 'https://idp.test', nameId: 'alice', audience: 'https://sp.test', recipient: 'https://sp.test/acs', inResponseTo: '_req',
  issueInstant: new Date(), notBefore: new Date(Date.now() - 60_000), notOnOrAfter: new Date(Date.now() + 60_000),
});

/** Whether xmlsec1 verifies the signature of the element `local` with ID `id` in `xml` with `cert`. */
function verifies(xml: string, cert: TestCertificate, local: 'Response' | 'Assertion', id: string): boolean {
  const file = path.join(dir, 'doc.xml');
  const certFile = path.join(dir, 'verify.pem');
  writeFileSync(file, xml);
  writeFileSync(certFile, cert.pem);
  try {
    execFileSync('xmlsec1', ['--verify', '--enabled-key-data', 'rsa', '--pubkey-cert-pem', certFile, '--id-attr:ID', `${ASSERTION}:Assertion`, '--id-attr:ID', `${PROTOCOL}:Response`,
      '--node-xpath', `//*[local-name()='${local}' and @ID='${id}']/*[local-name()='Signature']`, file], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const idOf = (xml: string, tag: string): string => new RegExp(`<${tag} [^>]*\\bID="([^"]+)"`).exec(xml)![1]!;

describe('saml-forge', () => {
  it('signs the Response and the Assertion so that xmlsec1 verifies both with the IdP certificate, neither with another', () => {
    const xml = signBoth(responseXml(spec()), { keyPem: idp.keyPem, certPem: idp.pem });
    const [responseId, assertionId] = [idOf(xml, 'samlp:Response'), idOf(xml, 'saml:Assertion')];
    expect(verifies(xml, idp, 'Response', responseId)).toBe(true);
    expect(verifies(xml, idp, 'Assertion', assertionId)).toBe(true);
    expect(verifies(xml, other, 'Response', responseId)).toBe(false);
    expect(verifies(xml.replace('>alice<', '>mallory<'), idp, 'Assertion', assertionId)).toBe(false);
  });

  it('the wrapping attacks keep the signed assertion verifiable where they move it, beside an evil one (XSW3, XSW4, XSW7)', () => {
    const signed = sign(responseXml(spec()), { keyPem: idp.keyPem, certPem: idp.pem }, 'assertion');
    const id = idOf(signed, 'saml:Assertion');
    for (const variant of [3, 4, 7] as const) {
      const wrapped = xsw(variant, signed, 'admin@bank.test');
      expect(wrapped.match(/<saml:Assertion /g)).toHaveLength(2);
      expect(wrapped).toContain('>admin@bank.test<');
      expect(verifies(wrapped, idp, 'Assertion', id), `XSW${variant}`).toBe(true);
    }
  });

  it('a comment injected into the NameID is inside the signed content: the signature verifies with it', () => {
    const s = spec();
    const xml = signBoth(responseXml(s, assertionXml(s, 'admin@bank.test<!---->.evil.example')), { keyPem: idp.keyPem, certPem: idp.pem });
    expect(verifies(xml, idp, 'Assertion', idOf(xml, 'saml:Assertion'))).toBe(true);
    expect(xml).toContain('<!---->');
  });
});
