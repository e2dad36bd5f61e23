/**
 * A user's passkeys (GET /api/v1/admin/users/{id}/passkeys, users.read), and deleting one for a
 * lost or stolen device (DELETE .../passkeys/{passkey_id}, users.update, after a confirmation).
 * The administration API says nothing of the user's other second factors.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';

interface Passkey {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  suspended_at: string | null;
  device_type: 'singleDevice' | 'multiDevice';
}

export function UserPasskeys({ id, username }: { id: string; username: string }) {
  const { t, language, when } = useI18n();
  const { call, can } = useSession();
  const path = `/api/v1/admin/users/${encodeURIComponent(id)}/passkeys`;
  const list = useApi<{ passkeys: Passkey[] }>(path);
  const passkeys = list.data?.passkeys ?? null;
  const [deleting, setDeleting] = useState<Passkey | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const mayDelete = can('users.update');

  const remove = async (p: Passkey) => {
    const r = await call<{ passkeys_left: number }>('DELETE', `${path}/${encodeURIComponent(p.id)}`);
    setDone(t('users.passkeys.deleted', { name: p.name, count: r.passkeys_left }));
    list.reload();
  };

  return (
    <section aria-labelledby="passkeys-heading">
      <Heading level={2} id="passkeys-heading">{t('users.passkeys.heading')}</Heading>
      <ErrorNotice error={list.error} />
      {done ? <Notice>{done}</Notice> : null}
      <Table aria-label={t('users.passkeys.of', { username })} className="table">
        <TableHeader>
          <Column isRowHeader>{t('users.passkeys.name')}</Column>
          <Column>{t('users.passkeys.kind')}</Column>
          <Column>{t('users.passkeys.added')}</Column>
          <Column>{t('users.passkeys.lastUsed')}</Column>
          <Column>{t('userSessions.action')}</Column>
        </TableHeader>
        <TableBody items={passkeys ?? []} dependencies={[language, mayDelete]} renderEmptyState={() => (passkeys ? t('users.passkeys.none') : t('common.loading'))}>
          {(p) => (
            <Row id={p.id}>
              <Cell>{p.name}{p.suspended_at ? ` (${t('users.passkeys.suspended')})` : ''}</Cell>
              <Cell>{p.device_type === 'multiDevice' ? t('users.passkeys.synced') : t('users.passkeys.device')}</Cell>
              <Cell>{when(p.created_at)}</Cell>
              <Cell>{when(p.last_used_at)}</Cell>
              <Cell>{mayDelete ? <Button variant="danger" onPress={() => setDeleting(p)} aria-label={t('users.passkeys.deleteOne', { name: p.name })}>{t('users.passkeys.delete')}</Button> : '—'}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {deleting ? (
        <ConfirmDialog
          title={t('users.passkeys.confirm', { name: deleting.name })}
          allows={t('users.passkeys.allows', { username, name: deleting.name })}
          confirmLabel={t('users.passkeys.delete')}
          variant="danger"
          onConfirm={() => remove(deleting)}
          onClose={() => setDeleting(null)}
        />
      ) : null}
    </section>
  );
}
