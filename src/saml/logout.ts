/**
 * SAML single logout (issue 12 section 2), both directions:
 *
 * - **The IdP signs the person out** (a LogoutRequest at our SLS, HTTP-Redirect or HTTP-POST):
 *   signed by the configured IdP (the Redirect binding's query signature, RSA-SHA256, is
 *   required, never optional), from its Issuer, for us (`Destination` is our SLS URL), fresh
 *   (`IssueInstant` within the clock skew of our clock, `NotOnOrAfter` not passed) and accepted
 *   once on any node (its ID reserved in the replay cache, src/saml/replay.ts). Every session of
 *   ours that came from that IdP session ends (NameID and, when given, SessionIndex; none given:
 *   every session of that NameID, SAML core 3.7.3.2), audited as SAML_LOGOUT, and the IdP gets a
 *   LogoutResponse signed with our SP key, by Redirect to its SLO URL.
 * - **We sign the person out at the IdP** (`POST saml/logout` with a session from SAML): our
 *   session ends at once, and the answer holds the IdP's SLO URL with a signed LogoutRequest
 *   (recorded like an AuthnRequest, as a logout request, so its LogoutResponse is matched once,
 *   on any node, and no LogoutResponse can spend a pending sign-in). The LogoutResponse must be
 *   signed, from the IdP, for our SLS, fresh, and a Success.
 *
 * Everything is read from what the signature covers: on HTTP-POST the canonical XML xml-crypto
 * returns for the verified root element (no comments, nothing outside it), on HTTP-Redirect the
 * whole message (the query signature covers its bytes). The library (`@node-saml/node-saml`)
 * validates each message its way too, as a second gate; its time checks are off (they read the
 * system clock), ours use the service's clock and the configured skew.
 */
import { createVerify } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { DOMParser } from '@xmldom/xmldom';
import { SAML, ValidateInResponseTo, type CacheProvider, type Profile } from '@node-saml/node-saml';
import { getVerifiedXml } from '@node-saml/node-saml/lib/xml.js';
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import { certificatePem, type SamlSettings } from '../platform/config-saml.js';
import type { Db } from '../platform/db/database.js';
import type { SessionService } from '../sessions/service.js';
import { libraryOptions, newRequestId } from './client.js';
import { SamlErrors } from './errors.js';
import type { SamlAssertionCache } from './replay.js';
import type { SamlRequests, SentRequest } from './requests.js';
import { ASSERTION, PROTOCOL, all, fail, failedStatus, instant, normaliseNameId, one, parse, text } from './response.js';
import type { SamlSpKeys } from './sp-keys.js';

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

/** A message as it reached the SLS: its binding, its fields, and (Redirect) the query exactly as sent. */
export interface SlsMessage {
  binding: 'redirect' | 'post';
  fields: Record<string, string | undefined>;
  rawQuery: string;
}

/** The raw (still percent-encoded) value of `key` in a query string, as the signer saw it. */
function rawParam(query: string, key: string): string | undefined {
  return query.split('&').find((p) => p.startsWith(`${key}=`))?.slice(key.length + 1);
}

/**
 * The Redirect binding's signature (SAML bindings 3.4.4.1): over `SAMLRequest=…[&RelayState=…]&SigAlg=…`
 * exactly as received, with one of the IdP's certificates; RSA-SHA256 only.
 */
function redirectSigned(message: SlsMessage, kind: 'SAMLRequest' | 'SAMLResponse', pems: string[]): boolean {
  const { fields, rawQuery } = message;
  if (fields.SigAlg !== RSA_SHA256 || !fields.Signature) return false;
  const parts = [kind, 'RelayState', 'SigAlg'].map((k) => [k, rawParam(rawQuery, k)] as const).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
  const signed = parts.join('&');
  const signature = Buffer.from(fields.Signature, 'base64');
  return pems.some((pem) => createVerify('RSA-SHA256').update(signed).verify(pem, signature));
}

