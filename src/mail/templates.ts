/**
 * Plain-text messages, in the bank's voice. The temporary-password message carries that one
 * secret and nothing else secret; the expiry warning carries none. Neither holds a link: a
 * customer should reach the bank by the address they already know, never by a link in a mail.
 */
import type { MailMessage } from './mailer.js';
import { addressee } from '../platform/notices/letter.js';

const SIGNATURE = [
  '',
  'The bank will never ask for your password by email, text message or phone call. If you did not',
  'expect this message, do not act on it: contact the bank through the number or address you',
  'already know.',
  '',
  'Information Security',
  'This message was sent automatically; replies are not read.',
].join('\n');

export interface Recipient {
  to: string;
  username: string;
  fullName: string | null;
}

const greeting = (r: Recipient): string => `Dear ${addressee(r)},`;

/** The temporary password of a new account or of an administrator's reset. */
export function temporaryPasswordMail(r: Recipient, password: string, reason: 'created' | 'reset'): MailMessage {
  const intro = reason === 'created'
    ? 'An account has been opened for you on the bank\'s sign-in service.'
    : 'An administrator has reset the password of your account on the bank\'s sign-in service. Every session of the account has been signed out.';
  return {
    to: r.to,
    subject: reason === 'created' ? 'Your new account: temporary password' : 'Your password has been reset: temporary password',
    text: [
      greeting(r),
      '',
      intro,
      '',
      `Username: ${r.username}`,
      `Temporary password: ${password}`,
      '',
      'This password works once: at your first sign-in you will be asked to choose your own password',
      'straight away. Do not share it, and delete this message once you have signed in.',
      SIGNATURE,
    ].join('\n'),
  };
}

/** The warning sent `warn_days` before the password expires. */
export function passwordExpiryWarningMail(r: Recipient, expiresAt: Date, now: number): MailMessage {
  const days = Math.max(1, Math.ceil((expiresAt.getTime() - now) / 86_400_000));
  const when = `${expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return {
    to: r.to,
    subject: `Your password expires in ${days} day${days === 1 ? '' : 's'}`,
    text: [
      greeting(r),
      '',
      `The password of your account (${r.username}) expires on ${when}, in ${days} day${days === 1 ? '' : 's'}.`,
      '',
      'Please sign in and change it before then. Once it has expired you will have to change it',
      'before you can use your account.',
      SIGNATURE,
    ].join('\n'),
  };
}

/** `j***@bank.example`: enough for an auditor to tell recipients apart, not enough to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${email[0]}***${email.slice(at)}`;
}
