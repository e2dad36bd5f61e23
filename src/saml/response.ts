/**
 * Reading a SAMLResponse posted to the assertion consumer (SPEC "SAML assertion consumption"
 * step 1; issue 12 section 3). Two independent gates, both must pass:
 *
 * 1. `@node-saml/node-saml` validates the response as the library does (signatures of the
 *    Response and of the Assertion with the configured certificates, one assertion only, the
 *    audience, InResponseTo against the requests we sent).
 * 2. This module reads the identity only from the bytes the Response's signature covers (the
 *    canonical XML xml-crypto returns after verifying: no comments, nothing outside the signed
 *    element) and checks what the library leaves to its caller: Destination and Recipient are
 *    the ACS URL, both Issuers are the IdP's, a bearer SubjectConfirmation, the time windows
 *    (with our clock and the configured skew), an InResponseTo we sent or, when enabled, none.
 *
 * Refused before anything is parsed: a body that is not base64, and any DOCTYPE or entity
 * declaration (no entity is ever expanded). Errors are SPEC's 401s with stable codes and a
 * `reason` (src/saml/errors.ts); nothing is written before the caller spends the request and
 * reserves the assertion ID.
 */
import { DOMParser } from '@xmldom/xmldom';
import { SAML, SamlStatusError, ValidateInResponseTo, type CacheProvider } from '@node-saml/node-saml';
import { getVerifiedXml } from '@node-saml/node-saml/lib/xml.js';
import { certificatePem, type SamlSettings } from '../platform/config-saml.js';
import { libraryOptions, newRequestId } from './client.js';
import { SamlErrors, type SamlFailure } from './errors.js';
import type { SamlRequests } from './requests.js';

export const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
export const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

/** What a valid response says about who signed in. */
export interface SamlAssertion {
  issuer: string;
  nameId: string;
  nameIdFormat: string | null;
  sessionIndex: string | null;
  /** The request it answers; null for an IdP-initiated response. */
  inResponseTo: string | null;
  assertionId: string;
  /** Until when this assertion could be accepted (ms): the replay cache keeps its ID that long. */
  acceptableUntil: number;
  /** Attribute values by Name and by FriendlyName. */
  attributes: ReadonlyMap<string, string[]>;
}

export const fail = (reason: SamlFailure, extra: Record<string, unknown> = {}, cause?: unknown) => SamlErrors.SAML_VALIDATION_FAILED({ reason, ...extra }, cause === undefined ? undefined : { cause });

export function parse(xml: string): Document {
  let problem: string | undefined;
  const doc = new DOMParser({ locator: {}, errorHandler: { warning: () => undefined, error: (m: string) => { problem ??= m; }, fatalError: (m: string) => { problem ??= m; } } }).parseFromString(xml, 'text/xml');
  if (problem !== undefined || !doc?.documentElement) throw fail('malformed');
  return doc;
}

/** The element children of `el` named `ns`:`local`. */
export function all(el: Element, ns: string, local: string): Element[] {
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === local) out.push(n as Element);
  }
  return out;
}

/** The one child named `ns`:`local` (undefined when absent); two of them are malformed. */
export function one(el: Element, ns: string, local: string): Element | undefined {
  const found = all(el, ns, local);
  if (found.length > 1) throw fail('malformed', { element: local });
  return found[0];
}

export const text = (el: Element | undefined): string => (el?.textContent ?? '').trim();

/**
 * A NameID (and a SessionIndex) as this service keeps and compares it, the same at sign-in and at
 * single logout: without the whitespace around it (an IdP that pretty-prints its XML), nothing
 * else changed (it is the IdP's opaque identifier, compared exactly).
 */
export const normaliseNameId = (value: string | null | undefined): string => (value ?? '').trim();

/** An xs:dateTime in UTC (ms); undefined when absent; `reason` when it is not one. */
export function instant(value: string | null, reason: SamlFailure): number | undefined {
  if (value === null || value === '') return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw fail(reason);
  return ms;
}

