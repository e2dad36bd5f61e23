/**
 * SAML settings (permission config.manage): the settings in force and where they come from
 * (POST /api/v1/auth/saml/config without a body: the IdP certificates described, never returned),
 * and this service's metadata to load into the IdP: a download of GET /api/v1/auth/saml/metadata
 * (public, the XML itself).
 */
import { Heading, Link } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { ErrorNotice, Notice } from '../../ui/forms.js';
import { usePostRead } from './read.js';
import type { SamlView } from './types.js';

const METADATA = '/api/v1/auth/saml/metadata';

function Certificates({ certs }: { certs: SamlView['idp_certificates'] }) {
  const { t, when } = useI18n();
  if (certs.length === 0) return <>{t('config.none')}</>;
  return (
    <ul className="plain-list">
      {certs.map((c) => <li key={c.sha256}>{t('config.saml.certificate', { subject: c.subject, until: when(c.not_after) })}<br /><code className="fingerprint">SHA-256 {c.sha256}</code></li>)}
    </ul>
  );
}

export function SamlScreen() {
  const { t } = useI18n();
  const read = usePostRead<SamlView>('/api/v1/auth/saml/config');
  const v = read.data;
  const text = (value: string | null) => (value ? <code>{value}</code> : '—');
  const roles = Object.entries(v?.group_roles ?? {});
  return (
    <>
      <Heading level={1}>{t('config.nav.saml')}</Heading>
      <p>{t('config.saml.intro')}</p>
      <ErrorNotice error={read.error} />
      {!v && !read.error ? <p>{t('common.loading')}</p> : null}
      {v && !v.configured ? <Notice>{t('config.saml.notConfigured')}</Notice> : null}
      {v?.configured ? (
        <>
          <section className="card" aria-labelledby="saml-metadata-heading">
            <Heading level={2} id="saml-metadata-heading">{t('config.saml.metadata')}</Heading>
            <p>{t('config.saml.metadataIntro')}</p>
            <Link className="button button-primary" href={METADATA} download="strongroom-sp-metadata.xml">{t('config.saml.download')}</Link>
          </section>
          <Heading level={2}>{t('config.inForce')}</Heading>
          <dl className="facts" aria-label={t('config.inForce')}>
            <dt>{t('config.source')}</dt><dd>{t(v.source === 'database' ? 'config.source.database' : 'config.source.environment')}</dd>
            <dt>{t('config.saml.enabled')}</dt><dd>{v.saml_enabled ? t('common.yes') : t('common.no')}</dd>
            <dt>{t('config.saml.spEntityId')}</dt><dd>{text(v.sp_entity_id)}</dd>
            <dt>{t('config.saml.acsUrl')}</dt><dd>{text(v.acs_url)}</dd>
            <dt>{t('config.saml.sloUrl')}</dt><dd>{text(v.slo_url)}</dd>
            <dt>{t('config.saml.idpEntityId')}</dt><dd>{text(v.idp_entity_id)}</dd>
            <dt>{t('config.saml.idpSsoUrl')}</dt><dd>{text(v.idp_sso_url)}</dd>
            <dt>{t('config.saml.idpSloUrl')}</dt><dd>{text(v.idp_slo_url)}</dd>
            <dt>{t('config.saml.idpCertificates')}</dt><dd><Certificates certs={v.idp_certificates} /></dd>
            <dt>{t('config.saml.nameIdFormat')}</dt><dd>{text(v.nameid_format)}</dd>
            <dt>{t('config.saml.relayOrigins')}</dt><dd>{v.allowed_relay_origins.length > 0 ? v.allowed_relay_origins.join(', ') : t('config.none')}</dd>
            <dt>{t('config.saml.idpInitiated')}</dt><dd>{v.allow_idp_initiated ? t('common.yes') : t('common.no')}</dd>
            <dt>{t('config.saml.clockSkew')}</dt><dd>{t('config.seconds', { count: v.clock_skew_sec })}</dd>
            <dt>{t('config.saml.groupRoles')}</dt><dd>{roles.length > 0 ? <ul className="plain-list">{roles.map(([role, groups]) => <li key={role}>{role} ← {groups.join(', ')}</li>)}</ul> : t('config.none')}</dd>
          </dl>
          <p className="description">{t('config.saml.howToChange')}</p>
        </>
      ) : null}
    </>
  );
}
