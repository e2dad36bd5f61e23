/** What the directory holds about a user, as GET /api/v1/admin/users/{id} answers it. */
import { useI18n } from '../../lib/i18n.js';
import type { AdminUser } from './types.js';

const LANGUAGES: Record<string, string> = { en: 'English', pt: 'Português', fr: 'Français' };

export function UserDetails({ user }: { user: AdminUser }) {
  const { t, when } = useI18n();
  return (
    <dl className="facts">
      <dt>{t('users.fullName')}</dt><dd>{user.full_name ?? '—'}</dd>
      <dt>{t('users.email')}</dt><dd>{user.email ?? '—'}</dd>
      <dt>{t('users.phone')}</dt><dd>{user.phone ?? '—'}</dd>
      <dt>{t('users.edit.language')}</dt><dd>{user.language ? LANGUAGES[user.language] ?? user.language : t('users.edit.languageDefault')}</dd>
      <dt>{t('users.roles')}</dt><dd>{user.roles.join(', ')}</dd>
      <dt>{t('user.branches')}</dt><dd>{user.entities.length > 0 ? user.entities.join(', ') : '—'}</dd>
      <dt>{t('users.status')}</dt><dd><span className={`badge badge-${user.status}`}>{t(`status.${user.status}`)}</span>{user.locked_until ? ` ${t('user.lockedUntil', { when: when(user.locked_until) })}` : ''}</dd>
      <dt>{t('user.mustChange')}</dt><dd>{user.must_change_password ? t('common.yes') : t('common.no')}</dd>
      <dt>{t('user.lastSignIn')}</dt><dd>{when(user.last_login_at)}</dd>
      <dt>{t('user.created')}</dt><dd>{when(user.created_at)}</dd>
      {user.deleted_at ? <><dt>{t('users.deletedAt')}</dt><dd>{when(user.deleted_at)}</dd></> : null}
    </dl>
  );
}
