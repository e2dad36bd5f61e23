/**
 * Signing in, as the bank's apps do, through the SDK: the password; then, on 401 2FA_REQUIRED,
 * the second factor (a code from the authenticator app, a backup code, or a code sent by email
 * or text message); on 403 PASSWORD_CHANGE_REQUIRED (a temporary password an administrator
 * gave), a new password, after which the sign-in goes on with it; on 403 MFA_SETUP_INCOMPLETE (a
 * role that requires a second factor, none enrolled), an authenticator app, enrolled there.
 */
import { useState, type FormEvent } from 'react';
import { Form, Heading } from 'react-aria-components';
import { StrongroomError, type SignInResponse } from '../../../client/src/index.js';
import { useI18n } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from './forms.js';
import { SetUpAuthenticator, startTotpSetup, type TotpSetup } from './SetUpAuthenticator.js';

type Step =
  | { kind: 'password' }
  | { kind: 'second-factor'; username: string; token: string; methods: string[]; sent: 'email' | 'sms' | null; backup: boolean }
  | { kind: 'new-password'; username: string; resetToken: string }
  | { kind: 'set-up'; token: string; setup: TotpSetup };

function submit(handler: (data: Record<string, string>) => Promise<void>) {
  return (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    void handler(Object.fromEntries(new FormData(e.currentTarget)) as Record<string, string>);
  };
}

export function SignIn({ title }: { title: string }) {
  const { t } = useI18n();
  const { client, adopt, endedBy } = useSession();
  const [step, setStep] = useState<Step>({ kind: 'password' });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  /** Runs one call of the flow: a sign-in answer signs in, a 2FA or password-change refusal moves on. */
  const run = async (username: string, action: () => Promise<SignInResponse | null>) => {
    setBusy(true);
    setError(null);
    try {
      const answer = await action();
      if (answer) adopt(answer);
    } catch (err) {
      if (err instanceof StrongroomError && err.errorCode === '2FA_REQUIRED') {
        setStep({ kind: 'second-factor', username, token: String(err.details.two_factor_token), methods: (err.details.methods as string[] | undefined) ?? [], sent: null, backup: false });
      } else if (err instanceof StrongroomError && err.errorCode === 'MFA_SETUP_INCOMPLETE' && ((err.details.setup_methods as string[] | undefined) ?? []).includes('totp')) {
        const token = String(err.details.two_factor_token);
        await startTotpSetup(client, token).then((setup) => setStep({ kind: 'set-up', token, setup }), setError);
      } else if (err instanceof StrongroomError && err.errorCode === 'PASSWORD_CHANGE_REQUIRED') {
        setStep({ kind: 'new-password', username, resetToken: String(err.details.reset_token) });
      } else setError(err);
    } finally {
      setBusy(false);
    }
  };

  const onPassword = submit(({ username = '', password = '' }) => run(username, () => client.login({ username, password })));

  return (
    <main className="sign-in" id="main">
      <Heading level={1}>{title}</Heading>
      {endedBy === 'session_ended' || endedBy === 'refresh_failed' ? <Notice>{t('signIn.sessionEnded')}</Notice> : null}
      {endedBy === 'signed_out' ? <Notice>{t('signIn.signedOut')}</Notice> : null}
      <ErrorNotice error={error} />
      {step.kind === 'password' ? (
        <Form onSubmit={onPassword} aria-label={t('signIn.heading')}>
          <Field name="username" label={t('signIn.username')} autoComplete="username" isRequired autoFocus />
          <Field name="password" label={t('signIn.password')} type="password" autoComplete="current-password" isRequired />
          <Button type="submit" isPending={busy}>{t('signIn.submit')}</Button>
        </Form>
      ) : null}
      {step.kind === 'second-factor' ? <SecondFactor step={step} setStep={setStep} run={run} busy={busy} setError={setError} /> : null}
      {step.kind === 'new-password' ? <NewPassword step={step} run={run} busy={busy} setError={setError} /> : null}
      {step.kind === 'set-up' ? <SetUpAuthenticator token={step.token} setup={step.setup} /> : null}
    </main>
  );
}

