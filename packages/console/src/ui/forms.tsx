/** Form pieces on React Aria's components: labelled fields, error notices, buttons. */
import type { ReactNode } from 'react';
import { Button as AriaButton, FieldError, Input, Label, Text, TextField, type ButtonProps, type TextFieldProps } from 'react-aria-components';
import { StrongroomError } from '../../../client/src/index.js';
import { useI18n, type MessageKey, type Translate } from '../lib/i18n.js';

export function Field({ label, description, errorMessage, ...props }: TextFieldProps & { label: string; description?: string; errorMessage?: string }) {
  return (
    <TextField className="field" {...props}>
      <Label>{label}</Label>
      <Input />
      {description ? <Text slot="description" className="description">{description}</Text> : null}
      <FieldError className="field-error">{errorMessage}</FieldError>
    </TextField>
  );
}

export function Button({ variant = 'primary', ...props }: ButtonProps & { variant?: 'primary' | 'secondary' | 'danger' }) {
  return <AriaButton {...props} className={`button button-${variant}`} />;
}

/** Error codes the pages say in the reader's language; any other shows the server's message. */
const KNOWN: Partial<Record<string, MessageKey>> = {
  INVALID_CREDENTIALS: 'error.INVALID_CREDENTIALS',
  ACCOUNT_LOCKED: 'error.ACCOUNT_LOCKED',
  ACCOUNT_DISABLED: 'error.ACCOUNT_DISABLED',
  TOTP_INVALID: 'error.CODE_INVALID',
  BACKUP_CODE_INVALID: 'error.CODE_INVALID',
  OTP_INVALID: 'error.CODE_INVALID',
  OTP_EXPIRED: 'error.CODE_EXPIRED',
  TOKEN_EXPIRED: 'error.SIGN_IN_AGAIN',
  MFA_LOCKED: 'error.MFA_LOCKED',
  PERMISSION_DENIED: 'error.PERMISSION_DENIED',
  PASSWORD_POLICY_VIOLATION: 'error.PASSWORD_POLICY_VIOLATION',
  NETWORK_ERROR: 'error.NETWORK_ERROR',
  RATE_LIMITED: 'error.RATE_LIMITED',
};

export function describeError(err: unknown, t: Translate): string {
  if (!(err instanceof StrongroomError)) return t('error.unexpected');
  const key = KNOWN[err.errorCode];
  return key ? t(key) : err.message;
}

/** A refusal, in words, with what the server said in detail (password rules) and the request id for support. */
export function ErrorNotice({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (error === null || error === undefined) return null;
  const violations = error instanceof StrongroomError && Array.isArray(error.details.violations)
    ? (error.details.violations as { message?: string }[]).map((v) => v.message).filter((m): m is string => typeof m === 'string')
    : [];
  const requestId = error instanceof StrongroomError ? error.requestId : undefined;
  return (
    <div className="notice notice-error" role="alert">
      <p>{describeError(error, t)}</p>
      {violations.length > 0 ? <ul>{violations.map((v) => <li key={v}>{v}</li>)}</ul> : null}
      {requestId ? <p className="request-id">{t('error.requestId', { id: requestId })}</p> : null}
    </div>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return <div className="notice notice-info" role="status">{children}</div>;
}
