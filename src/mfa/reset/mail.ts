/**
 * The messages of the MFA reset workflow, in the bank's voice and in the style of
 * src/mail/templates.ts: plain text, no links (a customer reaches the bank by the address they
 * already know), no secret of any kind. Each one is a security notice: whoever receives it and
 * did not ask for a reset must be able to tell the bank at once.
 */
import type { MailMessage } from '../../mail/mailer.js';
import type { Recipient } from '../../mail/templates.js';
import { addressee } from '../../platform/notices/letter.js';

/** The notices the workflow sends; one per transition the user should hear about. */
export type ResetNotice = 'requested' | 'approved' | 'rejected' | 'expired';

const CLOSING = [
  '',
  'If you did not ask for this, someone may know your password: contact the bank at once through',
  'the number or address you already know, and do not act on any message that asks you to sign in.',
  'The bank will never ask for your password or your codes by email, text message or phone call.',
  '',
  'Information Security',
  'This message was sent automatically; replies are not read.',
].join('\n');

const BODY: Record<ResetNotice, { subject: string; lines: (username: string) => string[] }> = {
  requested: {
    subject: 'We received a request to reset your second factor',
    lines: (username) => [
      `We received a request to remove the second factors (authenticator app, one-time codes by email`,
      `or text message, backup codes) of your account (${username}) on the bank's sign-in service.`,
      '',
      'Nothing has changed yet: an administrator of the bank will review the request. We will write',
      'to you again when it has been decided.',
    ],
  },
  approved: {
    subject: 'Your second-factor reset has been approved',
    lines: (username) => [
      `Your request to reset the second factors of your account (${username}) has been approved.`,
      '',
      'Every second factor and backup code of the account has been removed, and every session has',
      'been signed out. Please sign in with your password and set up your second factor again',
      'straight away.',
    ],
  },
  rejected: {
    subject: 'Your second-factor reset request was not approved',
    lines: (username) => [
      `Your request to reset the second factors of your account (${username}) was not approved.`,
      '',
      'Your second factors are unchanged and keep working. If you still cannot use them, please',
      'contact the bank so that we can help you in person.',
    ],
  },
  expired: {
    subject: 'Your second-factor reset request has lapsed',
    lines: (username) => [
      `Your request to reset the second factors of your account (${username}) was not decided in time`,
      'and has lapsed. Your second factors are unchanged.',
      '',
      'If you still need a reset, you may ask again, or contact the bank.',
    ],
  },
};

/** The notice for one transition of the user's reset request. */
export function resetNoticeMail(r: Recipient, notice: ResetNotice): MailMessage {
  const b = BODY[notice];
  return {
    to: r.to,
    subject: b.subject,
    text: [`Dear ${addressee(r)},`, '', ...b.lines(r.username), CLOSING].join('\n'),
  };
}
