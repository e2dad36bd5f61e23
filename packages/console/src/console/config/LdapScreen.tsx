/**
 * Directory (LDAP) settings (permission config.manage): the settings in force and where they come
 * from (POST /api/v1/auth/ldap/config without a body: never the bind password, only whether one
 * is set), and the connection test (LdapTest.tsx).
 */
import { Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { ErrorNotice, Notice } from '../../ui/forms.js';
import { LdapTest } from './LdapTest.js';
import { usePostRead } from './read.js';
import type { LdapView } from './types.js';

function GroupRoles({ map }: { map: Record<string, string[]> }) {
  const { t } = useI18n();
  const entries = Object.entries(map);
  if (entries.length === 0) return <>{t('config.none')}</>;
  return <ul className="plain-list">{entries.map(([group, roles]) => <li key={group}><code>{group}</code> → {roles.join(', ')}</li>)}</ul>;
}

export function LdapScreen() {
  const { t } = useI18n();
  const read = usePostRead<LdapView>('/api/v1/auth/ldap/config');
  const v = read.data;
  const text = (value: string | null) => (value ? <code>{value}</code> : '—');
  return (
    <>
      <Heading level={1}>{t('config.nav.ldap')}</Heading>
      <p>{t('config.ldap.intro')}</p>
      <ErrorNotice error={read.error} />
      {!v && !read.error ? <p>{t('common.loading')}</p> : null}
      {v && !v.configured ? <Notice>{t('config.ldap.notConfigured')}</Notice> : null}
      {v?.configured ? (
        <>
          <Heading level={2}>{t('config.inForce')}</Heading>
          <dl className="facts" aria-label={t('config.inForce')}>
            <dt>{t('config.source')}</dt><dd>{t(v.source === 'database' ? 'config.source.database' : 'config.source.environment')}</dd>
            <dt>{t('config.ldap.uri')}</dt><dd>{text(v.uri)}</dd>
            <dt>{t('config.ldap.startTls')}</dt><dd>{v.start_tls ? t('common.yes') : t('common.no')}</dd>
            <dt>{t('config.ldap.ca')}</dt><dd>{v.ca_cert ? t('config.ldap.caOwn') : t('config.ldap.caSystem')}</dd>
            <dt>{t('config.ldap.bindDn')}</dt><dd>{text(v.bind_dn)}</dd>
            <dt>{t('config.ldap.bindPassword')}</dt><dd>{v.bind_password_set ? t('config.ldap.passwordSet') : t('config.ldap.passwordMissing')}</dd>
            <dt>{t('config.ldap.baseDn')}</dt><dd>{text(v.base_dn)}</dd>
            <dt>{t('config.ldap.userFilter')}</dt><dd>{text(v.user_filter)}</dd>
            <dt>{t('config.ldap.attributes')}</dt><dd>{[v.attr_mail, v.attr_name, v.group_member_attr].map((a) => a || '—').join(' · ')}</dd>
            <dt>{t('config.ldap.groupsBaseDn')}</dt><dd>{text(v.groups_base_dn)}</dd>
            <dt>{t('config.ldap.groupRoles')}</dt><dd><GroupRoles map={v.group_roles} /></dd>
          </dl>
          <p className="description">{t('config.ldap.howToChange')}</p>
          <LdapTest />
        </>
      ) : null}
    </>
  );
}
