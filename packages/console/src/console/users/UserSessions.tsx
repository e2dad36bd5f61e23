/**
 * On a user's page: their active sessions (GET /api/v1/admin/users/{id}/sessions, permission
 * users.read), ending one (DELETE .../sessions/{session_id}) or all (DELETE .../sessions), both
 * users.update; and their device bindings (permission devices.manage), approved or revoked there.
 */
import { useState } from 'react';
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import { DeviceBindingList } from '../approvals/DeviceBindingsScreen.js';

interface AdminSession {
  session_id: string;
  channel: string;
  created_at: string;
  last_activity: string;
  expires_at: string;
  idle_expires_at: string;
  mfa_completed: boolean;
  device_tag: string | null;
  user_agent: string;
}

/** One session, or all of them (null). */
type Ending = AdminSession | null;

export function UserSessions({ id, username }: { id: string; username: string }) {
  const { t, language, when } = useI18n();
  const { call, can } = useSession();
  const path = `/api/v1/admin/users/${encodeURIComponent(id)}/sessions`;
  const list = useApi<{ sessions: AdminSession[] }>(path);
  const sessions = list.data?.sessions ?? null;
  const [ending, setEnding] = useState<Ending | undefined>(undefined);
  const [done, setDone] = useState<string | null>(null);
  const mayEnd = can('users.update');

  const end = async (which: Ending) => {
    const r = await call<{ sessions_ended: string[] }>('DELETE', which ? `${path}/${encodeURIComponent(which.session_id)}` : path);
    setDone(t('userSessions.ended', { count: r.sessions_ended.length }));
    list.reload();
  };

  return (
    <>
      <Heading level={2}>{t('userSessions.heading')}</Heading>
      <ErrorNotice error={list.error} />
      {done ? <Notice>{done}</Notice> : null}
      <Table aria-label={t('userSessions.of', { username })} className="table">
        <TableHeader>
          <Column isRowHeader>{t('userSessions.device')}</Column>
          <Column>{t('userSessions.channel')}</Column>
          <Column>{t('userSessions.started')}</Column>
          <Column>{t('userSessions.lastActivity')}</Column>
          <Column>{t('userSessions.secondFactor')}</Column>
          <Column>{t('userSessions.action')}</Column>
        </TableHeader>
        <TableBody items={sessions ?? []} dependencies={[language, mayEnd]} renderEmptyState={() => (sessions ? t('userSessions.none') : t('common.loading'))}>
          {(s) => (
            <Row id={s.session_id}>
              <Cell>{s.user_agent || '—'}</Cell>
              <Cell>{s.channel}</Cell>
              <Cell>{when(s.created_at)}</Cell>
              <Cell>{when(s.last_activity)}</Cell>
              <Cell>{s.mfa_completed ? t('common.yes') : t('common.no')}</Cell>
              <Cell>{mayEnd ? <Button variant="danger" onPress={() => setEnding(s)} aria-label={t('userSessions.endOne', { started: when(s.created_at) })}>{t('userSessions.end')}</Button> : '—'}</Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {mayEnd && sessions && sessions.length > 0 ? <Button variant="danger" onPress={() => setEnding(null)}>{t('userSessions.endAll')}</Button> : null}
      {ending !== undefined ? (
        <ConfirmDialog
          title={ending ? t('userSessions.confirmOne') : t('userSessions.confirmAll')}
          allows={ending ? t('userSessions.allowsOne', { username, device: ending.user_agent || '—', started: when(ending.created_at) }) : t('userSessions.allowsAll', { username })}
          confirmLabel={ending ? t('userSessions.end') : t('userSessions.endAll')}
          variant="danger"
          onConfirm={() => end(ending)}
          onClose={() => setEnding(undefined)}
        />
      ) : null}
      {can('devices.manage') ? (
        <>
          <Heading level={2}>{t('userSessions.devices')}</Heading>
          <DeviceBindingList userId={id} label={t('userSessions.devicesOf', { username })} />
        </>
      ) : null}
    </>
  );
}
