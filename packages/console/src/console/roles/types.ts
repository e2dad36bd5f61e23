/** Roles and permissions as the administration API answers them (GET /api/v1/admin/roles, /permissions). */
export interface Role {
  name: string;
  description: string;
  /** Shipped with the service: cannot be deleted, its permissions cannot change (its description can). */
  built_in: boolean;
  permissions: string[];
  holders: number;
}

export interface Permission {
  name: string;
  description: string;
  roles: string[];
}

/** The role name rule of the API (2 to 64 characters: lower-case letters, digits, ".", "_", "-", a letter first). */
export const ROLE_NAME_PATTERN = '^[a-z][a-z0-9._-]{1,63}$';
