/**
 * Codes by email or text message as a second factor: a code goes to the account's own address
 * (POST /api/v1/2fa/otp/setup; a step-up first when the account has a factor already), and
 * entering it enrols the method (/api/v1/2fa/otp/verify). Codes to a phone (push) are enrolled from
 * the bank's app, which holds the device. There is no route for the holder to remove one.
 */
import { useState } from 'react';
import { Form, Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { useStepUp } from './StepUp.js';
import { fieldsOf, usePending } from './submit.js';

type Method = 'email' | 'sms';

export function CodeFactors({ enrolled, onChange }: { enrolled: string[]; onChange(): void }) {
  const { t } = useI18n();
  return (
    <section aria-labelledby="codes-heading">
      <Heading level={2} id="codes-heading">{t('account.codeFactors')}</Heading>
      <p>{t('account.codeFactorsIntro')}</p>
      {(['email', 'sms'] as const).map((m) => <CodeFactor key={m} method={m} enrolled={enrolled.includes(m)} onChange={onChange} />)}
    </section>
  );
}

function CodeFactor({ method, enrolled, onChange }: { method: Method; enrolled: boolean; onChange(): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const stepUp = useStepUp();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const name = t(`security.factor.${method}`);
  const send = () => void pending.run(() => stepUp.guard(async () => {
    setSentTo((await call<{ destination: string }>('POST', '/api/v1/2fa/otp/setup', { method })).destination);
  }));
  const confirm = (code: string) => void pending.run(async () => {
    await call('POST', '/api/v1/2fa/otp/verify', { method, code: code.trim() });
    setSentTo(null);
    setDone(true);
    onChange();
  });
  return (
    <div className="card" role="group" aria-label={name}>
      <Heading level={3}>{name}</Heading>
      <ErrorNotice error={pending.error} />
      {stepUp.panel}
      {done ? <Notice>{t('account.codeFactorAdded', { name })}</Notice> : null}
      {enrolled ? <p>{t('account.codeFactorOn')}</p> : sentTo ? (
        <Form className="form" onSubmit={(e) => confirm(fieldsOf(e).code ?? '')} aria-label={t('account.codeFactorConfirm', { name })}>
          <p>{t('account.codeSent', { destination: sentTo })}</p>
          <Field name="code" label={t('account.codeReceived')} autoComplete="one-time-code" inputMode="numeric" isRequired autoFocus />
          <Button type="submit" isPending={pending.busy}>{t('account.codeFactorConfirm', { name })}</Button>
        </Form>
      ) : <Button variant="secondary" onPress={send} isPending={pending.busy}>{t('account.codeFactorStart', { name })}</Button>}
    </div>
  );
}
