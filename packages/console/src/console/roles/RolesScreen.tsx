/**
 * Roles (permission roles.read): every role with what it is for, whether it is built in, how many
 * permissions it grants and how many users hold it; a new role (roles.manage) from the permissions.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref, useRouter } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice } from '../../ui/forms.js';
import { RoleForm } from './RoleForm.js';
import type { Permission, Role } from './types.js';

export function RolesScreen() {
  const { t, language } = useI18n();
  const { can } = useSession();
  const href = useHref();
  const { navigate } = useRouter();
  const list = useApi<{ roles: Role[] }>('/api/v1/admin/roles');
  const permissions = useApi<{ permissions: Permission[] }>('/api/v1/admin/permissions');
  const [creating, setCreating] = useState(false);
  const roles = list.data?.roles ?? null;

  return (
    <>
      <div className="screen-head">
        <Heading level={1}>{t('roles.title')}</Heading>
        {can('roles.manage') && !creating ? <Button onPress={() => setCreating(true)}>{t('roles.new')}</Button> : null}
      </div>
      <ErrorNotice error={list.error ?? permissions.error} />
      {creating && permissions.data ? (
        <RoleForm permissions={permissions.data.permissions} onCancel={() => setCreating(false)} onSaved={(role) => navigate(href('roles', role.name))} />
      ) : null}
      <Table aria-label={t('roles.title')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('roles.name')}</Column>
          <Column>{t('roles.description')}</Column>
          <Column>{t('roles.builtIn')}</Column>
          <Column>{t('roles.permissionCount')}</Column>
          <Column>{t('roles.holders')}</Column>
        </TableHeader>
        <TableBody items={roles ?? []} dependencies={[language]} renderEmptyState={() => (roles ? t('roles.none') : t('common.loading'))}>
          {(r) => (
            <Row id={r.name} href={href('roles', r.name)}>
              <Cell>{r.name}</Cell>
              <Cell>{r.description}</Cell>
              <Cell>{r.built_in ? t('common.yes') : t('common.no')}</Cell>
              <Cell>{r.permissions.length}</Cell>
              <Cell>{r.holders}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
    </>
  );
}
