/**
 * 403 STEP_UP_REQUIRED: the change needs this session to prove a second factor again (within the
 * last 10 minutes). `useStepUp().guard(action)` runs the action; on that refusal it shows a
 * step-up form for a factor the answer lists as enrolled (the authenticator's code, a code sent
 * by email, text message or push, or a passkey), then runs the action again.
 */
import { useCallback, useState, type ReactNode } from 'react';
import { Form, Heading } from 'react-aria-components';
import { StrongroomError } from '../../../../client/src/index.js';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { fieldsOf, usePending } from './submit.js';

const CODE_METHODS = ['email', 'sms', 'push'] as const;
type CodeMethod = (typeof CODE_METHODS)[number];

interface Asked {
  enrolled: string[];
  retry(): Promise<void>;
}

export function useStepUp(): { guard(action: () => Promise<void>): Promise<void>; panel: ReactNode } {
  const [asked, setAsked] = useState<Asked | null>(null);
  const guard = useCallback(async (action: () => Promise<void>) => {
    try {
      await action();
    } catch (err) {
      if (!(err instanceof StrongroomError && err.errorCode === 'STEP_UP_REQUIRED')) throw err;
      const enrolled = Array.isArray(err.details.enrolled) ? err.details.enrolled.map(String) : [];
      setAsked({ enrolled, retry: action });
    }
  }, []);
  const panel = asked ? <StepUpForm enrolled={asked.enrolled} onStepped={async () => { await asked.retry(); setAsked(null); }} onCancel={() => setAsked(null)} /> : null;
  return { guard, panel };
}

function StepUpForm({ enrolled, onStepped, onCancel }: { enrolled: string[]; onStepped(): Promise<void>; onCancel(): void }) {
  const { t } = useI18n();
  const { call, client } = useSession();
  const pending = usePending();
  const [sent, setSent] = useState<CodeMethod | null>(null);
  const totp = enrolled.includes('totp');
  const codeMethods = CODE_METHODS.filter((m) => enrolled.includes(m));
  const passkey = enrolled.includes('passkey');

  const verify = (code: string) => pending.run(async () => {
    if (totp && !sent) await call('POST', '/api/v1/auth/totp/verify', { code });
    else await call('POST', '/api/v1/auth/2fa/verify', { code });
    await onStepped();
  });
  const send = (method: CodeMethod) => () => void pending.run(async () => {
    await call('POST', '/api/v1/auth/2fa/request', { method });
    setSent(method);
  });
  const withPasskey = () => void pending.run(async () => {
    await client.stepUpWithPasskey();
    await onStepped();
  });

  return (
    <section className="step-up" aria-labelledby="step-up-heading">
      <Heading level={2} id="step-up-heading">{t('security.stepUpHeading')}</Heading>
      <p>{t('security.stepUpWhy')}</p>
      <ErrorNotice error={pending.error} />
      {sent ? <Notice>{t('security.stepUpSent')}</Notice> : null}
      {totp || sent ? (
        <Form className="form" onSubmit={(e) => void verify(fieldsOf(e).code ?? '')} aria-label={t('security.stepUpHeading')}>
          <Field name="code" label={sent ? t('security.stepUpCode') : t('signIn.totpCode')} autoComplete="one-time-code" inputMode="numeric" isRequired autoFocus />
          <Button type="submit" isPending={pending.busy}>{t('signIn.verify')}</Button>
        </Form>
      ) : null}
      <div className="actions">
        {!sent && codeMethods.map((m) => <Button key={m} variant="secondary" onPress={send(m)}>{t(`security.stepUpSend.${m}`)}</Button>)}
        {passkey ? <Button variant="secondary" onPress={withPasskey}>{t('security.stepUpPasskey')}</Button> : null}
        <Button variant="secondary" onPress={onCancel}>{t('security.cancel')}</Button>
      </div>
    </section>
  );
}
