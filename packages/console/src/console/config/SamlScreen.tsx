/**
 * SAML settings (permission config.manage): where the settings in force come from, the form that
 * changes them (SamlForm.tsx; both through POST /api/v1/auth/saml/config, without a body to read,
 * with `?include_certificate=true` so that the form holds the IdP certificates as PEM), and this
 * service's metadata to load into the IdP: a download of GET /api/v1/auth/saml/metadata (public,
 * the XML itself).
 */
import { useState } from 'react';
import { Heading, Link } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { ErrorNotice, Notice } from '../../ui/forms.js';
import { SAML_CONFIG } from './saml-draft.js';
import { SamlForm } from './SamlForm.js';
import type { SamlView } from './types.js';

const METADATA = '/api/v1/auth/saml/metadata';

function Source({ view }: { view: SamlView }) {
  const { t } = useI18n();
  if (!view.configured) return <Notice>{t('config.edit.saml.notConfigured')}</Notice>;
  if (view.source === 'environment') return <p className="notice notice-info">{t('config.edit.saml.fromEnvironment')}</p>;
  return <p>{t('config.edit.saml.fromDatabase')}</p>;
}

export function SamlScreen() {
  const { t } = useI18n();
  const read = useApi<SamlView>(`${SAML_CONFIG}?include_certificate=true`, { method: 'POST', body: {} });
  const [saved, setSaved] = useState(false);
  const v = read.data;
  const onSaved = () => {
    setSaved(true);
    read.reload();
  };
  return (
    <>
      <Heading level={1}>{t('config.nav.saml')}</Heading>
      <p>{t('config.edit.saml.intro')}</p>
      <ErrorNotice error={read.error} />
      {saved ? <p className="notice notice-success" role="status">{t('config.edit.saml.saved')}</p> : null}
      {!v && !read.error ? <p>{t('common.loading')}</p> : null}
      {v ? <Source view={v} /> : null}
      {v?.configured ? (
        <section className="card" aria-labelledby="saml-metadata-heading">
          <Heading level={2} id="saml-metadata-heading">{t('config.saml.metadata')}</Heading>
          <p>{t('config.saml.metadataIntro')}</p>
          <Link className="button button-primary" href={METADATA} download="strongroom-sp-metadata.xml">{t('config.saml.download')}</Link>
        </section>
      ) : null}
      {v ? (
        <>
          <Heading level={2}>{t('config.edit.saml.heading')}</Heading>
          <SamlForm view={v} onSaved={onSaved} />
        </>
      ) : null}
    </>
  );
}
