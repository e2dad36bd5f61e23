/** The shape of a role's name and description, shared by the API's schemas and the CLI. */
export const ROLE_NAME_PATTERN = '^[a-z][a-z0-9._-]{1,63}$';
export const ROLE_NAME_RULE = '2 to 64 characters: lower-case letters, digits, ".", "_" or "-", starting with a letter. The role\'s public id: it never changes.';
export const ROLE_DESCRIPTION_MAX = 200;
/** Permission names as the migrations write them (`users.read`, `access_ai_chat`). */
export const PERMISSION_NAME_PATTERN = '^[a-z][a-z0-9._]{0,63}$';
export const ROLE_PERMISSIONS_MAX = 100;
