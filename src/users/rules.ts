/** The shapes of user fields, shared by the admin API's schemas and the CLI's checks. */
export const USERNAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._@-]{2,63}$';
export const USERNAME_RULE = '3 to 64 characters: letters, digits, `.`, `_`, `@`, `-`, starting with a letter or digit';
/** E.164: a plus sign and 7 to 15 digits. */
export const PHONE_PATTERN = '^\\+[1-9][0-9]{6,14}$';
export const EMAIL_MAX_LENGTH = 254;