type Run = (username: string, action: () => Promise<SignInResponse | null>) => Promise<void>;

function SecondFactor({ step, setStep, run, busy, setError }: { step: Extract<Step, { kind: 'second-factor' }>; setStep(s: Step): void; run: Run; busy: boolean; setError(e: unknown): void }) {
  const { t } = useI18n();
  const { client } = useSession();
  const totp = step.methods.includes('totp') && !step.backup && step.sent === null;
  const onCode = submit(({ code = '' }) => run(step.username, () => {
    const input = { twoFactorToken: step.token, code: code.trim() };
    if (step.sent) return client.validateCode(input);
    return step.backup ? client.verifyBackupCode(input) : client.verifyTotp(input);
  }));
  const send = (method: 'email' | 'sms') => async () => {
    setError(null);
    try {
      await client.requestCode({ twoFactorToken: step.token, method });
      setStep({ ...step, sent: method, backup: false });
    } catch (err) {
      setError(err);
    }
  };
  const label = step.sent ? t('signIn.codeSent', { method: t(step.sent === 'email' ? 'signIn.byEmail' : 'signIn.bySms') }) : step.backup ? t('signIn.backupCode') : t('signIn.totpCode');
  return (
    <>
      <Heading level={2}>{t('signIn.secondFactor')}</Heading>
      {totp || step.backup || step.sent ? (
        <Form onSubmit={onCode} aria-label={t('signIn.secondFactor')}>
          <Field key={label} name="code" label={label} autoComplete="one-time-code" inputMode={step.backup ? 'text' : 'numeric'} isRequired autoFocus />
          <Button type="submit" isPending={busy}>{t('signIn.verify')}</Button>
        </Form>
      ) : <p>{t('signIn.chooseMethod')}</p>}
      <div className="alternatives">
        {step.methods.includes('backup_code') && !step.backup ? <Button variant="secondary" onPress={() => setStep({ ...step, backup: true, sent: null })}>{t('signIn.useBackupCode')}</Button> : null}
        {step.methods.includes('totp') && (step.backup || step.sent) ? <Button variant="secondary" onPress={() => setStep({ ...step, backup: false, sent: null })}>{t('signIn.useAuthenticator')}</Button> : null}
        {step.methods.includes('email') ? <Button variant="secondary" onPress={send('email')}>{t('signIn.sendEmail')}</Button> : null}
        {step.methods.includes('sms') ? <Button variant="secondary" onPress={send('sms')}>{t('signIn.sendSms')}</Button> : null}
      </div>
    </>
  );
}

function NewPassword({ step, run, busy, setError }: { step: Extract<Step, { kind: 'new-password' }>; run: Run; busy: boolean; setError(e: unknown): void }) {
  const { t } = useI18n();
  const { client } = useSession();
  const [mismatch, setMismatch] = useState(false);
  const onSubmit = submit(async ({ password = '', confirm = '' }) => {
    setMismatch(password !== confirm);
    if (password !== confirm) return setError(null);
    await run(step.username, async () => {
      await client.resetPassword({ resetToken: step.resetToken, newPassword: password });
      return client.login({ username: step.username, password });
    });
  });
  return (
    <>
      <Heading level={2}>{t('signIn.changePassword')}</Heading>
      <p>{t('signIn.changePasswordWhy')}</p>
      <Form onSubmit={onSubmit} aria-label={t('signIn.changePassword')}>
        <Field name="password" label={t('signIn.newPassword')} type="password" autoComplete="new-password" isRequired autoFocus />
        <Field name="confirm" label={t('signIn.confirmPassword')} type="password" autoComplete="new-password" isRequired
          isInvalid={mismatch} validationBehavior="aria" errorMessage={t('signIn.passwordsDiffer')} />
        <Button type="submit" isPending={busy}>{t('signIn.setPassword')}</Button>
      </Form>
    </>
  );
}
