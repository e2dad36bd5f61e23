/** Your profile, as GET /api/v1/auth/profile answers it (personal data: the answer comes encrypted). */
import { Heading } from 'react-aria-components';
import { LANGUAGE_NAMES, useI18n, type Language } from '../lib/i18n.js';
import { useApi } from '../lib/data.js';
import { ErrorNotice } from '../ui/forms.js';

interface Profile {
  id: string;
  username: string;
  full_name: string | null;
  email: string | null;
  phone: string | null;
  language: Language;
  date_of_birth: string | null;
  managed_by: 'LDAP' | 'SAML' | null;
}

export function ProfileScreen() {
  const { t } = useI18n();
  const { data, error } = useApi<{ profile: Profile }>('/api/v1/auth/profile');
  const profile = data?.profile;
  return (
    <>
      <Heading level={1}>{t('nav.profile')}</Heading>
      <ErrorNotice error={error} />
      {profile ? (
        <dl className="facts">
          <dt>{t('users.username')}</dt><dd>{profile.username}</dd>
          <dt>{t('users.fullName')}</dt><dd>{profile.full_name ?? '—'}</dd>
          <dt>{t('users.email')}</dt><dd>{profile.email ?? '—'}</dd>
          <dt>{t('users.phone')}</dt><dd>{profile.phone ?? '—'}</dd>
          <dt>{t('profile.language')}</dt><dd>{LANGUAGE_NAMES[profile.language] ?? profile.language}</dd>
          <dt>{t('profile.dateOfBirth')}</dt><dd>{profile.date_of_birth ?? '—'}</dd>
          <dt>{t('profile.managedBy')}</dt><dd>{profile.managed_by ?? t('profile.local')}</dd>
        </dl>
      ) : error ? null : <p>{t('common.loading')}</p>}
    </>
  );
}
