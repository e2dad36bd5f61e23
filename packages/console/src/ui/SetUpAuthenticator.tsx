/**
 * A role that requires a second factor, and none enrolled (403 MFA_SETUP_INCOMPLETE): the person
 * enrols an authenticator app with that answer's `two_factor_token` (POST /api/v1/2fa/totp/setup,
 * then /verify with a code), which finishes the sign-in. The backup codes are shown once first.
 */
import { useState, type FormEvent } from 'react';
import { Form, Heading } from 'react-aria-components';
import type { SignInResponse, StrongroomClient } from '../../../client/src/index.js';
import { useI18n } from '../lib/i18n.js';
import { useSession } from '../lib/session.js';
import { Button, ErrorNotice, Field } from './forms.js';
import { QrCode } from './QrCode.js';

export interface TotpSetup {
  secret: string;
  /** What the QR code says (otpauth://totp/...): the page draws the code itself. */
  otpauth_uri: string;
}

/** Starts the enrolment (a new secret each call: called once, when the refusal arrives). */
export function startTotpSetup(client: StrongroomClient, token: string): Promise<TotpSetup> {
  return client.request<TotpSetup>('POST', '/api/v1/2fa/totp/setup', { two_factor_token: token }, { auth: false });
}

export function SetUpAuthenticator({ token, setup }: { token: string; setup: TotpSetup }) {
  const { t } = useI18n();
  const { client, adopt } = useSession();
  const [done, setDone] = useState<{ codes: string[]; signIn: SignInResponse } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const onSubmit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const code = String(new FormData(e.currentTarget).get('code') ?? '').trim();
    setBusy(true);
    setError(null);
    try {
      const r = await client.request<{ backup_codes: string[]; sign_in?: SignInResponse }>('POST', '/api/v1/2fa/totp/verify', { code, two_factor_token: token }, { auth: false });
      if (r.sign_in) setDone({ codes: r.backup_codes, signIn: r.sign_in });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (done) {
    return (
      <>
        <Heading level={2}>{t('setUp.backupCodes')}</Heading>
        <p>{t('setUp.backupCodesWhy')}</p>
        <ul className="codes" data-testid="backup-codes">{done.codes.map((c) => <li key={c}><code>{c}</code></li>)}</ul>
        <Button onPress={() => adopt(done.signIn)}>{t('setUp.continue')}</Button>
      </>
    );
  }
  return (
    <>
      <Heading level={2}>{t('setUp.heading')}</Heading>
      <p>{t('setUp.why')}</p>
      <ErrorNotice error={error} />
      <>
          <QrCode text={setup.otpauth_uri} label={t('setUp.qrAlt')} />
          <p>{t('setUp.secret')} <code className="secret" data-testid="totp-secret">{setup.secret}</code></p>
          <Form onSubmit={(e) => void onSubmit(e)} aria-label={t('setUp.heading')}>
            <Field name="code" label={t('signIn.totpCode')} autoComplete="one-time-code" inputMode="numeric" isRequired />
            <Button type="submit" isPending={busy}>{t('signIn.verify')}</Button>
          </Form>
      </>
    </>
  );
}
