/** Errors of the audit trail's summary. */
import { defineErrors } from '../platform/errors.js';

export const AuditErrors = defineErrors({
  /** `details.bucket`, `details.max_days`: the bucket asked for and the longest range it allows; `details.from`, `details.to`: the range read. */
  AUDIT_SUMMARY_RANGE_INVALID: { status: 400, message: 'The time range must end after it starts and be at most 31 days long by hour, 400 days by day.' },
});