/** The decoded XML of a message (Redirect: deflated), refusing DTDs as the ACS does. */
function messageXml(message: SlsMessage, kind: 'SAMLRequest' | 'SAMLResponse'): string {
  const value = message.fields[kind] ?? '';
  if (!/^[A-Za-z0-9+/=\r\n]+$/.test(value)) throw fail('malformed');
  let xml: string;
  try {
    const bytes = Buffer.from(value, 'base64');
    xml = (message.binding === 'redirect' ? inflateRawSync(bytes, { maxOutputLength: 256 * 1024 }) : bytes).toString('utf8');
  } catch {
    throw fail('malformed');
  }
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw fail('doctype');
  return xml;
}

/** The canonical XML of the root element, when the IdP signed it (enveloped); null when not. */
function postVerified(xml: string, pems: string[]): string | null {
  let problem = false;
  const doc = new DOMParser({ errorHandler: { warning: () => undefined, error: () => { problem = true; }, fatalError: () => { problem = true; } } }).parseFromString(xml, 'text/xml');
  if (problem || !doc?.documentElement || doc.documentElement.namespaceURI !== PROTOCOL) return null;
  try {
    return getVerifiedXml(xml, doc.documentElement, pems);
  } catch {
    return null; // two signatures, a reference to another element: not a signature of this element
  }
}

/**
 * The root element of `kind` of the message, from the bytes its signature covers only; throws
 * SAML_INVALID_SIGNATURE when the IdP did not sign it.
 */
function signedRoot(settings: SamlSettings, message: SlsMessage, kind: 'SAMLRequest' | 'SAMLResponse'): Element {
  const pems = settings.idpCerts.map(certificatePem);
  const xml = messageXml(message, kind);
  const trusted = message.binding === 'redirect' ? (redirectSigned(message, kind, pems) ? xml : null) : postVerified(xml, pems);
  const element = kind === 'SAMLRequest' ? 'LogoutRequest' : 'LogoutResponse';
  if (trusted === null) throw SamlErrors.SAML_INVALID_SIGNATURE({ element });
  const root = parse(trusted).documentElement;
  if (root.namespaceURI !== PROTOCOL || root.localName !== element || root.getAttribute('Version') !== '2.0') throw fail('malformed', { element: root.localName });
  return root;
}

/**
 * What every logout message from the IdP must be, whatever it says: from the IdP (its Issuer,
 * required on a signed message), for us (`Destination` our SLS URL, required on a signed message:
 * SAML bindings 3.4.5.2 and 3.5.5.2; no SLS URL configured, no logout message is for us), and
 * issued within the clock skew of `now`, its `NotOnOrAfter` (when given) not passed. Returns
 * until when it could be accepted (ms).
 */
function checkEnvelope(settings: SamlSettings, root: Element, now: number): number {
  if (text(one(root, ASSERTION, 'Issuer')) !== settings.idpEntityId) throw fail('issuer');
  if (settings.sloUrl === null || root.getAttribute('Destination') !== settings.sloUrl) throw fail('destination');
  const skew = settings.clockSkewSec * 1000;
  const issued = instant(root.getAttribute('IssueInstant'), 'malformed');
  if (issued === undefined) throw fail('malformed', { element: 'IssueInstant' });
  if (issued > now + skew) throw fail('not_yet_valid');
  if (now - skew >= issued) throw fail('expired');
  const notOnOrAfter = instant(root.getAttribute('NotOnOrAfter'), 'malformed');
  if (notOnOrAfter !== undefined && now - skew >= notOnOrAfter) throw fail('expired');
  // Refused as expired from then on, whatever its NotOnOrAfter says.
  return issued + skew;
}

/** A LogoutRequest as the signature vouches for it. */
interface LogoutRequestRead {
  id: string;
  nameId: string;
  nameIdFormat: string | null;
  sessionIndex: string | null;
  acceptableUntil: number;
}

