/**
 * What a user's roles and branches may be chosen from: the roles (with `roles.read`) and the
 * branches (with `entities.manage`). Without the permission, null: the form takes names typed.
 */
import { useEffect, useState } from 'react';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import type { Entity, EntityPage } from '../entities/types.js';
import type { Choice } from '../roles/Choices.js';
import type { Role } from '../roles/types.js';

/** Reads `path` when it is not null; undefined while loading or when refused. */
function useOptional<T>(path: string | null): T | undefined {
  const { call } = useSession();
  const [data, setData] = useState<{ path: string; value: T } | null>(null);
  useEffect(() => {
    if (path === null) return undefined;
    let live = true;
    call<T>('GET', path).then((value) => { if (live) setData({ path, value }); }, () => undefined);
    return () => {
      live = false;
    };
  }, [call, path]);
  return data !== null && data.path === path ? data.value : undefined;
}

/** The roles to choose from, or null when the operator cannot read them. */
export function useRoleChoices(): Choice[] | null | undefined {
  const { can } = useSession();
  const roles = useOptional<{ roles: Role[] }>(can('roles.read') ? '/api/v1/admin/roles' : null);
  if (!can('roles.read')) return null;
  return roles?.roles.map((r) => ({ id: r.name, label: r.name, description: r.description }));
}

/** The branches to choose from (a deactivated one only if the user is already in it), or null without `entities.manage`. */
export function useEntityChoices(linked: readonly string[]): Choice[] | null | undefined {
  const { can } = useSession();
  const { t } = useI18n();
  const page = useOptional<EntityPage>(can('entities.manage') ? '/api/v1/admin/entities?page_size=200' : null);
  if (!can('entities.manage')) return null;
  return page?.entities.map((e: Entity) => ({
    id: e.code,
    label: e.code,
    description: e.name,
    ...(e.is_active ? {} : { note: t('entities.inactiveNote'), disabled: !linked.includes(e.code) }),
  }));
}

/** "a, b, c" as a list of names, blanks left out. */
export function splitNames(text: string): string[] {
  return text.split(',').map((n) => n.trim()).filter((n) => n !== '');
}
