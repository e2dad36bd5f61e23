/**
 * The service provider's metadata (SAML 2.0 metadata, section 2.4.4): what an operator loads into
 * the bank's IdP. Built from the settings and the SP's signing certificates (the IdP's part is
 * not needed to describe ours), every value escaped for XML.
 */
import { hasControl, type SamlSettings } from '../platform/config-saml.js';

const BINDING = {
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
} as const;

export const METADATA_CONTENT_TYPE = 'application/samlmetadata+xml; charset=utf-8' as const;

/** Text and attribute values: the five characters XML gives meaning to, and no control characters. */
function xml(value: string): string {
  if (hasControl(value)) throw new Error('a metadata value holds a control character');
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/**
 * `signingCerts`: the SP's published signing certificates (PEM), newest first; each becomes a
 * KeyDescriptor use="signing" (schema order: before the logout services).
 */
export function spMetadata(s: SamlSettings, signingCerts: readonly string[] = []): string {
  const keys = signingCerts.flatMap((pem) => [
    '    <md:KeyDescriptor use="signing">',
    '      <ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>',
    `        <ds:X509Certificate>${pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '')}</ds:X509Certificate>`,
    '      </ds:X509Data></ds:KeyInfo>',
    '    </md:KeyDescriptor>',
  ]);
  const slo = s.sloUrl === null ? [] : [BINDING.redirect, BINDING.post].map((b) => `    <md:SingleLogoutService Binding="${b}" Location="${xml(s.sloUrl!)}"/>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${xml(s.spEntityId)}">`,
    // Assertions must be signed (the identity is read only from signed content); AuthnRequests are not signed, logout messages are.
    '  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">',
    ...keys,
    ...slo,
    `    <md:NameIDFormat>${xml(s.nameIdFormat)}</md:NameIDFormat>`,
    `    <md:AssertionConsumerService Binding="${BINDING.post}" Location="${xml(s.acsUrl)}" index="0" isDefault="true"/>`,
    '  </md:SPSSODescriptor>',
    '</md:EntityDescriptor>',
    '',
  ].join('\n');
}