function readLogoutRequest(settings: SamlSettings, root: Element, now: number): LogoutRequestRead {
  const acceptableUntil = checkEnvelope(settings, root, now);
  const id = root.getAttribute('ID') ?? '';
  if (id === '' || id.length > 256) throw fail('malformed', { element: 'LogoutRequest/@ID' });
  const nameIdEl = one(root, ASSERTION, 'NameID');
  const nameId = normaliseNameId(nameIdEl?.textContent);
  if (!nameIdEl || nameId === '' || nameId.length > 1024) throw fail('subject');
  // SAML core 3.7.1: several SessionIndex elements may be given; as before, the first one is used.
  const sessionIndex = normaliseNameId(all(root, PROTOCOL, 'SessionIndex')[0]?.textContent) || null;
  return { id, nameId, nameIdFormat: nameIdEl.getAttribute('Format') || null, sessionIndex, acceptableUntil };
}

export interface SamlLogoutDeps {
  db: Db;
  clock: Clock;
  sessions: SessionService;
  audit: AuditLog;
  requests: SamlRequests;
  replay: SamlAssertionCache;
  spKeys: SamlSpKeys;
}

export class SamlLogout {
  constructor(private readonly deps: SamlLogoutDeps) {}

  /**
   * The library with our signing key; its InResponseTo look-up reads our recorded logout requests
   * (never a pending AuthnRequest), `save` records a LogoutRequest. Its time checks are ours.
   */
  private async library(settings: SamlSettings, save?: { id: string; record: () => Promise<void> }): Promise<SAML> {
    const key = await this.deps.spKeys.current();
    const cache: CacheProvider = {
      saveAsync: async (id, value) => {
        if (id !== save?.id) throw new Error('the SAML library recorded a request ID it was not given');
        await save.record();
        return { value, createdAt: this.deps.clock.now() };
      },
      getAsync: async (id) => ((await this.deps.requests.find(id, 'logout')) ? new Date().toISOString() : null),
      removeAsync: async () => null,
    };
    return new SAML({
      ...libraryOptions(settings, cache, save ? () => save.id : newRequestId), privateKey: key.privateKeyPem, logoutUrl: settings.idpSloUrl ?? settings.idpSsoUrl,
      // A LogoutResponse's InResponseTo is checked here (required, one of our logout requests), whether
      // IdP-initiated sign-in is allowed or not: the library would look for a Response's.
      acceptedClockSkewMs: -1, validateInResponseTo: ValidateInResponseTo.ifPresent,
    });
  }

  /** The IdP signs the person out: ends their sessions; returns where the LogoutResponse goes (null: no IdP SLO URL to answer to). */
  async idpRequest(settings: SamlSettings, message: SlsMessage, ctx: AuditContext): Promise<{ redirect: string | null; ended: number }> {
    const root = signedRoot(settings, message, 'SAMLRequest');
    const request = readLogoutRequest(settings, root, this.deps.clock.now());
    const saml = await this.library(settings);
    await (message.binding === 'redirect'
      ? saml.validateRedirectAsync(message.fields as Record<string, string>, message.rawQuery)
      : saml.validatePostRequestAsync({ SAMLRequest: message.fields.SAMLRequest! })
    ).catch((err: unknown) => {
      throw fail('rejected', {}, err);
    });
    // Once, on any node (a replay, also a parallel one, ends nothing).
    if (!(await this.deps.replay.reserve(settings.idpEntityId, request.id, request.acceptableUntil))) throw fail('replayed');
    const ended = await this.endIdpSession(settings.idpEntityId, request.nameId, request.sessionIndex, ctx);
    if (settings.idpSloUrl === null) return { redirect: null, ended };
    const profile: Profile = { ID: request.id, issuer: settings.idpEntityId, nameID: request.nameId, nameIDFormat: request.nameIdFormat ?? settings.nameIdFormat, ...(request.sessionIndex === null ? {} : { sessionIndex: request.sessionIndex }) };
    const redirect = await saml.getLogoutResponseUrlAsync(profile, message.fields.RelayState ?? '', {}, true);
    return { redirect, ended };
  }

