/**
 * A user's account actions, as the operator's permissions allow: change (users.update), unlock,
 * disable and enable (users.update), delete (users.delete, after a confirmation saying what it does).
 */
import { useState } from 'react';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import type { AdminUser } from './types.js';

interface Props {
  user: AdminUser;
  onEdit(): void;
  /** The user as a change left them, and what to say. */
  onChanged(user: AdminUser, message: string): void;
  onError(err: unknown): void;
}

export function UserActions({ user, onEdit, onChanged, onError }: Props) {
  const { t } = useI18n();
  const { call, can } = useSession();
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const path = `/api/v1/admin/users/${encodeURIComponent(user.id)}`;
  if (user.status === 'deleted') return null;

  const act = (message: string, run: () => Promise<{ user: AdminUser }>) => async () => {
    setBusy(true);
    onError(null);
    try {
      onChanged((await run()).user, message);
    } catch (err) {
      onError(err);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    const r = await call<{ user: AdminUser; sessions_ended: number }>('DELETE', path);
    onChanged(r.user, t('users.delete.done', { username: user.username, count: r.sessions_ended }));
  };

  return (
    <div className="actions">
      {can('users.update') ? (
        <>
          <Button variant="secondary" onPress={onEdit}>{t('users.edit.open')}</Button>
          {user.status === 'locked' ? <Button isPending={busy} onPress={act(t('user.unlocked'), () => call('POST', `${path}/unlock`, {}))}>{t('user.unlock')}</Button> : null}
          {user.is_active
            ? <Button variant="danger" isPending={busy} onPress={act(t('user.disabled'), () => call('PATCH', path, { active: false }))}>{t('user.disable')}</Button>
            : <Button isPending={busy} onPress={act(t('user.enabled'), () => call('PATCH', path, { active: true }))}>{t('user.enable')}</Button>}
        </>
      ) : null}
      {can('users.delete') ? <Button variant="danger" onPress={() => setDeleting(true)}>{t('users.delete.open')}</Button> : null}
      {deleting ? (
        <ConfirmDialog
          title={t('users.delete.title', { username: user.username })}
          allows={t('users.delete.allows', { username: user.username })}
          confirmLabel={t('users.delete.confirm')}
          variant="danger"
          onConfirm={remove}
          onClose={() => setDeleting(false)}
        />
      ) : null}
    </div>
  );
}
