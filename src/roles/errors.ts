import { defineErrors } from '../platform/errors.js';

export const RoleErrors = defineErrors({
  /** `details.role`: the name asked for. */
  ROLE_NOT_FOUND: { status: 404, message: 'No role has this name. GET /api/v1/admin/roles lists the roles.' },
  /** `details.role`: the name another role holds. */
  ROLE_EXISTS: { status: 409, message: 'A role with this name already exists: choose another name, or change that role with PATCH /api/v1/admin/roles/{name}.' },
  /** `details.role`; `details.refused`: what was refused (`delete` or `permissions`). */
  ROLE_BUILT_IN: { status: 409, message: 'This role is built in: it cannot be deleted and its permissions cannot be changed (its description can). Create a role of your own from the permissions you need.' },
  /** `details.holders`: how many users hold the role; `details.references`: the settings that name it. */
  ROLE_IN_USE: { status: 409, message: 'The role is still held by users or named by a setting: take it from its holders (PATCH the users\' roles) and out of the settings listed in details, then delete it.' },
  /** `details.unknown_permissions`; `details.known_permissions`: every permission there is. */
  UNKNOWN_PERMISSION: { status: 422, message: 'One or more permissions do not exist: use the names GET /api/v1/admin/permissions lists.' },
  /** `details.permissions`: the permissions the caller tried to grant without holding them. */
  PERMISSION_NOT_HELD: { status: 403, message: 'A role can be given only permissions you hold yourself: remove the permissions listed in details, or ask an administrator who holds them.' },
  /** `details.permissions`: what the account holds that the caller does not. */
  ACCOUNT_MORE_PRIVILEGED: { status: 403, message: 'This account holds permissions you do not hold (listed in details): only an administrator who holds them can change it, reset its credentials or end its sessions.' },
});