  /** The IdP answers our LogoutRequest: spent once; returns the recorded request (where the browser goes next). */
  async idpResponse(settings: SamlSettings, message: SlsMessage): Promise<SentRequest> {
    const root = signedRoot(settings, message, 'SAMLResponse');
    checkEnvelope(settings, root, this.deps.clock.now());
    const status = failedStatus(root);
    if (status !== undefined) throw fail('status', { status });
    // What the IdP signed answers one of our logout requests, not answered yet?
    const inResponseTo = root.getAttribute('InResponseTo') ?? '';
    if (inResponseTo === '' || inResponseTo.length > 256 || !(await this.deps.requests.find(inResponseTo, 'logout'))) throw fail('in_response_to');
    const saml = await this.library(settings);
    await (message.binding === 'redirect'
      ? saml.validateRedirectAsync(message.fields as Record<string, string>, message.rawQuery)
      : saml.validatePostResponseAsync({ SAMLResponse: message.fields.SAMLResponse! })
    ).catch((err: unknown) => {
      throw fail('rejected', {}, err);
    });
    const request = await this.deps.requests.consume(inResponseTo, 'logout');
    if (!request) throw fail('in_response_to');
    return request;
  }

  /** Where to send the browser to sign out at the IdP, for a session that came from it; null when it did not or the IdP has no SLO URL. */
  async start(settings: SamlSettings, sessionId: string, purpose: { relayUrl: string | null; channel: string }): Promise<string | null> {
    const origin = await this.deps.db.selectFrom('saml_sessions').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
    if (!origin || settings.idpSloUrl === null || origin.issuer !== settings.idpEntityId) return null;
    const id = newRequestId();
    const saml = await this.library(settings, { id, record: async () => void (await this.deps.requests.save(id, purpose, 'logout')) });
    // The IdP gets the request's ID as the RelayState (as for sign-in): nothing else to find by.
    return saml.getLogoutUrlAsync({ issuer: origin.issuer, nameID: origin.name_id, nameIDFormat: settings.nameIdFormat, sessionIndex: origin.session_index ?? undefined }, id, {});
  }

  /** Ends the active sessions that came from this IdP session; returns how many. */
  private async endIdpSession(issuer: string, nameId: string, sessionIndex: string | null, ctx: AuditContext): Promise<number> {
    const d = this.deps;
    const ended = await d.db.transaction().execute(async (trx) => {
      let q = trx.selectFrom('saml_sessions').innerJoin('sessions', 'sessions.session_id', 'saml_sessions.session_id')
        .select(['saml_sessions.session_id', 'saml_sessions.user_id']).where('saml_sessions.issuer', '=', issuer).where('saml_sessions.name_id', '=', nameId).where('sessions.is_active', '=', true);
      if (sessionIndex !== null) q = q.where('saml_sessions.session_index', '=', sessionIndex);
      const rows = await q.execute();
      const byUser = new Map<number, string[]>();
      for (const r of rows) byUser.set(r.user_id, [...(byUser.get(r.user_id) ?? []), r.session_id]);
      for (const [userId, ids] of byUser) {
        await d.sessions.endMany(trx, ids, 'idp_logout', userId);
        const user = await trx.selectFrom('users').select(['uuid', 'username']).where('id', '=', userId).executeTakeFirstOrThrow();
        await d.audit.record({ ...ctx, eventType: 'SAML_LOGOUT', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { initiated_by: 'idp', issuer, session_index: sessionIndex, sessions_ended: ids } }, trx);
      }
      return rows.map((r) => r.session_id);
    });
    await d.sessions.announce(ended);
    return ended.length;
  }
}
