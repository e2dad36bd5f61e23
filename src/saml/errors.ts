import { defineErrors } from '../platform/errors.js';

/**
 * Why a SAMLResponse, or a logout message at the SLS, was refused (`details.reason` of 401 SAML_VALIDATION_FAILED): stable words a
 * client or an operator can act on.
 */
export type SamlFailure =
  | 'malformed' // not base64, not XML, not a SAML 2.0 Response, an element given twice
  | 'doctype' // a DOCTYPE or entity declaration (never expanded)
  | 'encrypted_assertion' // not supported: the IdP must send the assertion signed, unencrypted, over TLS
  | 'destination' // the Response's Destination is not our ACS URL (a logout message's: not our SLS URL, or none)
  | 'issuer' // an Issuer that is not the configured IdP
  | 'audience' // no AudienceRestriction naming our entity id
  | 'recipient' // no bearer confirmation whose Recipient is our ACS URL
  | 'subject' // no NameID, or no bearer confirmation
  | 'not_yet_valid' // NotBefore (a logout message: IssueInstant) later than our clock plus the skew
  | 'expired' // NotOnOrAfter passed (a logout message: IssueInstant older than the skew)
  | 'in_response_to' // answers a request we did not send, sent already answered, or expired
  | 'unsolicited' // no InResponseTo, and IdP-initiated sign-in is off
  | 'replayed' // this assertion (or LogoutRequest) was accepted before (on any node)
  | 'browser_binding' // a browser sign-in's response posted by a browser without that sign-in's cookie (login CSRF, a code stolen)
  | 'status' // a LogoutResponse whose status is not Success
  | 'rejected'; // the SAML library refused it for a reason of its own (logged)

/** SAML sign-in and configuration (SPEC's status map: signature and validation failures are 401, metadata generation 500). */
export const SamlErrors = defineErrors({
  SAML_CONFIG_INVALID: { status: 400, message: 'The SAML configuration is not valid.' },
  SAML_NOT_CONFIGURED: { status: 404, message: 'SAML sign-in is not configured on this server.' },
  SAML_METADATA_ERROR: { status: 500, message: 'The service provider metadata could not be generated.' },
  /** `details.allowed_origins`: where a RelayState may lead. */
  SAML_RELAY_STATE_NOT_ALLOWED: { status: 422, message: 'The relay_state URL is not on this service\'s list of allowed origins.' },
  /** `details.element`: Response or Assertion. Nothing of the response was trusted. */
  SAML_INVALID_SIGNATURE: { status: 401, message: 'The SAML response is not signed by the configured identity provider.' },
  /** `details.reason`: one of malformed, doctype, encrypted_assertion, destination, issuer, audience, recipient, subject, not_yet_valid, expired, in_response_to, unsolicited, replayed, browser_binding, status, rejected. */
  SAML_VALIDATION_FAILED: { status: 401, message: 'The SAML response is not valid for this service.' },
  /** `details.status`: the IdP's status code (its last segment), e.g. Responder/AuthnFailed. */
  SAML_NOT_AUTHENTICATED: { status: 401, message: 'The identity provider did not authenticate the user.' },
  /** The one-time code of a SAML browser sign-in is unknown, spent, expired, or of the other kind. */
  SAML_CODE_INVALID: { status: 401, message: 'The sign-in code is not valid. Sign in again.' },
  /** `details.fields`: the attributes the assertion lacks (an email the configuration requires, say). */
  SAML_ATTRIBUTES_MISSING: { status: 401, message: 'The identity provider did not send what this service needs to sign the user in.' },
});
