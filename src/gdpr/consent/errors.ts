/**
 * Errors of consent. 422 for a purpose the bank has not configured (a body that names something
 * that does not exist, like an unknown role), 404 for one named by an administrative path, 409
 * for an answer that no longer fits the purpose as it is now (a text version that is not the
 * current one, a required purpose withdrawn) and for a purpose or text that exists already.
 */
import { defineErrors } from '../../platform/errors.js';

export const ConsentErrors = defineErrors({
  /** `details.purposes`: the keys of the body the bank has no purpose for. */
  CONSENT_PURPOSE_UNKNOWN: { status: 422, message: 'There is no consent purpose with this key.' },
  /** `details.purpose`: an administrative path's purpose key. */
  CONSENT_PURPOSE_NOT_FOUND: { status: 404, message: 'There is no consent purpose with this key.' },
  /**
   * Consent is given to the current version of a purpose's text only: read it again
   * (`GET /api/v1/auth/consent`) and show it. `details.purpose`, `details.version` (sent) and
   * `details.current_version`.
   */
  CONSENT_VERSION_STALE: { status: 409, message: 'This is not the current version of the purpose\'s text; show the current one and ask again.' },
  /** `details.purpose`: a purpose needed to use the service; closing the account is the way to end it. */
  CONSENT_REQUIRED_PURPOSE: { status: 409, message: 'This purpose is needed to use the service and cannot be withdrawn; ask for the account to be closed instead.' },
  /** `details.purpose`. */
  CONSENT_PURPOSE_EXISTS: { status: 409, message: 'A consent purpose with this key exists already.' },
  /** `details.purpose` and `details.current_version`: the texts sent are those of the current version. */
  CONSENT_TEXT_UNCHANGED: { status: 409, message: 'These texts are the current version\'s; a new version must change something.' },
});
