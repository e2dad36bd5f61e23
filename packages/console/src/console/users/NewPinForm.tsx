/**
 * After a PIN reset: the person types their new PIN on this device (POST /api/v1/auth/reset/pin
 * with the reset token, which works once and for ten minutes). The rules a PIN breaks are listed.
 * It says on which contacts a notice is being sent to the customer (in the background: a failed delivery is logged and audited).
 */
import { useState, type FormEvent } from 'react';
import { Form } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';

export function NewPinForm({ token, notified, username, onDone }: { token: string; notified: Array<'email' | 'sms'>; username: string; onDone(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const [error, setError] = useState<unknown>(null);
  const [mismatch, setMismatch] = useState(false);
  const [set, setSet] = useState(false);
  const [busy, setBusy] = useState(false);

  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const pin = String(data.get('pin') ?? '');
    setMismatch(pin !== String(data.get('again') ?? ''));
    if (pin !== String(data.get('again') ?? '')) return;
    setBusy(true);
    setError(null);
    try {
      await call('POST', '/api/v1/auth/reset/pin', { reset_token: token, new_pin: pin });
      setSet(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (set) return <Notice>{t('users.pin.set', { username })}</Notice>;
  return (
    <div className="card">
      <p role="status">{t('users.pin.removed', { username })}</p>
      <p>{notified.length > 0 ? t('users.pinNotice.told', { username, channels: notified.map((c) => t(`users.pinNotice.${c}`)).join(', ') }) : t('users.pinNotice.notTold', { username })}</p>
      <ErrorNotice error={error} />
      {mismatch ? <p className="notice notice-error" role="alert">{t('users.pin.mismatch')}</p> : null}
      <Form className="form" onSubmit={(e) => void onSubmit(e)} aria-label={t('users.pin.form', { username })}>
        <Field name="pin" label={t('users.pin.new')} type="password" inputMode="numeric" autoComplete="off" isRequired />
        <Field name="again" label={t('users.pin.again')} type="password" inputMode="numeric" autoComplete="off" isRequired />
        <div className="actions">
          <Button type="submit" isPending={busy}>{t('users.pin.save')}</Button>
          <Button variant="secondary" onPress={onDone} isDisabled={busy}>{t('users.pin.later')}</Button>
        </div>
      </Form>
    </div>
  );
}
