/**
 * One user: what the directory holds, and what the operator's permissions allow: change them,
 * unlock, disable, enable, delete; reset their password or PIN; their second factors, passkeys
 * and sessions.
 */
import { useState } from 'react';
import { Heading, Link } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { ErrorNotice, Notice } from '../../ui/forms.js';
import type { AdminUser } from './types.js';
import { UserActions } from './UserActions.js';
import { UserCredentials } from './UserCredentials.js';
import { UserDetails } from './UserDetails.js';
import { UserEditForm } from './UserEditForm.js';
import { UserFactors } from './UserFactors.js';
import { UserPasskeys } from './UserPasskeys.js';
import { UserSessions } from './UserSessions.js';

export function UserScreen({ id }: { id: string }) {
  const { t } = useI18n();
  const { can } = useSession();
  const href = useHref();
  const read = useApi<{ user: AdminUser }>(`/api/v1/admin/users/${encodeURIComponent(id)}`);
  const [changed, setChanged] = useState<AdminUser | null>(null);
  const user = changed?.id === id ? changed : read.data?.user ?? null;
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  // Sessions and passkeys are read again after a change that may end them.
  const [version, setVersion] = useState(0);

  const onChanged = (next: AdminUser, message: string) => {
    setChanged(next);
    setDone(message);
    setEditing(false);
    setVersion((v) => v + 1);
  };
  const live = user !== null && user.status !== 'deleted';

  return (
    <>
      <p><Link href={href('users')}>{t('user.back')}</Link></p>
      <Heading level={1}>{user ? user.username : read.error ? t('users.title') : t('common.loading')}</Heading>
      <ErrorNotice error={error ?? read.error} />
      {done ? <Notice>{done}</Notice> : null}
      {user ? (
        <>
          <UserDetails user={user} />
          {editing && live ? (
            <UserEditForm user={user} onCancel={() => setEditing(false)} onSaved={(u, ended) => onChanged(u, t('users.edit.saved', { count: ended }))} />
          ) : <UserActions user={user} onEdit={() => { setDone(null); setEditing(true); }} onChanged={onChanged} onError={setError} />}
          {live && can('users.update') ? <UserCredentials user={user} onReset={() => { setChanged({ ...user, must_change_password: true }); setVersion((v) => v + 1); }} /> : null}
          <UserFactors key={`factors-${version}`} id={user.id} username={user.username} />
          <UserPasskeys key={`passkeys-${version}`} id={user.id} username={user.username} />
          <UserSessions key={`sessions-${version}`} id={user.id} username={user.username} />
        </>
      ) : null}
    </>
  );
}