/** The status code of a response that is not Success (for the 401's details), else undefined. */
export function failedStatus(root: Element): string | undefined {
  const status = one(root, PROTOCOL, 'Status');
  const code = status && one(status, PROTOCOL, 'StatusCode');
  const value = code?.getAttribute('Value') ?? '';
  if (value === SUCCESS) return undefined;
  const second = code && one(code, PROTOCOL, 'StatusCode')?.getAttribute('Value');
  return [value, second].filter(Boolean).map((v) => v!.replace(/^.*:/, '')).join('/') || 'missing';
}

/** The library, as the first gate: its InResponseTo look-up reads the requests we sent (spending one is the caller's, atomically). */
function library(settings: SamlSettings, requests: SamlRequests): SAML {
  const cache: CacheProvider = {
    saveAsync: async () => null,
    // The library compares the answer with the real time; the request's expiry is ours (`find`).
    getAsync: async (key) => ((await requests.find(key, 'authn')) ? new Date().toISOString() : null),
    removeAsync: async () => null,
  };
  // Times are checked below with the service's clock and the configured skew (-1: not by the library).
  return new SAML({ ...libraryOptions(settings, cache, newRequestId), acceptedClockSkewMs: -1, validateInResponseTo: settings.allowIdpInitiated ? ValidateInResponseTo.ifPresent : ValidateInResponseTo.always });
}

