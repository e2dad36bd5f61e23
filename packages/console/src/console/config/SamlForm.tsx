/**
 * The SAML settings' form: prefilled from the settings in force (the IdP certificates as PEM),
 * saved whole after a confirmation that says what changes (POST /api/v1/auth/saml/config with a
 * body), the API's field errors shown by their fields.
 */
import { useState } from 'react';
import { Form } from 'react-aria-components';
import type { SamlRoleKey } from '../../../../../src/platform/config-saml.js';
import { useI18n, type MessageKey } from '../../lib/i18n.js';
import { Button, Field } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import { TextAreaField } from './templates/TextAreaField.js';
import { SAML_CONFIG, SAML_FIELDS, SAML_GROUP_KEYS, samlBodyOf, samlDraftOf, type SamlDraft } from './saml-draft.js';
import { changedFields, CheckField, RefusalNotice, useSettingsSave } from './settings-form.js';
import type { SamlView } from './types.js';

type Set = <K extends keyof SamlDraft>(k: K) => (v: SamlDraft[K]) => void;
interface Part { d: SamlDraft; set: Set; errors: Record<string, string> }

const LABELS: Record<string, MessageKey> = {
  saml_enabled: 'config.saml.enabled', sp_entity_id: 'config.saml.spEntityId', acs_url: 'config.saml.acsUrl', slo_url: 'config.saml.sloUrl',
  idp_entity_id: 'config.saml.idpEntityId', idp_sso_url: 'config.saml.idpSsoUrl', idp_slo_url: 'config.saml.idpSloUrl', idp_x509cert: 'config.saml.idpCertificates',
  nameid_format: 'config.saml.nameIdFormat', allowed_relay_origins: 'config.saml.relayOrigins', allow_idp_initiated: 'config.saml.idpInitiated',
  clock_skew_sec: 'config.edit.saml.clockSkew', group_roles: 'config.saml.groupRoles', attribute_map: 'config.edit.saml.attributeMap',
};

function ServicePart({ d, set, errors }: Part) {
  const { t } = useI18n();
  return (
    <fieldset>
      <legend>{t('config.edit.saml.service')}</legend>
      <CheckField id="saml-enabled" label={t('config.saml.enabled')} isSelected={d.enabled} onChange={set('enabled')} error={errors.saml_enabled} />
      <Field label={t('config.saml.spEntityId')} value={d.spEntityId} onChange={set('spEntityId')} isRequired autoComplete="off" isInvalid={!!errors.sp_entity_id} errorMessage={errors.sp_entity_id} />
      <Field label={t('config.saml.acsUrl')} description={t('config.edit.saml.acsHint')} value={d.acsUrl} onChange={set('acsUrl')} isRequired autoComplete="off" isInvalid={!!errors.acs_url} errorMessage={errors.acs_url} />
      <Field label={t('config.saml.sloUrl')} description={t('config.edit.saml.sloHint')} value={d.sloUrl} onChange={set('sloUrl')} autoComplete="off" isInvalid={!!errors.slo_url} errorMessage={errors.slo_url} />
      <TextAreaField label={t('config.saml.relayOrigins')} description={t('config.edit.saml.relayHint')} value={d.relayOrigins} onChange={set('relayOrigins')} rows={2} isInvalid={!!errors.allowed_relay_origins} errorMessage={errors.allowed_relay_origins} />
    </fieldset>
  );
}

