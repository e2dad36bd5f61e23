import { defineErrors } from '../platform/errors.js';

export const AdminErrors = defineErrors({
  USER_EXISTS: { status: 409, message: 'A user with this username, email or phone number already exists.' },
  IDENTIFIER_CONFLICT: { status: 409, message: 'The username is another account\'s email address, or the email is another account\'s username: sign-in by either would reach the wrong account.' },
  USER_NOT_FOUND: { status: 404, message: 'No such user. The API names a user by uuid: the `id` of the user in GET /api/v1/admin/users.' },
  UNKNOWN_ROLE: { status: 422, message: 'One or more roles do not exist.' },
  MAIL_DELIVERY_FAILED: { status: 503, message: 'The temporary password could not be emailed; nothing was changed. Try again later.' },
  /** `details.unknown_entities`, `details.inactive_entities`: the branch codes refused. */
  UNKNOWN_ENTITY: { status: 422, message: 'One or more branches do not exist, or are deactivated (a deactivated branch links no new user). Send the codes of active branches (GET /api/v1/admin/entities).' },
  /** The account is soft-deleted: it can be read, not changed (erasure is a data-rights request). */
  ACCOUNT_DELETED: { status: 409, message: 'The account is deleted: it can be read but no longer changed. Create a new account if the person returns.' },
  CANNOT_DISABLE_SELF: { status: 409, message: 'You cannot disable or delete your own account; another administrator must do it.' },
  /** `details.role`: admin. */
  LAST_ADMIN: { status: 409, message: 'The change would leave no active account with the admin role; give another account the admin role first.' },
  SESSION_NOT_FOUND: { status: 404, message: 'The user has no active session with this id. List the user\'s sessions (GET /api/v1/admin/users/{id}/sessions) for the ids.' },
});
