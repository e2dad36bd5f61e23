/** The PATCH /api/v1/admin/users/{id} body for what the edit form changed: only those fields, a blank one as null. */
import type { AdminUser } from './types.js';

export interface UserForm {
  full_name: string;
  email: string;
  phone: string;
  language: string;
  roles: string[];
  entities: string[];
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

export function changesOf(user: AdminUser, form: UserForm): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of ['full_name', 'email', 'phone', 'language'] as const) {
    const value = form[field].trim() === '' ? null : form[field].trim();
    if (value !== (user[field] ?? null)) body[field] = value;
  }
  if (!sameSet(form.roles, user.roles)) body.roles = form.roles;
  if (!sameSet(form.entities, user.entities)) body.entities = form.entities;
  return body;
}
