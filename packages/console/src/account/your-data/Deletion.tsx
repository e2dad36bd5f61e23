/**
 * Asking for your account to be deleted (POST /api/v1/auth/gdpr/delete with the current password;
 * a step-up when the account has a second factor). The page says first what it means; the request
 * ends every session, this one included, so the page then signs out and shows when the erasure
 * happens and how to cancel it (ErasurePending).
 */
import { useState } from 'react';
import { Checkbox, Form, Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../ui/forms.js';
import { useStepUp } from '../security/StepUp.js';
import { fieldsOf, usePending } from '../security/submit.js';
import { setErasure, type ErasureRequested } from './erasure-state.js';

export function Deletion() {
  const { t } = useI18n();
  const { call, signOut } = useSession();
  const pending = usePending();
  const stepUp = useStepUp();
  const [understood, setUnderstood] = useState(false);
  const request = (password: string) => void pending.run(() => stepUp.guard(async () => {
    setErasure(await call<ErasureRequested>('POST', '/api/v1/auth/gdpr/delete', { current_password: password }));
    await signOut(); // the session has ended on the server already
  }));
  return (
    <section className="card danger-zone" aria-labelledby="deletion-heading">
      <Heading level={2} id="deletion-heading">{t('account.deletionHeading')}</Heading>
      <p>{t('account.deletionIntro')}</p>
      <ul>
        <li>{t('account.deletionNow')}</li>
        <li>{t('account.deletionLater')}</li>
        <li>{t('account.deletionKept')}</li>
        <li>{t('account.deletionCancel')}</li>
      </ul>
      <ErrorNotice error={pending.error} />
      {stepUp.panel}
      <Form className="form" onSubmit={(e) => request(fieldsOf(e).current_password ?? '')} aria-label={t('account.deletionHeading')}>
        <Field name="current_password" label={t('security.currentPassword')} type="password" autoComplete="current-password" isRequired />
        <Checkbox className="checkbox" isSelected={understood} onChange={setUnderstood}>
          {({ isSelected }) => <><span className="checkbox-box" aria-hidden="true">{isSelected ? '✓' : ''}</span>{t('account.deletionUnderstood')}</>}
        </Checkbox>
        <Button type="submit" variant="danger" isDisabled={!understood} isPending={pending.busy}>{t('account.deletionSubmit')}</Button>
      </Form>
    </section>
  );
}
