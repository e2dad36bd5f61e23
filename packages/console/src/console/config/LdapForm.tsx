/**
 * The directory settings' form: prefilled from the settings in force, saved whole after a
 * confirmation that says what changes (POST /api/v1/auth/ldap/config with a body), the API's
 * field errors shown by their fields. The bind password is write-only: never shown, empty keeps
 * the stored one. When none is stored yet, or the edit changes the server, the service account,
 * StartTLS or the CA certificate (which the API refuses without the password, and audits as a
 * failure), the field is required and its hint says why: the form stops before sending.
 */
import { useState } from 'react';
import { Form } from 'react-aria-components';
import { useI18n, type MessageKey } from '../../lib/i18n.js';
import { Button, Field } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import { TextAreaField } from './templates/TextAreaField.js';
import { GroupRolesEditor } from './GroupRolesEditor.js';
import { LDAP_CONFIG, LDAP_FIELDS, ldapBodyOf, ldapDraftOf, passwordNeed, type LdapDraft } from './ldap-draft.js';
import { changedFields, CheckField, RefusalNotice, useSettingsSave } from './settings-form.js';
import type { LdapView } from './types.js';

type Set = <K extends keyof LdapDraft>(k: K) => (v: LdapDraft[K]) => void;
interface Part { d: LdapDraft; set: Set; errors: Record<string, string> }

/** Where each body field is labelled, for the confirmation's list of changes. */
const LABELS: Record<(typeof LDAP_FIELDS)[number], MessageKey> = {
  uri: 'config.ldap.uri', start_tls: 'config.ldap.startTls', ca_cert: 'config.ldap.ca', bind_dn: 'config.ldap.bindDn', bind_password: 'config.ldap.bindPassword',
  base_dn: 'config.ldap.baseDn', user_filter: 'config.ldap.userFilter', attr_mail: 'config.edit.ldap.attrMail', attr_name: 'config.edit.ldap.attrName',
  group_member_attr: 'config.edit.ldap.groupMemberAttr', groups_base_dn: 'config.ldap.groupsBaseDn', group_roles: 'config.ldap.groupRoles',
};

function ServerPart({ d, set, errors }: Part) {
  const { t } = useI18n();
  return (
    <fieldset>
      <legend>{t('config.edit.ldap.server')}</legend>
      <Field label={t('config.ldap.uri')} description={t('config.edit.ldap.uriHint')} value={d.uri} onChange={set('uri')} isRequired autoComplete="off" isInvalid={!!errors.uri} errorMessage={errors.uri} />
      <CheckField id="ldap-start-tls" label={t('config.edit.ldap.startTls')} isSelected={d.startTls} onChange={set('startTls')} error={errors.start_tls} />
      <TextAreaField label={t('config.edit.ldap.caCert')} description={t('config.edit.ldap.caCertHint')} value={d.caCert} onChange={set('caCert')} rows={4} isInvalid={!!errors.ca_cert} errorMessage={errors.ca_cert} />
    </fieldset>
  );
}

/** `need`: why the password must be typed (passwordNeed); `missing`: a save was asked without it. */
function AccountPart({ d, set, errors, need, missing }: Part & { need: ReturnType<typeof passwordNeed>; missing: boolean }) {
  const { t } = useI18n();
  const hint = need === null ? t('config.edit.ldap.passwordKeep')
    : 'first' in need ? t('config.edit.ldap.passwordRequired')
      : t('config.edit.ldap.passwordChanged', { fields: need.changed.map((f) => t(LABELS[f])).join(', ') });
  const invalid = !!errors.bind_password || (missing && need !== null && d.bindPassword === '');
  return (
    <fieldset>
      <legend>{t('config.edit.ldap.account')}</legend>
      <Field label={t('config.ldap.bindDn')} value={d.bindDn} onChange={set('bindDn')} isRequired autoComplete="off" isInvalid={!!errors.bind_dn} errorMessage={errors.bind_dn} />
      <Field label={t('config.ldap.bindPassword')} type="password" description={hint} value={d.bindPassword} onChange={set('bindPassword')} isRequired={need !== null} autoComplete="new-password" isInvalid={invalid} errorMessage={errors.bind_password ?? t('config.edit.ldap.passwordMissing')} />
    </fieldset>
  );
}

