/**
 * Errors of the personal-data breach register. A scope that finds more accounts than the search
 * may store is 422 (the request is valid JSON but asks for too much: narrow it); a report or a
 * closing that the breach's state no longer allows is 409.
 */
import { defineErrors } from '../../platform/errors.js';

export const BreachErrors = defineErrors({
  BREACH_NOT_FOUND: { status: 404, message: 'No such breach.' },
  /** `details.max_affected`: the most accounts one breach may list (BREACH_MAX_AFFECTED). */
  BREACH_SCOPE_TOO_BROAD: { status: 422, message: 'The window and scope match more accounts than one breach may list; narrow the scope or split the window.' },
  /** `details.reported_at`: when it was reported. */
  BREACH_ALREADY_REPORTED: { status: 409, message: 'This breach has already been reported to the authority.' },
  /** `details.closed_at`: when it was closed. */
  BREACH_CLOSED: { status: 409, message: 'This breach is closed.' },
});
