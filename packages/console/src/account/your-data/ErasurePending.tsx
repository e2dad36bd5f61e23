/**
 * Signed out after asking for the account's deletion on this page: when it will be erased, and
 * cancelling it (POST /api/v1/auth/gdpr/delete/cancel with the username and password: the account
 * cannot sign in meanwhile, so the route takes the credentials itself). Otherwise the sign-in form.
 */
import { useState, type ReactNode } from 'react';
import { Form, Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { fieldsOf, usePending } from '../security/submit.js';
import { setErasure, useErasure, type ErasureRequested } from './erasure-state.js';

export function ErasureGate({ signIn }: { signIn: ReactNode }) {
  const erasure = useErasure();
  return erasure ? <ErasurePending erasure={erasure} /> : signIn;
}

function ErasurePending({ erasure }: { erasure: ErasureRequested }) {
  const { t, when } = useI18n();
  const { client } = useSession();
  const pending = usePending();
  const [cancelled, setCancelled] = useState(false);
  const cancel = (fields: Record<string, string>) => void pending.run(async () => {
    await client.request('POST', '/api/v1/auth/gdpr/delete/cancel', { username: fields.username, password: fields.password }, { auth: false });
    setCancelled(true);
  });
  return (
    <main className="sign-in" id="main">
      <Heading level={1}>{t(cancelled ? 'account.erasureCancelledHeading' : 'account.erasureHeading')}</Heading>
      {cancelled ? <Notice>{t('account.erasureCancelled')}</Notice> : (
        <>
          <dl className="facts">
            <dt>{t('account.erasureRequestedAt')}</dt><dd>{when(erasure.requested_at)}</dd>
            <dt>{t('account.erasureAfter')}</dt><dd data-testid="erase-after">{when(erasure.erase_after)}</dd>
          </dl>
          <p>{t('account.erasureSignedOut', { count: erasure.sessions_ended })}</p>
          <Heading level={2}>{t('account.erasureCancelHeading')}</Heading>
          <p>{t('account.erasureCancelIntro')}</p>
          <ErrorNotice error={pending.error} />
          <Form className="form" onSubmit={(e) => cancel(fieldsOf(e))} aria-label={t('account.erasureCancelHeading')}>
            <Field name="username" label={t('signIn.username')} autoComplete="username" isRequired />
            <Field name="password" label={t('signIn.password')} type="password" autoComplete="current-password" isRequired />
            <Button type="submit" isPending={pending.busy}>{t('account.erasureCancelSubmit')}</Button>
          </Form>
        </>
      )}
      <div className="actions">
        <Button variant="secondary" onPress={() => setErasure(null)}>{t('account.backToSignIn')}</Button>
      </div>
    </main>
  );
}
