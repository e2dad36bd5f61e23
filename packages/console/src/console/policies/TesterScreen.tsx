/**
 * "Would this sign-in be allowed?" (POST /api/v1/admin/access-policies/evaluate): a sign-in
 * described by its channel, the user or their roles, the address, the location and the time,
 * answered by the server's own check: allowed, or refused with the rule, the policy and the
 * error the sign-in would get. Nothing is changed or recorded.
 */
import { useState, type FormEvent } from 'react';
import { Checkbox, Form, Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../ui/forms.js';
import { ChannelSelect } from './PolicyEditScreen.js';
import type { PolicyChannel } from './types.js';

export interface Verdict {
  allowed: boolean;
  rule: 'channel' | 'ip' | 'schedule' | 'device' | 'geofence' | null;
  refusal: { status_code: number; error_code: string } | null;
  policy: { id: string; name: string } | null;
  roles: string[];
  second_factor: { required: boolean; methods: string[] | null };
  at: string;
}

function bodyOf(data: Record<string, string>, channel: PolicyChannel, deviceBound: boolean): Record<string, unknown> {
  const text = (k: string) => (data[k] ?? '').trim();
  const body: Record<string, unknown> = { channel, ip: text('ip'), device_bound: deviceBound };
  if (text('username')) body.username = text('username');
  else if (text('roles')) body.roles = text('roles').split(',').map((r) => r.trim()).filter((r) => r !== '');
  if (text('latitude') || text('longitude')) body.location = { latitude: Number(text('latitude')), longitude: Number(text('longitude')), ...(text('accuracy') ? { accuracy_m: Number(text('accuracy')) } : {}) };
  if (text('at')) body.at = new Date(text('at')).toISOString();
  return body;
}

/** The coordinate left empty when only the other was given, or null when both or neither were. */
export function missingCoordinate(data: Record<string, string>): 'latitude' | 'longitude' | null {
  const lat = (data.latitude ?? '').trim() !== '';
  const lon = (data.longitude ?? '').trim() !== '';
  return lat === lon ? null : lat ? 'longitude' : 'latitude';
}

function Answer({ v }: { v: Verdict }) {
  const { t, when } = useI18n();
  return (
    <div className={`notice ${v.allowed ? 'notice-success' : 'notice-error'} verdict`} role="status">
      <p><strong>{v.allowed ? t('policies.tester.allowed') : t('policies.tester.refused', { rule: t(`policies.rule.${v.rule!}`) })}</strong></p>
      {v.refusal ? <p>{t('policies.tester.answer', { status: v.refusal.status_code, code: v.refusal.error_code })}</p> : null}
      {v.policy ? <p>{t('policies.tester.byPolicy', { name: v.policy.name })}</p> : null}
      <p>{t('policies.tester.judged', { roles: v.roles.join(', ') || '—', at: when(v.at) })}</p>
      {v.allowed && v.second_factor.required ? <p>{t('policies.tester.factor', { methods: v.second_factor.methods?.join(', ') ?? t('policies.tester.anyFactor') })}</p> : null}
    </div>
  );
}

export function TesterScreen() {
  const { t } = useI18n();
  const { call, can } = useSession();
  const [channel, setChannel] = useState<PolicyChannel>('web');
  const [deviceBound, setDeviceBound] = useState(false);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // A latitude without a longitude (or the reverse) is not a place: refused here, by the empty field, rather than sent as 0.
  const [missing, setMissing] = useState<'latitude' | 'longitude' | null>(null);
  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = Object.fromEntries(new FormData(e.currentTarget)) as Record<string, string>;
    const half = missingCoordinate(data);
    setMissing(half);
    if (half) {
      e.currentTarget.querySelector<HTMLInputElement>(`input[name="${half}"]`)?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    setVerdict(null);
    try {
      setVerdict(await call<Verdict>('POST', '/api/v1/admin/access-policies/evaluate', bodyOf(data, channel, deviceBound)));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Heading level={1}>{t('policies.nav.tester')}</Heading>
      <p>{t('policies.tester.intro')}</p>
      <ErrorNotice error={error} />
      {verdict ? <Answer v={verdict} /> : null}
      <Form className="form" onSubmit={(e) => void onSubmit(e)} aria-label={t('policies.nav.tester')}>
        <ChannelSelect label={t('policies.channelLabel')} value={channel} onChange={setChannel} />
        {/* Naming a person needs users.read as well: the API refuses it otherwise. */}
        {can('users.read') && <Field name="username" label={t('policies.tester.username')} description={t('policies.tester.usernameHint')} autoComplete="off" />}
        <Field name="roles" label={t('policies.tester.roles')} description={t('policies.tester.rolesHint')} autoComplete="off" />
        <Field name="ip" label={t('policies.tester.ip')} description={t('policies.tester.ipHint')} isRequired autoComplete="off" />
        <div className="shape-row">
          <Field name="latitude" label={t('policies.tester.latitude')} inputMode="decimal" autoComplete="off" isInvalid={missing === 'latitude'} errorMessage={t('policies.tester.latitudeMissing')} onChange={() => setMissing(null)} />
          <Field name="longitude" label={t('policies.tester.longitude')} inputMode="decimal" autoComplete="off" isInvalid={missing === 'longitude'} errorMessage={t('policies.tester.longitudeMissing')} onChange={() => setMissing(null)} />
          <Field name="accuracy" label={t('policies.tester.accuracy')} inputMode="decimal" autoComplete="off" />
        </div>
        <Field name="at" type="datetime-local" label={t('policies.tester.at')} description={t('policies.tester.atHint')} />
        <Checkbox className="checkbox" isSelected={deviceBound} onChange={setDeviceBound}><span className="box" aria-hidden="true" />{t('policies.tester.deviceBound')}</Checkbox>
        <Button type="submit" isPending={busy}>{t('policies.tester.ask')}</Button>
      </Form>
    </>
  );
}
