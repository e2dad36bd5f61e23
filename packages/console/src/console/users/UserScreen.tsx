/** One user: what the directory holds, and the actions the operator's permissions allow (unlock, disable, enable). */
import { useState } from 'react';
import { Heading, Link } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Notice } from '../../ui/forms.js';
import type { AdminUser } from './types.js';
import { UserSessions } from './UserSessions.js';

export function UserScreen({ id }: { id: string }) {
  const { t, when } = useI18n();
  const { call, can } = useSession();
  const href = useHref();
  const path = `/api/v1/admin/users/${encodeURIComponent(id)}`;
  const read = useApi<{ user: AdminUser }>(path);
  const [changed, setChanged] = useState<AdminUser | null>(null);
  const user = changed?.id === id ? changed : read.data?.user ?? null;
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const act = (message: string, run: () => Promise<{ user: AdminUser }>) => async () => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setChanged((await run()).user);
      setDone(message);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <p><Link href={href('users')}>{t('user.back')}</Link></p>
      <Heading level={1}>{user ? user.username : read.error ? t('users.title') : t('common.loading')}</Heading>
      <ErrorNotice error={error ?? read.error} />
      {done ? <Notice>{done}</Notice> : null}
      {user ? (
        <>
          <dl className="facts">
            <dt>{t('users.fullName')}</dt><dd>{user.full_name ?? '—'}</dd>
            <dt>{t('users.email')}</dt><dd>{user.email ?? '—'}</dd>
            <dt>{t('users.phone')}</dt><dd>{user.phone ?? '—'}</dd>
            <dt>{t('users.roles')}</dt><dd>{user.roles.join(', ')}</dd>
            <dt>{t('user.branches')}</dt><dd>{user.entities.length > 0 ? user.entities.join(', ') : '—'}</dd>
            <dt>{t('users.status')}</dt><dd><span className={`badge badge-${user.status}`}>{t(`status.${user.status}`)}</span>{user.locked_until ? ` ${t('user.lockedUntil', { when: when(user.locked_until) })}` : ''}</dd>
            <dt>{t('user.mustChange')}</dt><dd>{user.must_change_password ? t('common.yes') : t('common.no')}</dd>
            <dt>{t('user.lastSignIn')}</dt><dd>{when(user.last_login_at)}</dd>
            <dt>{t('user.created')}</dt><dd>{when(user.created_at)}</dd>
          </dl>
          {can('users.update') && user.status !== 'deleted' ? (
            <div className="actions">
              {user.status === 'locked' ? <Button isPending={busy} onPress={act(t('user.unlocked'), () => call('POST', `${path}/unlock`, {}))}>{t('user.unlock')}</Button> : null}
              {user.is_active
                ? <Button variant="danger" isPending={busy} onPress={act(t('user.disabled'), () => call('PATCH', path, { active: false }))}>{t('user.disable')}</Button>
                : <Button isPending={busy} onPress={act(t('user.enabled'), () => call('PATCH', path, { active: true }))}>{t('user.enable')}</Button>}
            </div>
          ) : null}
          <UserSessions id={user.id} username={user.username} />
        </>
      ) : null}
    </>
  );
}