function UsersPart({ d, set, errors }: Part) {
  const { t } = useI18n();
  return (
    <fieldset>
      <legend>{t('config.edit.ldap.users')}</legend>
      <Field label={t('config.ldap.baseDn')} value={d.baseDn} onChange={set('baseDn')} isRequired autoComplete="off" isInvalid={!!errors.base_dn} errorMessage={errors.base_dn} />
      <Field label={t('config.ldap.userFilter')} description={t('config.edit.ldap.userFilterHint')} value={d.userFilter} onChange={set('userFilter')} isRequired autoComplete="off" isInvalid={!!errors.user_filter} errorMessage={errors.user_filter} />
      <Field label={t('config.edit.ldap.attrMail')} value={d.attrMail} onChange={set('attrMail')} autoComplete="off" isInvalid={!!errors.attr_mail} errorMessage={errors.attr_mail} />
      <Field label={t('config.edit.ldap.attrName')} value={d.attrName} onChange={set('attrName')} autoComplete="off" isInvalid={!!errors.attr_name} errorMessage={errors.attr_name} />
      <Field label={t('config.edit.ldap.groupMemberAttr')} description={t('config.edit.ldap.groupMemberAttrHint')} value={d.groupMemberAttr} onChange={set('groupMemberAttr')} autoComplete="off" isInvalid={!!errors.group_member_attr} errorMessage={errors.group_member_attr} />
      <Field label={t('config.ldap.groupsBaseDn')} description={t('config.edit.ldap.groupsBaseDnHint')} value={d.groupsBaseDn} onChange={set('groupsBaseDn')} autoComplete="off" isInvalid={!!errors.groups_base_dn} errorMessage={errors.groups_base_dn} />
    </fieldset>
  );
}

export function LdapForm({ view, onSaved }: { view: LdapView; onSaved(): void }) {
  const { t } = useI18n();
  const [d, setD] = useState(() => ldapDraftOf(view));
  const [confirming, setConfirming] = useState(false);
  const [missing, setMissing] = useState(false);
  const set: Set = (k) => (v) => setD((x) => ({ ...x, [k]: v }));
  const { error, errors, save } = useSettingsSave(LDAP_CONFIG, () => ldapBodyOf(d), onSaved);
  const stored = view.source === 'database';
  const need = passwordNeed(view, d);
  // Without the password the API would refuse (and audit a failure): stop here, the field says why.
  const submit = () => {
    setMissing(need !== null && d.bindPassword === '');
    if (need === null || d.bindPassword !== '') setConfirming(true);
  };
  const changes = changedFields(ldapBodyOf(ldapDraftOf(view)), ldapBodyOf(d)) as Array<keyof typeof LABELS>;


  return (
    <>
      <RefusalNotice error={error} fields={LDAP_FIELDS} />
      <Form className="form settings-form" aria-label={t('config.edit.ldap.form')} validationBehavior="aria" onSubmit={(e) => { e.preventDefault(); submit(); }}>
        <ServerPart d={d} set={set} errors={errors} />
        <AccountPart d={d} set={set} errors={errors} need={need} missing={missing} />
        <UsersPart d={d} set={set} errors={errors} />
        <GroupRolesEditor rows={d.groups} onChange={set('groups')} error={errors.group_roles} />
        <div className="actions"><Button type="submit">{t('config.edit.save')}</Button></div>
      </Form>
      {confirming ? (
        <ConfirmDialog title={t('config.edit.ldap.confirm')} allows={t(stored ? 'config.edit.ldap.allows' : 'config.edit.ldap.allowsFirst')} confirmLabel={t('config.edit.saveNow')} onConfirm={save} onClose={() => setConfirming(false)}>
          <p>{changes.length > 0 ? t('config.edit.changed', { fields: changes.map((f) => t(LABELS[f])).join(', ') }) : t('config.edit.unchanged')}</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
