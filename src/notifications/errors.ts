import { defineErrors } from '../platform/errors.js';

/** SPEC's push delivery errors: an invalid token 400, an unregistered or revoked one 410, a provider failure 500. */
export const PushErrors = defineErrors({
  /** PUSH_PROJECT_ID and PUSH_CREDENTIALS_PATH are not set. */
  PUSH_NOT_CONFIGURED: { status: 503, message: 'Push notifications are not configured on this service.' },
  /** The provider says the token is not a valid registration token; it is now inactive. */
  PUSH_TOKEN_INVALID: { status: 400, message: 'The push provider refused this device token as malformed.' },
  /** `details.reason`: unregistered, sender_id_mismatch or inactive. The token is (now) inactive; the app registers a new one. */
  PUSH_TOKEN_GONE: { status: 410, message: 'This device token is no longer registered with the push provider.' },
  /** `details.reason`: what went wrong (timeout, unavailable, internal, quota_exceeded, third_party_auth, auth, ...). Nothing about the token changed. */
  PUSH_PROVIDER_FAILED: { status: 500, message: 'The push provider could not deliver the notification.' },
});
