/**
 * The authenticator app (TOTP): enrol it (POST /api/v1/2fa/totp/setup with the current password,
 * the QR code and key shown, then /verify with a code: ten backup codes shown once), or, once
 * enrolled, replace the backup codes (POST /api/v1/2fa/totp/backup-codes with a current code).
 */
import { useState } from 'react';
import { Form, Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field } from '../../ui/forms.js';
import { QrCode } from '../../ui/QrCode.js';
import type { TotpSetup } from '../../ui/SetUpAuthenticator.js';
import { useStepUp } from './StepUp.js';
import { fieldsOf, usePending } from './submit.js';

export function Authenticator({ enrolled, onChange }: { enrolled: string[]; onChange(): void }) {
  const { t } = useI18n();
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const done = (next: string[]) => {
    setSetup(null);
    setCodes(next);
    onChange();
  };
  let body;
  if (codes) body = <BackupCodes codes={codes} onKept={() => setCodes(null)} />;
  else if (setup) body = <ConfirmSetup setup={setup} onEnrolled={done} />;
  else if (enrolled.includes('totp')) body = <ReplaceCodes onReplaced={setCodes} />;
  else body = <StartSetup onStarted={setSetup} />;
  return (
    <section aria-labelledby="totp-heading">
      <Heading level={2} id="totp-heading">{t('security.factor.totp')}</Heading>
      {body}
    </section>
  );
}

function StartSetup({ onStarted }: { onStarted(setup: TotpSetup): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const stepUp = useStepUp();
  const start = (password: string) => void pending.run(() => stepUp.guard(async () => {
    onStarted(await call<TotpSetup>('POST', '/api/v1/2fa/totp/setup', { current_password: password }));
  }));
  return (
    <>
      <p>{t('security.totpIntro')}</p>
      <ErrorNotice error={pending.error} />
      {stepUp.panel}
      <Form className="form" onSubmit={(e) => start(fieldsOf(e).current_password ?? '')} aria-label={t('security.totpStart')}>
        <Field name="current_password" label={t('security.currentPassword')} type="password" autoComplete="current-password" isRequired />
        <Button type="submit" isPending={pending.busy}>{t('security.totpStart')}</Button>
      </Form>
    </>
  );
}

function ConfirmSetup({ setup, onEnrolled }: { setup: TotpSetup; onEnrolled(codes: string[]): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const confirm = (code: string) => void pending.run(async () => {
    onEnrolled((await call<{ backup_codes: string[] }>('POST', '/api/v1/2fa/totp/verify', { code })).backup_codes);
  });
  return (
    <>
      <p>{t('security.totpScan')}</p>
      <ErrorNotice error={pending.error} />
      <QrCode text={setup.otpauth_uri} label={t('setUp.qrAlt')} />
      <p>{t('setUp.secret')} <code className="secret" data-testid="totp-secret">{setup.secret}</code></p>
      <Form className="form" onSubmit={(e) => confirm(fieldsOf(e).code ?? '')} aria-label={t('security.totpConfirm')}>
        <Field name="code" label={t('signIn.totpCode')} autoComplete="one-time-code" inputMode="numeric" isRequired autoFocus />
        <Button type="submit" isPending={pending.busy}>{t('security.totpConfirm')}</Button>
      </Form>
    </>
  );
}

function ReplaceCodes({ onReplaced }: { onReplaced(codes: string[]): void }) {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const replace = (code: string) => void pending.run(async () => {
    onReplaced((await call<{ backup_codes: string[] }>('POST', '/api/v1/2fa/totp/backup-codes', { code })).backup_codes);
  });
  return (
    <>
      <p>{t('security.totpEnrolled')}</p>
      <ErrorNotice error={pending.error} />
      <Form className="form" onSubmit={(e) => replace(fieldsOf(e).code ?? '')} aria-label={t('security.replaceCodes')}>
        <Field name="code" label={t('signIn.totpCode')} autoComplete="one-time-code" inputMode="numeric" isRequired />
        <Button type="submit" isPending={pending.busy}>{t('security.replaceCodes')}</Button>
      </Form>
    </>
  );
}

function BackupCodes({ codes, onKept }: { codes: string[]; onKept(): void }) {
  const { t } = useI18n();
  return (
    <>
      <Heading level={3}>{t('setUp.backupCodes')}</Heading>
      <p>{t('setUp.backupCodesWhy')}</p>
      <ul className="codes" data-testid="backup-codes">{codes.map((c) => <li key={c}><code>{c}</code></li>)}</ul>
      <Button onPress={onKept}>{t('security.codesKept')}</Button>
    </>
  );
}
