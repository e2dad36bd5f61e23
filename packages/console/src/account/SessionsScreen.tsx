/** Your sessions (GET /api/v1/auth/sessions): where you are signed in, and ending any of them. */
import { useState } from 'react';
import { Cell, Column, Heading, Row, Table, TableBody, TableHeader } from 'react-aria-components';
import { useApi } from '../lib/data.js';
import { useI18n } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { Button, ErrorNotice, Notice } from '../ui/forms.js';

interface OwnSession {
  session_id: string;
  channel: string;
  created_at: string;
  last_activity: string;
  expires_at: string;
  user_agent: string;
  current: boolean;
}

export function SessionsScreen() {
  const { t, language, when } = useI18n();
  const { call, signOut } = useSession();
  const list = useApi<{ sessions: OwnSession[] }>('/api/v1/auth/sessions');
  const sessions = list.data?.sessions ?? null;
  const [error, setError] = useState<unknown>(null);
  const [ended, setEnded] = useState(false);

  const end = (s: OwnSession) => async () => {
    if (s.current) return signOut();
    setError(null);
    try {
      await call('DELETE', `/api/v1/auth/sessions/${encodeURIComponent(s.session_id)}`);
      setEnded(true);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <>
      <Heading level={1}>{t('nav.sessions')}</Heading>
      <p>{t('sessions.intro')}</p>
      <ErrorNotice error={error ?? list.error} />
      {ended ? <Notice>{t('sessions.ended')}</Notice> : null}
      <Table aria-label={t('nav.sessions')} className="table">
        <TableHeader>
          <Column isRowHeader>{t('sessions.device')}</Column>
          <Column>{t('sessions.channel')}</Column>
          <Column>{t('sessions.started')}</Column>
          <Column>{t('sessions.lastActivity')}</Column>
          <Column>{t('sessions.action')}</Column>
        </TableHeader>
        <TableBody items={sessions ?? []} dependencies={[language]} renderEmptyState={() => (sessions ? t('sessions.none') : t('common.loading'))}>
          {(s) => (
            <Row id={s.session_id}>
              <Cell>{s.user_agent || '—'}{s.current ? <> <span className="badge badge-active">{t('sessions.this')}</span></> : null}</Cell>
              <Cell>{s.channel}</Cell>
              <Cell>{when(s.created_at)}</Cell>
              <Cell>{when(s.last_activity)}</Cell>
              <Cell>
                <Button variant={s.current ? 'secondary' : 'danger'} onPress={end(s)} aria-label={s.current ? t('shell.signOut') : t('sessions.endOne', { started: when(s.created_at) })}>
                  {s.current ? t('shell.signOut') : t('sessions.end')}
                </Button>
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
    </>
  );
}
