import { defineErrors } from '../platform/errors.js';

/** The unified third-party login; each provider's own errors are its module's. */
export const ThirdPartyErrors = defineErrors({
  /** `details.provider`, `details.fields`: fields that belong to the other provider. */
  THIRD_PARTY_FIELD_NOT_ALLOWED: { status: 422, message: 'These fields do not belong to the chosen provider.' },
});
