/**
 * Password and PIN: change the password (POST /api/v1/auth/password: the current one, then a new
 * one the rules accept; a refusal lists each rule that failed) and set or change the USSD PIN
 * (POST /api/v1/auth/pin with the current password). A password change ends the other sessions.
 */
import { useState } from 'react';
import { Form, Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { fieldsOf, usePending } from './submit.js';

export function PasswordScreen() {
  const { t } = useI18n();
  return (
    <>
      <Heading level={1}>{t('security.navPassword')}</Heading>
      <ChangePassword />
      <ChangePin />
    </>
  );
}

function ChangePassword() {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const [mismatch, setMismatch] = useState(false);
  const [done, setDone] = useState(false);
  const [form, setForm] = useState(0);

  const onSubmit = (fields: Record<string, string>) => {
    setDone(false);
    const differ = fields.new_password !== fields.confirm;
    setMismatch(differ);
    if (differ) return;
    void pending.run(async () => {
      await call('POST', '/api/v1/auth/password', { current_password: fields.current_password, new_password: fields.new_password });
      setDone(true);
      setForm((n) => n + 1); // empty fields after a change
    });
  };

  return (
    <section aria-labelledby="password-heading">
      <Heading level={2} id="password-heading">{t('security.passwordHeading')}</Heading>
      <p>{t('security.passwordIntro')}</p>
      <ErrorNotice error={pending.error} />
      {done ? <Notice>{t('security.passwordChanged')}</Notice> : null}
      <Form key={form} className="form" onSubmit={(e) => onSubmit(fieldsOf(e))} aria-label={t('security.passwordHeading')}>
        <Field name="current_password" label={t('security.currentPassword')} type="password" autoComplete="current-password" isRequired />
        <Field name="new_password" label={t('signIn.newPassword')} type="password" autoComplete="new-password" isRequired />
        <Field name="confirm" label={t('signIn.confirmPassword')} type="password" autoComplete="new-password" isRequired
          isInvalid={mismatch} validationBehavior="aria" errorMessage={t('signIn.passwordsDiffer')} />
        <Button type="submit" isPending={pending.busy}>{t('security.changePassword')}</Button>
      </Form>
    </section>
  );
}

function ChangePin() {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const [done, setDone] = useState(false);
  const [form, setForm] = useState(0);

  const onSubmit = (fields: Record<string, string>) => {
    setDone(false);
    void pending.run(async () => {
      await call('POST', '/api/v1/auth/pin', { current_password: fields.current_password, new_pin: fields.new_pin });
      setDone(true);
      setForm((n) => n + 1);
    });
  };

  return (
    <section aria-labelledby="pin-heading">
      <Heading level={2} id="pin-heading">{t('security.pinHeading')}</Heading>
      <p>{t('security.pinIntro')}</p>
      <ErrorNotice error={pending.error} />
      {done ? <Notice>{t('security.pinChanged')}</Notice> : null}
      <Form key={form} className="form" onSubmit={(e) => onSubmit(fieldsOf(e))} aria-label={t('security.pinHeading')}>
        <Field name="current_password" label={t('security.currentPassword')} type="password" autoComplete="current-password" isRequired />
        <Field name="new_pin" label={t('security.newPin')} type="password" inputMode="numeric" autoComplete="off" isRequired />
        <Button type="submit" isPending={pending.busy}>{t('security.setPin')}</Button>
      </Form>
    </section>
  );
}
