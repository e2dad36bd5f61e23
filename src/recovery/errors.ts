/**
 * Errors of self-service account recovery. Statuses follow the rest of the service: 404 for a
 * `recovery_id` that names no workflow (handles are random, so this says nothing about
 * accounts), 409 for a duplicate or stale step (a proof given twice, any step on a finished
 * workflow), 400 for a step the workflow's state does not allow, 401 for a wrong code or answer
 * (as a wrong one-time code or security answer is), 429 once a proof's attempts are spent. None
 * of them ever differs between a real account and a made-up one.
 */
import { defineErrors } from '../platform/errors.js';

export const RecoveryErrors = defineErrors({
  RECOVERY_NOT_FOUND: { status: 404, message: 'No such recovery workflow.' },
  /** `details.state`: the workflow's state (completed, cancelled, expired or rejected). */
  RECOVERY_STALE: { status: 409, message: 'This recovery workflow has ended; start a new one if you still need to.' },
  /** `details.state`, and `details.reason`: what the step is missing. */
  RECOVERY_INVALID_STATE: { status: 400, message: 'This step is not possible in the workflow\'s current state.' },
  RECOVERY_PROOF_NOT_OFFERED: { status: 400, message: 'This proof does not count for what was lost; choose one of the workflow\'s options.' },
  RECOVERY_PROOF_ALREADY_GIVEN: { status: 409, message: 'This proof has already been given for this workflow.' },
  /** `details.attempts_left` for this proof in this workflow, and `details.state`. */
  RECOVERY_PROOF_INVALID: { status: 401, message: 'The code or answer is not correct.' },
  RECOVERY_CODE_EXPIRED: { status: 401, message: 'The code has expired; request a new one.' },
  /**
   * Four eyes on a branch's approval: the operator may decide neither a workflow of their own
   * account nor one they started at the desk. `details.reason`: `own_account` or `started_by_you`.
   */
  RECOVERY_FOUR_EYES: { status: 403, message: 'Another operator must decide this recovery.' },
  /** A "this was not me" link used already: it works once. `details.state`: the workflow's state. */
  RECOVERY_CANCEL_TOKEN_USED: { status: 409, message: 'This link has been used already.' },
  /** `details.proof`; with `Retry-After` when the lock is for a while rather than for the workflow. */
  RECOVERY_PROOF_LOCKED: { status: 429, message: 'Too many wrong attempts for this proof.' },
});
