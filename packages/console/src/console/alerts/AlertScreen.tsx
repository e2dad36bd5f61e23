/**
 * One security alert (permission alerts.manage): what raised it, about whom, from where, its
 * score and indicators, who acknowledged or resolved it and their notes, its deliveries to the
 * security team and the account's audit trail around it (GET /api/v1/admin/alerts/{id}).
 * Acknowledge (POST .../acknowledge, an optional note) while it is open; resolve (POST
 * .../resolve, a note required) until it is resolved. A 409 (another operator got there first)
 * shows in the dialog with the server's message.
 */
import { useState } from 'react';
import { Heading, Label, Link, TextArea, TextField } from 'react-aria-components';
import { useApi } from '../../lib/data.js';
import { useI18n } from '../../lib/i18n.js';
import { useHref } from '../../lib/router.js';
import { useSession } from '../../lib/session.js';
import { ErrorNotice, Button, Notice } from '../../ui/forms.js';
import { ConfirmDialog } from '../approvals/ConfirmDialog.js';
import type { AlertDetail } from './types.js';

function NoteField({ label, isRequired }: { label: string; isRequired?: boolean }) {
  return (
    <TextField className="field" name="note" isRequired={isRequired} maxLength={2000}>
      <Label>{label}</Label>
      <TextArea rows={3} />
    </TextField>
  );
}

function AlertFacts({ alert: a }: { alert: AlertDetail }) {
  const { t, when } = useI18n();
  const { can } = useSession();
  const href = useHref();
  const place = a.location?.internal ? t('audit.internal') : [a.location?.city, a.location?.country].filter(Boolean).join(', ') || '—';
  const decision = (d: AlertDetail['acknowledged']) => (d ? t('alerts.decision', { who: d.by_username ?? d.by, when: when(d.at) }) + (d.note ? ` — ${d.note}` : '') : '—');
  return (
    <dl className="facts">
      <dt>{t('alerts.severity')}</dt><dd><span className={`badge badge-severity-${a.severity}`}>{t(`alerts.severity.${a.severity}`)}</span></dd>
      <dt>{t('alerts.state')}</dt><dd><span className={`badge badge-alert-${a.state}`}>{t(`alerts.state.${a.state}`)}</span></dd>
      <dt>{t('alerts.raised')}</dt><dd>{when(a.created_at)}</dd>
      <dt>{t('alerts.user')}</dt><dd>{a.user_id && can('users.read') ? <Link href={href('users', a.user_id)}>{a.username ?? a.user_id}</Link> : (a.username ?? a.user_id ?? t('alerts.noUser'))}</dd>
      <dt>{t('audit.channel')}</dt><dd>{a.channel ?? '—'}</dd>
      <dt>{t('alerts.where')}</dt><dd>{place}</dd>
      <dt>{t('alerts.score')}</dt><dd>{a.score ?? '—'}</dd>
      <dt>{t('alerts.indicators')}</dt><dd>{a.indicators.length > 0 ? a.indicators.map((i) => `${i.signal} (${i.weight})`).join(', ') : '—'}</dd>
      <dt>{t('alerts.acknowledged')}</dt><dd>{decision(a.acknowledged)}</dd>
      <dt>{t('alerts.resolved')}</dt><dd>{decision(a.resolved)}</dd>
      <dt>{t('alerts.deliveries')}</dt><dd>{a.deliveries.length > 0 ? a.deliveries.map((d) => t('alerts.delivery', { channel: d.channel, state: t(`alerts.delivery.${d.state}`), attempts: d.attempts })).join('; ') : t('alerts.noDelivery')}</dd>
    </dl>
  );
}

function AlertTrail({ trail }: { trail: AlertDetail['audit_trail'] }) {
  const { t, when } = useI18n();
  return (
    <>
      <h2>{t('alerts.trail')}</h2>
      <p className="description">{t(trail.truncated ? 'alerts.trailTruncated' : 'alerts.trailRange', { from: when(trail.from), to: when(trail.to) })}</p>
      <table className="table">
        <caption>{t('alerts.trail')}</caption>
        <thead><tr><th scope="col">{t('audit.time')}</th><th scope="col">{t('audit.event')}</th><th scope="col">{t('audit.status')}</th><th scope="col">{t('audit.channel')}</th></tr></thead>
        <tbody>
          {trail.entries.length === 0 ? <tr><td colSpan={4}>{t('audit.none')}</td></tr> : trail.entries.map((e) => (
            <tr key={e.audit_id}><th scope="row">{when(e.timestamp)}</th><td><code>{e.event_type}</code></td><td>{e.status}</td><td>{e.channel ?? '—'}</td></tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

export function AlertScreen({ id }: { id: string }) {
  const { t } = useI18n();
  const { call } = useSession();
  const href = useHref();
  const alert = useApi<AlertDetail>(`/api/v1/admin/alerts/${encodeURIComponent(id)}`);
  const [deciding, setDeciding] = useState<'acknowledge' | 'resolve' | null>(null);
  const [done, setDone] = useState('');
  const a = alert.data;

  const decide = (action: 'acknowledge' | 'resolve') => async (values: Record<string, string>) => {
    await call('POST', `/api/v1/admin/alerts/${encodeURIComponent(id)}/${action}`, values.note ? { note: values.note } : {});
    setDone(t(action === 'acknowledge' ? 'alerts.acknowledgedDone' : 'alerts.resolvedDone'));
    alert.reload();
  };

  return (
    <>
      <p><Link href={href('alerts')}>{t('alerts.back')}</Link></p>
      <Heading level={1}>{a ? t('alerts.heading', { rule: a.rule }) : t('alerts.title')}</Heading>
      <ErrorNotice error={alert.error} />
      {done ? <Notice>{done}</Notice> : null}
      {!a ? (alert.error ? null : <p>{t('common.loading')}</p>) : (
        <>
          <AlertFacts alert={a} />
          <div className="actions">
            {a.state === 'open' ? <Button onPress={() => setDeciding('acknowledge')}>{t('alerts.acknowledge')}</Button> : null}
            {a.state !== 'resolved' ? <Button variant="secondary" onPress={() => setDeciding('resolve')}>{t('alerts.resolve')}</Button> : null}
          </div>
          <AlertTrail trail={a.audit_trail} />
        </>
      )}
      {deciding === 'acknowledge' ? (
        <ConfirmDialog title={t('alerts.confirmAcknowledge')} allows={t('alerts.allowsAcknowledge')} confirmLabel={t('alerts.acknowledge')} onConfirm={decide('acknowledge')} onClose={() => setDeciding(null)}>
          <NoteField label={t('alerts.noteOptional')} />
        </ConfirmDialog>
      ) : null}
      {deciding === 'resolve' ? (
        <ConfirmDialog title={t('alerts.confirmResolve')} allows={t('alerts.allowsResolve')} confirmLabel={t('alerts.resolve')} onConfirm={decide('resolve')} onClose={() => setDeciding(null)}>
          <NoteField label={t('alerts.note')} isRequired />
        </ConfirmDialog>
      ) : null}
    </>
  );
}
