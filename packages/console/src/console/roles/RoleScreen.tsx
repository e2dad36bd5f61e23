/**
 * One role (permission roles.read): what it is for, whether it is built in, its holders, and each
 * permission it grants with what that allows. With roles.manage: change it, or delete it after a
 * confirmation (the API refuses a built-in role, and one that users hold or a setting names).
 */
import { useState } from 'react';
import { Heading, Link } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import { RoleForm } from './RoleForm.js';
import type { Permission, Role } from './types.js';

export function RoleScreen({ name }: { name: string }) {
  const { t } = useI18n();
  const { call, can } = useSession();
  const href = useHref();
  const read = useApi<Role>(`/api/v1/admin/roles/${encodeURIComponent(name)}`);
  const permissions = useApi<{ permissions: Permission[] }>('/api/v1/admin/permissions');
  const [changed, setChanged] = useState<Role | null>(null);
  const [deleted, setDeleted] = useState(false);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const role = changed?.name === name ? changed : read.data ?? null;
  const described = new Map((permissions.data?.permissions ?? []).map((p) => [p.name, p.description]));

  const remove = async () => {
    await call('DELETE', `/api/v1/admin/roles/${encodeURIComponent(name)}`);
    setDeleted(true);
    setDone(t('roles.deleted', { name }));
  };

  return (
    <>
      <p><Link href={href('roles')}>{t('roles.back')}</Link></p>
      <Heading level={1}>{t('roles.roleTitle', { name })}</Heading>
      <ErrorNotice error={read.error ?? permissions.error} />
      {done ? <Notice>{done}</Notice> : null}
      {role && !deleted ? (
        <>
          <dl className="facts">
            <dt>{t('roles.description')}</dt><dd>{role.description}</dd>
            <dt>{t('roles.builtIn')}</dt><dd>{role.built_in ? t('roles.builtInYes') : t('common.no')}</dd>
            <dt>{t('roles.holders')}</dt><dd>{role.holders}</dd>
          </dl>
          {editing && permissions.data ? (
            <RoleForm role={role} permissions={permissions.data.permissions} onCancel={() => setEditing(false)}
              onSaved={(r, out) => { setChanged(r); setEditing(false); setDone(t('roles.saved', { count: out })); }} />
          ) : null}
          {can('roles.manage') && !editing ? (
            <div className="actions">
              <Button variant="secondary" onPress={() => { setDone(null); setEditing(true); }}>{t('roles.edit')}</Button>
              {role.built_in ? null : <Button variant="danger" onPress={() => setDeleting(true)}>{t('roles.delete')}</Button>}
            </div>
          ) : null}
          <Heading level={2}>{t('roles.grants')}</Heading>
          {role.permissions.length === 0 ? <p>{t('roles.noPermissions')}</p> : (
            <dl className="facts permission-list">
              {role.permissions.map((p) => <PermissionFact key={p} name={p} description={described.get(p)} />)}
            </dl>
          )}
        </>
      ) : null}
      {deleting && role ? (
        <ConfirmDialog title={t('roles.deleteTitle', { name })} allows={t('roles.deleteAllows', { name, holders: role.holders })} confirmLabel={t('roles.delete')}
          variant="danger" onConfirm={remove} onClose={() => setDeleting(false)} />
      ) : null}
    </>
  );
}

function PermissionFact({ name, description }: { name: string; description: string | undefined }) {
  return <><dt><code>{name}</code></dt><dd>{description ?? '—'}</dd></>;
}
