/** A bank branch ("entity") as GET /api/v1/admin/entities answers it. */
export interface Entity {
  id: string;
  code: string;
  name: string;
  /** A deactivated branch links no new user; existing links stay. */
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

export interface EntityPage {
  entities: Entity[];
  total: number;
  page: number;
  page_size: number;
}

/** The API's code rule: 1 to 32 letters, digits, ".", "_" or "-", a letter or digit first. */
export const ENTITY_CODE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$';
