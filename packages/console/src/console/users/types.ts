/** The administration API's user, as GET /api/v1/admin/users answers it: the server's own schema (a type-only import: nothing of the server is bundled). */
import type { Static } from 'typebox';
import type { AdminUser as AdminUserSchema } from '../../../../../src/admin/schemas.js';

export type AdminUser = Static<typeof AdminUserSchema>;

export const STATUSES = ['active', 'disabled', 'locked', 'deleted'] as const;
