/**
 * SAML single logout (issue 12 section 2), both directions:
 *
 * - **The IdP signs the person out** (a LogoutRequest at our SLS, HTTP-Redirect or HTTP-POST):
 *   signed by the configured IdP (the Redirect binding's query signature, RSA-SHA256, is
 *   required, never optional), from its Issuer, within its NotOnOrAfter. Every session of ours
 *   that came from that IdP session ends (NameID and, when given, SessionIndex; none given:
 *   every session of that NameID, SAML core 3.7.3.2), audited as SAML_LOGOUT, and the IdP gets
 *   a LogoutResponse signed with our SP key, by Redirect to its SLO URL.
 * - **We sign the person out at the IdP** (`POST saml/logout` with a session from SAML): our
 *   session ends at once, and the answer holds the IdP's SLO URL with a signed LogoutRequest
 *   (recorded like an AuthnRequest, so its LogoutResponse is matched once, on any node).
 */
import { createVerify } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { DOMParser } from '@xmldom/xmldom';
import { SAML, type CacheProvider, type Profile } from '@node-saml/node-saml';
import { getVerifiedXml } from '@node-saml/node-saml/lib/xml.js';
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import { certificatePem, type SamlSettings } from '../platform/config-saml.js';
import type { Db } from '../platform/db/database.js';
import type { SessionService } from '../sessions/service.js';
import { libraryOptions, newRequestId } from './client.js';
import { SamlErrors } from './errors.js';
import type { SamlRequests, SentRequest } from './requests.js';
import type { SamlSpKeys } from './sp-keys.js';

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';

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
  if (!/^[A-Za-z0-9+/=\r\n]+$/.test(value)) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'malformed' });
  let xml: string;
  try {
    const bytes = Buffer.from(value, 'base64');
    xml = (message.binding === 'redirect' ? inflateRawSync(bytes, { maxOutputLength: 256 * 1024 }) : bytes).toString('utf8');
  } catch {
    throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'malformed' });
  }
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'doctype' });
  return xml;
}

function postSigned(xml: string, pems: string[]): boolean {
  let problem = false;
  const doc = new DOMParser({ errorHandler: { warning: () => undefined, error: () => { problem = true; }, fatalError: () => { problem = true; } } }).parseFromString(xml, 'text/xml');
  if (problem || !doc?.documentElement || doc.documentElement.namespaceURI !== PROTOCOL) return false;
  try {
    return getVerifiedXml(xml, doc.documentElement, pems) !== null;
  } catch {
    return false;
  }
}

export interface SamlLogoutDeps {
  db: Db;
  clock: Clock;
  sessions: SessionService;
  audit: AuditLog;
  requests: SamlRequests;
  spKeys: SamlSpKeys;
}

export class SamlLogout {
  constructor(private readonly deps: SamlLogoutDeps) {}

  /** The library with our signing key; its InResponseTo look-up reads our recorded requests, `save` records a LogoutRequest. */
  private async library(settings: SamlSettings, save?: { id: string; record: () => Promise<void> }): Promise<SAML> {
    const key = await this.deps.spKeys.current();
    const cache: CacheProvider = {
      saveAsync: async (id, value) => {
        if (id !== save?.id) throw new Error('the SAML library recorded a request ID it was not given');
        await save.record();
        return { value, createdAt: this.deps.clock.now() };
      },
      getAsync: async (id) => ((await this.deps.requests.find(id)) ? new Date().toISOString() : null),
      removeAsync: async () => null,
    };
    return new SAML({ ...libraryOptions(settings, cache, save ? () => save.id : newRequestId), privateKey: key.privateKeyPem, logoutUrl: settings.idpSloUrl ?? settings.idpSsoUrl });
  }

  /** The IdP signs the person out: ends their sessions; returns where the LogoutResponse goes (null: no IdP SLO URL to answer to). */
  async idpRequest(settings: SamlSettings, message: SlsMessage, ctx: AuditContext): Promise<{ redirect: string | null; ended: number }> {
    const pems = settings.idpCerts.map(certificatePem);
    const xml = messageXml(message, 'SAMLRequest');
    const signed = message.binding === 'redirect' ? redirectSigned(message, 'SAMLRequest', pems) : postSigned(xml, pems);
    if (!signed) throw SamlErrors.SAML_INVALID_SIGNATURE({ element: 'LogoutRequest' });
    const saml = await this.library(settings);
    const validated = await (message.binding === 'redirect'
      ? saml.validateRedirectAsync(message.fields as Record<string, string>, message.rawQuery)
      : saml.validatePostRequestAsync({ SAMLRequest: message.fields.SAMLRequest! })
    ).catch((err: unknown) => {
      throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'rejected' }, { cause: err });
    });
    const profile = validated.profile as Profile | null;
    if (!profile?.nameID || profile.issuer !== settings.idpEntityId) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'issuer' });
    const ended = await this.endIdpSession(settings.idpEntityId, profile.nameID, profile.sessionIndex ?? null, ctx);
    if (settings.idpSloUrl === null) return { redirect: null, ended };
    const redirect = await saml.getLogoutResponseUrlAsync(profile, message.fields.RelayState ?? '', {}, true);
    return { redirect, ended };
  }

  /** The IdP answers our LogoutRequest: spent once; returns the recorded request (where the browser goes next). */
  async idpResponse(settings: SamlSettings, message: SlsMessage): Promise<SentRequest> {
    const pems = settings.idpCerts.map(certificatePem);
    const xml = messageXml(message, 'SAMLResponse');
    const signed = message.binding === 'redirect' ? redirectSigned(message, 'SAMLResponse', pems) : postSigned(xml, pems);
    if (!signed) throw SamlErrors.SAML_INVALID_SIGNATURE({ element: 'LogoutResponse' });
    // Signed by the IdP, so its InResponseTo is what the IdP says: one of ours, not answered yet?
    const inResponseTo = /\bInResponseTo="([^"]{1,256})"/.exec(xml)?.[1];
    if (inResponseTo === undefined || !(await this.deps.requests.find(inResponseTo))) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'in_response_to' });
    const saml = await this.library(settings);
    await (message.binding === 'redirect'
      ? saml.validateRedirectAsync(message.fields as Record<string, string>, message.rawQuery)
      : saml.validatePostResponseAsync({ SAMLResponse: message.fields.SAMLResponse! })
    ).catch((err: unknown) => {
      throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'rejected' }, { cause: err });
    });
    const request = await this.deps.requests.consume(inResponseTo);
    if (!request) throw SamlErrors.SAML_VALIDATION_FAILED({ reason: 'in_response_to' });
    return request;
  }

  /** Where to send the browser to sign out at the IdP, for a session that came from it; null when it did not or the IdP has no SLO URL. */
  async start(settings: SamlSettings, sessionId: string, purpose: { relayUrl: string | null; channel: string }): Promise<string | null> {
    const origin = await this.deps.db.selectFrom('saml_sessions').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
    if (!origin || settings.idpSloUrl === null || origin.issuer !== settings.idpEntityId) return null;
    const id = newRequestId();
    const saml = await this.library(settings, { id, record: async () => void (await this.deps.requests.save(id, purpose)) });
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
