import { defineErrors } from '../platform/errors.js';

export const AdminErrors = defineErrors({
  USER_EXISTS: { status: 409, message: 'A user with this username, email or phone number already exists.' },
  IDENTIFIER_CONFLICT: { status: 409, message: 'The username is another account\'s email address, or the email is another account\'s username: sign-in by either would reach the wrong account.' },
  USER_NOT_FOUND: { status: 404, message: 'No such user.' },
  UNKNOWN_ROLE: { status: 422, message: 'One or more roles do not exist.' },
  MAIL_DELIVERY_FAILED: { status: 503, message: 'The temporary password could not be emailed; nothing was changed. Try again later.' },
});