function IdpPart({ d, set, errors, view }: Part & { view: SamlView }) {
  const { t, when } = useI18n();
  return (
    <fieldset>
      <legend>{t('config.edit.saml.idp')}</legend>
      <Field label={t('config.saml.idpEntityId')} value={d.idpEntityId} onChange={set('idpEntityId')} isRequired autoComplete="off" isInvalid={!!errors.idp_entity_id} errorMessage={errors.idp_entity_id} />
      <Field label={t('config.saml.idpSsoUrl')} value={d.idpSsoUrl} onChange={set('idpSsoUrl')} isRequired autoComplete="off" isInvalid={!!errors.idp_sso_url} errorMessage={errors.idp_sso_url} />
      <Field label={t('config.saml.idpSloUrl')} value={d.idpSloUrl} onChange={set('idpSloUrl')} autoComplete="off" isInvalid={!!errors.idp_slo_url} errorMessage={errors.idp_slo_url} />
      <TextAreaField label={t('config.edit.saml.certificate')} description={t('config.edit.saml.certificateHint')} value={d.idpCert} onChange={set('idpCert')} rows={6} isRequired isInvalid={!!errors.idp_x509cert} errorMessage={errors.idp_x509cert} />
      {view.idp_certificates.length > 0 ? (
        <ul className="plain-list description" aria-label={t('config.edit.saml.inForce')}>
          {view.idp_certificates.map((c) => <li key={c.sha256}>{t('config.saml.certificate', { subject: c.subject, until: when(c.not_after) })}<br /><code className="fingerprint">SHA-256 {c.sha256}</code></li>)}
        </ul>
      ) : null}
      <Field label={t('config.saml.nameIdFormat')} description={t('config.edit.saml.nameIdHint')} value={d.nameIdFormat} onChange={set('nameIdFormat')} autoComplete="off" isInvalid={!!errors.nameid_format} errorMessage={errors.nameid_format} />
      <CheckField id="saml-idp-initiated" label={t('config.saml.idpInitiated')} isSelected={d.idpInitiated} onChange={set('idpInitiated')} error={errors.allow_idp_initiated} />
      <Field label={t('config.edit.saml.clockSkew')} inputMode="numeric" value={d.clockSkew} onChange={set('clockSkew')} autoComplete="off" isInvalid={!!errors.clock_skew_sec} errorMessage={errors.clock_skew_sec} />
    </fieldset>
  );
}

function RolesPart({ d, set, errors }: Part) {
  const { t } = useI18n();
  const edit = (k: SamlRoleKey) => (text: string) => set('roles')({ ...d.roles, [k]: text });
  return (
    <fieldset aria-describedby={errors.group_roles ? 'saml-group-roles-error' : undefined}>
      <legend>{t('config.saml.groupRoles')}</legend>
      <p className="description">{t('config.edit.saml.groupRolesHint')}</p>
      {SAML_GROUP_KEYS.map((k) => <TextAreaField key={k} label={t(`config.edit.saml.groups.${k}`)} value={d.roles[k]} onChange={edit(k)} rows={2} />)}
      {errors.group_roles ? <p id="saml-group-roles-error" className="field-error">{errors.group_roles}</p> : null}
    </fieldset>
  );
}

export function SamlForm({ view, onSaved }: { view: SamlView; onSaved(): void }) {
  const { t } = useI18n();
  const [d, setD] = useState(() => samlDraftOf(view, window.location.origin));
  const [confirming, setConfirming] = useState(false);
  const set: Set = (k) => (v) => setD((x) => ({ ...x, [k]: v }));
  const { error, errors, save } = useSettingsSave(SAML_CONFIG, () => samlBodyOf(d), onSaved);
  const stored = view.source === 'database';
  const changes = changedFields(samlBodyOf(samlDraftOf(view, window.location.origin)), samlBodyOf(d));


  return (
    <>
      <RefusalNotice error={error} fields={SAML_FIELDS} />
      <Form className="form settings-form" aria-label={t('config.edit.saml.form')} validationBehavior="aria" onSubmit={(e) => { e.preventDefault(); setConfirming(true); }}>
        <IdpPart d={d} set={set} errors={errors} view={view} />
        <ServicePart d={d} set={set} errors={errors} />
        <RolesPart d={d} set={set} errors={errors} />
        <div className="actions"><Button type="submit">{t('config.edit.save')}</Button></div>
      </Form>
      {confirming ? (
        <ConfirmDialog title={t('config.edit.saml.confirm')} allows={t(stored ? 'config.edit.saml.allows' : 'config.edit.saml.allowsFirst')} confirmLabel={t('config.edit.saveNow')} onConfirm={save} onClose={() => setConfirming(false)}>
          <p>{changes.length > 0 ? t('config.edit.changed', { fields: changes.map((f) => (LABELS[f] ? t(LABELS[f]) : f)).join(', ') }) : t('config.edit.unchanged')}</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
