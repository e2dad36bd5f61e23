/** The administration API's user, as GET /api/v1/admin/users answers it. */
export interface AdminUser {
  id: string;
  username: string;
  email: string | null;
  phone: string | null;
  full_name: string | null;
  language: string | null;
  roles: string[];
  entities: string[];
  status: 'active' | 'disabled' | 'locked' | 'deleted';
  is_active: boolean;
  must_change_password: boolean;
  locked_until: string | null;
  last_login_at: string | null;
  created_at: string;
  deleted_at?: string | null;
}

export const STATUSES = ['active', 'disabled', 'locked', 'deleted'] as const;
