/**
 * Device bindings (permission devices.manage): the queue of devices waiting for approval
 * (GET /api/v1/admin/device-bindings?status=pending), each with who asked, from which device, on
 * which channel and when; approving (POST .../{id}/approve) lets that device sign in as the user
 * on a channel that accepts only bound devices, revoking (POST .../{id}/revoke) refuses it and
 * ends the user's sessions on it. The same list, for one user, is on the user's page.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Link, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from './ConfirmDialog.js';

export interface DeviceBinding {
  id: string;
  user_id: string;
  username: string;
  label: string;
  channel: string;
  status: 'pending' | 'approved' | 'revoked';
  requested_at: string;
  decided_at: string | null;
  decided_by: string | null;
}

interface Page {
  bindings: DeviceBinding[];
  total: number;
  page: number;
  page_size: number;
}

const PAGE_SIZE = 20;

interface Deciding {
  binding: DeviceBinding;
  decision: 'approve' | 'revoke';
}

/** Bindings as a table with their decisions: the pending queue, or one user's (`userId`). */
export function DeviceBindingList({ userId, label }: { userId?: string; label: string }) {
  const { t, language, when } = useI18n();
  const { call } = useSession();
  const href = useHref();
  const [page, setPage] = useState(1);
  const q = new URLSearchParams({ page: String(page), page_size: String(PAGE_SIZE) });
  if (userId) q.set('user_id', userId);
  else q.set('status', 'pending');
  const list = useApi<Page>(`/api/v1/admin/device-bindings?${q}`);
  const [deciding, setDeciding] = useState<Deciding | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const bindings = list.data?.bindings ?? null;
  const pages = list.data ? Math.max(1, Math.ceil(list.data.total / PAGE_SIZE)) : 1;

  const decide = async ({ binding, decision }: Deciding) => {
    await call('POST', `/api/v1/admin/device-bindings/${encodeURIComponent(binding.id)}/${decision}`, {});
    setDone(decision === 'approve' ? t('approvals.bindings.approved') : t('approvals.bindings.revoked'));
    list.reload();
  };
  const facts = (b: DeviceBinding) => ({ device: b.label || '—', username: b.username, channel: b.channel });

  return (
    <>
      <ErrorNotice error={list.error} />
      {done ? <Notice>{done}</Notice> : null}
      <Table aria-label={label} className="table">
        <TableHeader>
          <Column isRowHeader>{t('approvals.bindings.device')}</Column>
          <Column>{t('approvals.bindings.user')}</Column>
          <Column>{t('approvals.bindings.channel')}</Column>
          <Column>{t('approvals.bindings.requested')}</Column>
          <Column>{t('approvals.bindings.status')}</Column>
          <Column>{t('approvals.bindings.action')}</Column>
        </TableHeader>
        <TableBody items={bindings ?? []} dependencies={[language]} renderEmptyState={() => (bindings ? t(userId ? 'approvals.bindings.noneForUser' : 'approvals.bindings.none') : t('common.loading'))}>
          {(b) => (
            <Row id={b.id}>
              <Cell>{b.label || '—'}</Cell>
              <Cell><Link href={href('users', b.user_id)}>{b.username}</Link></Cell>
              <Cell>{b.channel}</Cell>
              <Cell>{when(b.requested_at)}</Cell>
              <Cell>{t(`approvals.bindingStatus.${b.status}`)}{b.decided_at ? ` (${when(b.decided_at)})` : ''}</Cell>
              <Cell>
                <div className="row-actions">
                  {b.status !== 'approved' ? <Button onPress={() => setDeciding({ binding: b, decision: 'approve' })} aria-label={t('approvals.bindings.approveOne', facts(b))}>{t('approvals.bindings.approve')}</Button> : null}
                  {b.status !== 'revoked' ? <Button variant="danger" onPress={() => setDeciding({ binding: b, decision: 'revoke' })} aria-label={t(b.status === 'pending' ? 'approvals.bindings.refuseOne' : 'approvals.bindings.revokeOne', facts(b))}>{t(b.status === 'pending' ? 'approvals.bindings.refuse' : 'approvals.bindings.revoke')}</Button> : null}
                </div>
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {pages > 1 ? (
        <div className="actions">
          <Button variant="secondary" isDisabled={page <= 1} onPress={() => setPage(page - 1)}>{t('approvals.previous')}</Button>
          <span>{t('approvals.pageOf', { page, pages })}</span>
          <Button variant="secondary" isDisabled={page >= pages} onPress={() => setPage(page + 1)}>{t('approvals.next')}</Button>
        </div>
      ) : null}
      {deciding ? (
        <ConfirmDialog
          title={deciding.decision === 'approve' ? t('approvals.bindings.confirmApprove') : t('approvals.bindings.confirmRevoke')}
          allows={t(deciding.decision === 'approve' ? 'approvals.bindings.allowsApprove' : 'approvals.bindings.allowsRevoke', { ...facts(deciding.binding), when: when(deciding.binding.requested_at) })}
          confirmLabel={deciding.decision === 'approve' ? t('approvals.bindings.approve') : t(deciding.binding.status === 'pending' ? 'approvals.bindings.refuse' : 'approvals.bindings.revoke')}
          variant={deciding.decision === 'approve' ? 'primary' : 'danger'}
          onConfirm={() => decide(deciding)}
          onClose={() => setDeciding(null)}
        />
      ) : null}
    </>
  );
}

export function DeviceBindingsScreen() {
  const { t } = useI18n();
  return (
    <>
      <Heading level={1}>{t('approvals.nav.deviceBindings')}</Heading>
      <p>{t('approvals.bindings.intro')}</p>
      <DeviceBindingList label={t('approvals.bindings.queue')} />
    </>
  );
}
