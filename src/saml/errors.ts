import { defineErrors } from '../platform/errors.js';

/** SAML sign-in and configuration (SPEC's status map: signature and validation failures are 401, metadata generation 500). */
export const SamlErrors = defineErrors({
  SAML_CONFIG_INVALID: { status: 400, message: 'The SAML configuration is not valid.' },
  SAML_NOT_CONFIGURED: { status: 404, message: 'SAML sign-in is not configured on this server.' },
  SAML_METADATA_ERROR: { status: 500, message: 'The service provider metadata could not be generated.' },
  /** `details.allowed_origins`: where a RelayState may lead. */
  SAML_RELAY_STATE_NOT_ALLOWED: { status: 422, message: 'The relay_state URL is not on this service\'s list of allowed origins.' },
});
