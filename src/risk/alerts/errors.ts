/**
 * Errors of the security alerts' administration. A transition the alert's state no longer allows
 * (acknowledging an acknowledged alert, anything on a resolved one) is 409: the request was
 * valid, another administrator got there first.
 */
import { defineErrors } from '../../platform/errors.js';

export const AlertErrors = defineErrors({
  ALERT_NOT_FOUND: { status: 404, message: 'No such security alert.' },
  /** `details.acknowledged_at`, `details.acknowledged_by`: when and by whom. */
  ALERT_ALREADY_ACKNOWLEDGED: { status: 409, message: 'This security alert has already been acknowledged.' },
  /** `details.resolved_at`, `details.resolved_by`: when and by whom. */
  ALERT_RESOLVED: { status: 409, message: 'This security alert is resolved.' },
});
