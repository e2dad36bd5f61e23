/**
 * The service provider's side of the SAML protocol, through `@node-saml/node-saml` (5.1 or newer:
 * CVE-2025-54369 and CVE-2025-54419 are fixed there; `xml-crypto` 6.1.2 or newer). One library
 * instance per request: each AuthnRequest gets an ID made here, which the request store
 * (src/saml/requests.ts) records with what the request was for.
 */
import { randomBytes } from 'node:crypto';
import { SAML, ValidateInResponseTo, type CacheProvider, type SamlConfig } from '@node-saml/node-saml';
import type { SamlSettings } from '../platform/config-saml.js';
import { REQUEST_TTL_MS, type RequestPurpose, type SamlRequests } from './requests.js';

/** An AuthnRequest ID: an NCName (starts with a letter or `_`), 160 random bits. */
export const newRequestId = (): string => `_${randomBytes(20).toString('hex')}`;

/** The library's options for `settings`: signed responses and assertions, SHA-256, our clock skew, no IdP-initiated unless enabled. */
export function libraryOptions(settings: SamlSettings, cacheProvider: CacheProvider, generateUniqueId: () => string): SamlConfig {
  return {
    entryPoint: settings.idpSsoUrl,
    issuer: settings.spEntityId,
    callbackUrl: settings.acsUrl,
    audience: settings.spEntityId,
    idpIssuer: settings.idpEntityId,
    idpCert: settings.idpCerts,
    identifierFormat: settings.nameIdFormat,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: true,
    signatureAlgorithm: 'sha256',
    acceptedClockSkewMs: settings.clockSkewSec * 1000,
    validateInResponseTo: settings.allowIdpInitiated ? ValidateInResponseTo.ifPresent : ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: REQUEST_TTL_MS,
    // IdPs differ in the authentication contexts they offer (ADFS refuses unknown ones): leave it to the IdP.
    disableRequestedAuthnContext: true,
    cacheProvider,
    generateUniqueId,
    ...(settings.idpSloUrl ? { logoutUrl: settings.idpSloUrl } : {}),
    ...(settings.sloUrl ? { logoutCallbackUrl: settings.sloUrl } : {}),
  };
}

/**
 * Where the browser goes to sign in at the IdP: the IdP's SSO URL with a deflated AuthnRequest
 * (HTTP-Redirect binding) whose ID is recorded with `relayUrl`, `channel` and, for a browser
 * sign-in, the SHA-256 of its browser-binding nonce (src/saml/browser-binding.ts), and that ID as
 * the RelayState.
 */
export async function authnRequestUrl(settings: SamlSettings, requests: SamlRequests, purpose: RequestPurpose): Promise<{ url: string; requestId: string }> {
  const id = newRequestId();
  // The library records the ID through the cache provider when it builds the request.
  const cache: CacheProvider = {
    saveAsync: async (key, value) => {
      if (key !== id) throw new Error('the SAML library recorded an AuthnRequest ID it was not given');
      const saved = await requests.save(key, purpose);
      return { value, createdAt: saved.createdAt };
    },
    getAsync: async () => null,
    removeAsync: async () => null,
  };
  const saml = new SAML(libraryOptions(settings, cache, () => id));
  const url = await saml.getAuthorizeUrlAsync(id, undefined, {});
  return { url, requestId: id };
}