export async function readResponse(settings: SamlSettings, samlResponse: string, now: number, requests: SamlRequests): Promise<SamlAssertion> {
  if (!/^[A-Za-z0-9+/=\r\n]+$/.test(samlResponse)) throw fail('malformed');
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  // No DTD at all: entity expansion (billion laughs) and external entities never start.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw fail('doctype');
  const raw = parse(xml).documentElement;
  if (raw.namespaceURI !== PROTOCOL || raw.localName !== 'Response') throw fail('malformed', { element: raw.localName });

  const pems = settings.idpCerts.map(certificatePem);
  const verified = (node: Element): string | null => {
    try {
      return getVerifiedXml(xml, node, pems);
    } catch {
      return null; // two signatures, a reference to another element, an ID used twice: not a signature of this element
    }
  };
  const signedResponse = verified(raw);
  if (signedResponse === null) {
    // An IdP may leave an error response unsigned: say it did not authenticate the user (nothing
    // of it is trusted or kept); a Success needs the signature.
    const status = failedStatus(raw);
    if (status !== undefined) throw SamlErrors.SAML_NOT_AUTHENTICATED({ status });
    throw SamlErrors.SAML_INVALID_SIGNATURE({ element: 'Response' });
  }
  if (all(raw, ASSERTION, 'EncryptedAssertion').length > 0) throw fail('encrypted_assertion');
  const rawAssertions = all(raw, ASSERTION, 'Assertion');
  if (rawAssertions.length === 1 && verified(rawAssertions[0]!) === null) throw SamlErrors.SAML_INVALID_SIGNATURE({ element: 'Assertion' });

  // From here on, only the signed bytes.
  const root = parse(signedResponse).documentElement;
  const status = failedStatus(root);
  if (status !== undefined) throw SamlErrors.SAML_NOT_AUTHENTICATED({ status });
  const assertions = all(root, ASSERTION, 'Assertion');
  if (assertions.length !== 1) throw fail('malformed', { element: 'Assertion', count: assertions.length });
  const assertion = assertions[0]!;
  if (root.getAttribute('Version') !== '2.0' || assertion.getAttribute('Version') !== '2.0') throw fail('malformed', { element: 'Version' });

  if (root.getAttribute('Destination') !== settings.acsUrl) throw fail('destination');
  const responseIssuer = one(root, ASSERTION, 'Issuer');
  if (responseIssuer && text(responseIssuer) !== settings.idpEntityId) throw fail('issuer');
  const issuer = text(one(assertion, ASSERTION, 'Issuer'));
  if (issuer !== settings.idpEntityId) throw fail('issuer');
  const assertionId = assertion.getAttribute('ID') ?? '';
  if (assertionId === '' || assertionId.length > 256) throw fail('malformed', { element: 'Assertion/@ID' });

  const skew = settings.clockSkewSec * 1000;
  const conditions = one(assertion, ASSERTION, 'Conditions');
  if (!conditions) throw fail('audience');
  const audiences = all(conditions, ASSERTION, 'AudienceRestriction');
  if (audiences.length === 0 || !audiences.every((r) => all(r, ASSERTION, 'Audience').some((a) => text(a) === settings.spEntityId))) throw fail('audience');
  const notBefore = instant(conditions.getAttribute('NotBefore'), 'malformed');
  const notOnOrAfter = instant(conditions.getAttribute('NotOnOrAfter'), 'malformed');
  if (notBefore !== undefined && now + skew < notBefore) throw fail('not_yet_valid');
  if (notOnOrAfter !== undefined && now - skew >= notOnOrAfter) throw fail('expired');

  const subject = one(assertion, ASSERTION, 'Subject');
  const nameIdEl = subject && one(subject, ASSERTION, 'NameID');
  const nameId = normaliseNameId(nameIdEl?.textContent);
  if (!nameIdEl || nameId === '' || nameId.length > 1024) throw fail('subject');
  const inResponseTo = root.getAttribute('InResponseTo') || null;
  // A bearer confirmation for us: the ACS as Recipient, alive now, answering our request.
  const confirmations = all(subject, ASSERTION, 'SubjectConfirmation').filter((c) => c.getAttribute('Method') === BEARER);
  const data = confirmations.map((c) => one(c, ASSERTION, 'SubjectConfirmationData')).filter((d): d is Element => d !== undefined);
  if (data.length === 0) throw fail('subject');
  if (!data.some((d) => d.getAttribute('Recipient') === settings.acsUrl)) throw fail('recipient');
  const mine = data.filter((d) => d.getAttribute('Recipient') === settings.acsUrl);
  const confirmed = mine.find((d) => {
    const until = instant(d.getAttribute('NotOnOrAfter'), 'malformed');
    const from = instant(d.getAttribute('NotBefore'), 'malformed');
    return until !== undefined && now - skew < until && (from === undefined || now + skew >= from);
  });
  if (!confirmed) throw fail('expired');
  const confirmedFor = confirmed.getAttribute('InResponseTo') || null;
  if (confirmedFor !== inResponseTo && !(confirmedFor === null && inResponseTo !== null)) throw fail('in_response_to');
  if (inResponseTo === null && !settings.allowIdpInitiated) throw fail('unsolicited');
  if (inResponseTo !== null && !(await requests.find(inResponseTo, 'authn'))) throw fail('in_response_to');

  // The library's own validation, as the first gate: anything it refuses is refused.
  await library(settings, requests).validatePostResponseAsync({ SAMLResponse: samlResponse }).catch((err: unknown) => {
    if (err instanceof SamlStatusError) throw SamlErrors.SAML_NOT_AUTHENTICATED({ status: 'error' });
    throw fail('rejected', {}, err);
  });

  const authn = one(assertion, ASSERTION, 'AuthnStatement');
  const attributes = new Map<string, string[]>();
  for (const statement of all(assertion, ASSERTION, 'AttributeStatement')) {
    for (const attribute of all(statement, ASSERTION, 'Attribute')) {
      const values = all(attribute, ASSERTION, 'AttributeValue').map((v) => text(v)).filter((v) => v !== '');
      for (const key of [attribute.getAttribute('Name'), attribute.getAttribute('FriendlyName')]) {
        if (key) attributes.set(key, [...(attributes.get(key) ?? []), ...values]);
      }
    }
  }
  const until = Math.max(notOnOrAfter ?? 0, instant(confirmed.getAttribute('NotOnOrAfter'), 'malformed')!);
  return {
    issuer, nameId, nameIdFormat: nameIdEl.getAttribute('Format') || null, sessionIndex: normaliseNameId(authn?.getAttribute('SessionIndex')) || null,
    inResponseTo, assertionId, acceptableUntil: until + skew, attributes,
  };
}
