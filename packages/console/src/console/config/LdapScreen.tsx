/**
 * Directory (LDAP) settings (permission config.manage): where the settings in force come from
 * (POST /api/v1/auth/ldap/config without a body: never the bind password, only whether one is
 * set), the form that changes them (LdapForm.tsx: the same route with a body), and the connection
 * test (LdapTest.tsx), offered at once after a save.
 */
import { useState } from 'react';
import { Heading } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { Button, ErrorNotice, Notice } from '../../ui/forms.js';
import { LDAP_CONFIG } from './ldap-draft.js';
import { LdapForm } from './LdapForm.js';
import { LdapTest, useLdapTest } from './LdapTest.js';
import type { LdapView } from './types.js';

function Source({ view }: { view: LdapView }) {
  const { t } = useI18n();
  if (!view.configured) return <Notice>{t('config.edit.ldap.notConfigured')}</Notice>;
  if (view.source === 'environment') return <p className="notice notice-info">{t('config.edit.ldap.fromEnvironment')}</p>;
  return <p>{t('config.edit.ldap.fromDatabase')}</p>;
}

export function LdapScreen() {
  const { t } = useI18n();
  const read = useApi<LdapView>(LDAP_CONFIG, { method: 'POST', body: {} });
  const test = useLdapTest();
  const [saved, setSaved] = useState(false);
  const v = read.data;
  const onSaved = () => {
    setSaved(true);
    read.reload();
  };
  return (
    <>
      <Heading level={1}>{t('config.nav.ldap')}</Heading>
      <p>{t('config.edit.ldap.intro')}</p>
      <ErrorNotice error={read.error} />
      {saved ? (
        <div className="notice notice-success" role="status">
          <p>{t('config.edit.ldap.saved')}</p>
          <Button onPress={() => void test.run()} isPending={test.busy}>{t('config.edit.ldap.testNow')}</Button>
        </div>
      ) : null}
      {!v && !read.error ? <p>{t('common.loading')}</p> : null}
      {v ? (
        <>
          <Source view={v} />
          {v.configured ? <LdapTest test={test} /> : null}
          <Heading level={2}>{t('config.edit.ldap.heading')}</Heading>
          <LdapForm view={v} onSaved={onSaved} />
        </>
      ) : null}
    </>
  );
}
