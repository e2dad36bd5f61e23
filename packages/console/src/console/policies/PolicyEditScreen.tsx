/**
 * One access policy, new or existing: its name, channel, role and state, the IP allow and deny
 * lists (checked as typed), the schedule and the geofences; saved whole (POST, or PUT
 * /api/v1/admin/access-policies/{id}), with the API's field errors shown by their fields, and
 * deleted after a confirmation. The rules the editor has no field for are kept as they were.
 */
import { useState, type FormEvent } from 'react';
import { Button as AriaButton, Checkbox, Form, Heading, Label, ListBox, ListBoxItem, Popover, Select, SelectValue } from 'react-aria-components';
import { cidrValues, parseCidrList } from '../../../../../src/access/cidr-input.js';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref, useRouter } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import { CidrField } from './CidrField.js';
import { GeofenceEditor } from './GeofenceEditor.js';
import { ScheduleEditor } from './ScheduleEditor.js';
import { bodyOf, draftOf, fieldErrors, POLICY_CHANNELS, type Draft, type Policy, type PolicyChannel } from './types.js';

export function ChannelSelect({ value, onChange, label }: { value: PolicyChannel; onChange(c: PolicyChannel): void; label: string }) {
  return (
    <Select className="field" selectedKey={value} onSelectionChange={(k) => onChange(k as PolicyChannel)}>
      <Label>{label}</Label>
      <AriaButton className="select-button"><SelectValue /><span aria-hidden="true">▾</span></AriaButton>
      <Popover className="popover"><ListBox className="listbox">{POLICY_CHANNELS.map((c) => <ListBoxItem key={c} id={c} className="listbox-item">{c}</ListBoxItem>)}</ListBox></Popover>
    </Select>
  );
}

function PolicyForm({ policy }: { policy: Policy | null }) {
  const { t } = useI18n();
  const { call } = useSession();
  const { navigate } = useRouter();
  const href = useHref();
  const [d, setD] = useState<Draft>(() => draftOf(policy));
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const set = <K extends keyof Draft>(k: K) => (v: Draft[K]) => setD((x) => ({ ...x, [k]: v }));
  const allow = parseCidrList(d.allow);
  const deny = parseCidrList(d.deny);
  const errors = fieldErrors(error);

  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setNotice('');
    setError(null);
    if ([...allow, ...deny].some((x) => x.problem !== null)) return setNotice(t('policies.fixLists'));
    setBusy(true);
    try {
      const body = bodyOf(d, cidrValues(allow), cidrValues(deny), policy?.rules);
      const saved = policy
        ? await call<{ policy: Policy }>('PUT', `/api/v1/admin/access-policies/${encodeURIComponent(policy.id)}`, body)
        : await call<{ policy: Policy }>('POST', '/api/v1/admin/access-policies', body);
      setNotice(t('policies.saved', { name: saved.policy.name }));
      if (!policy) navigate(href('policies', saved.policy.id));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      {notice ? <Notice>{notice}</Notice> : null}
      {errors.other || !Object.keys(errors).length ? <ErrorNotice error={error} /> : <div className="notice notice-error" role="alert"><p>{t('policies.seeFields')}</p></div>}
      <Form className="form policy-form" onSubmit={(e) => void onSubmit(e)} aria-label={policy ? t('policies.edit', { name: policy.name }) : t('policies.new')} validationBehavior="aria">
        <Field label={t('policies.name')} value={d.name} onChange={set('name')} isRequired isInvalid={!!errors.name} errorMessage={errors.name} />
        <ChannelSelect label={t('policies.channelLabel')} value={d.channel} onChange={set('channel')} />
        <Field label={t('policies.role')} description={t('policies.roleHint')} value={d.role} onChange={set('role')} isInvalid={!!errors.role} errorMessage={errors.role} />
        <Checkbox className="checkbox" isSelected={d.enabled} onChange={set('enabled')}><span className="box" aria-hidden="true" />{t('policies.enabledLabel')}</Checkbox>
        <CidrField label={t('policies.allow')} description={t('policies.allowHint')} value={d.allow} onChange={set('allow')} serverError={errors.allow} />
        <CidrField label={t('policies.deny')} description={t('policies.denyHint')} value={d.deny} onChange={set('deny')} serverError={errors.deny} />
        <ScheduleEditor windows={d.schedule} onChange={set('schedule')} serverError={errors.schedule} />
        <GeofenceEditor shapes={d.geofences} onChange={set('geofences')} serverError={errors.geofences} />
        <p className="actions">
          <Button type="submit" isPending={busy}>{t('policies.save')}</Button>
          {policy ? <Button variant="danger" onPress={() => setDeleting(true)}>{t('policies.delete')}</Button> : null}
        </p>
      </Form>
      {deleting && policy ? (
        <ConfirmDialog
          title={t('policies.confirmDelete', { name: policy.name })} allows={t('policies.deleteAllows', { channel: policy.channel })}
          confirmLabel={t('policies.delete')} variant="danger" onClose={() => setDeleting(false)}
          onConfirm={async () => { await call('DELETE', `/api/v1/admin/access-policies/${encodeURIComponent(policy.id)}`); navigate(href('policies')); }}
        />
      ) : null}
    </>
  );
}

function ExistingPolicy({ id }: { id: string }) {
  const { t } = useI18n();
  const loaded = useApi<{ policy: Policy }>(`/api/v1/admin/access-policies/${encodeURIComponent(id)}`);
  const policy = loaded.data?.policy;
  return (
    <>
      <Heading level={1}>{policy ? policy.name : t('policies.policy')}</Heading>
      <ErrorNotice error={loaded.error} />
      {policy ? <PolicyForm key={policy.id} policy={policy} /> : loaded.error ? null : <p>{t('common.loading')}</p>}
    </>
  );
}

export function PolicyEditScreen({ id }: { id?: string }) {
  const { t } = useI18n();
  if (id) return <ExistingPolicy id={id} />;
  return (
    <>
      <Heading level={1}>{t('policies.new')}</Heading>
      <PolicyForm policy={null} />
    </>
  );
}
