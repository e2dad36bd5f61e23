/**
 * The security notices of account recovery, sent to the account's email address on file when a
 * workflow starts and when it completes: whoever receives one and did not ask must be able to
 * act at once. Plain text, no links (a customer reaches the bank by the address they already
 * know), no secret, no code, no recovery id. English: the mail templates exist in English only.
 */
import type { MailMessage } from '../mail/mailer.js';
import type { Recipient } from '../mail/templates.js';
import type { RecoveryKind } from './matrix.js';

export type RecoveryNotice = 'started' | 'completed';

const LOST: Record<RecoveryKind, string> = {
  password: 'password',
  pin: 'USSD PIN',
  mfa: 'second factors (authenticator app, one-time codes)',
  device: 'registered device',
};

const CLOSING = [
  '',
  'If this was not you, someone may be trying to take over your account: contact the bank at once',
  'through the number or address you already know. Never share a code the bank sends you, not',
  'even with someone who says they work for the bank: the bank will never ask you for it.',
  '',
  'Information Security',
  'This message was sent automatically; replies are not read.',
].join('\n');

/** The notice of a recovery of `kind` that started, or completed, for the account. */
export function recoveryNoticeMail(r: Recipient, notice: RecoveryNotice, kind: RecoveryKind): MailMessage {
  const greeting = `Dear ${r.fullName?.trim() || r.username},`;
  const lines = notice === 'started'
    ? [
      `Someone started recovering the ${LOST[kind]} of your account (${r.username}) on the bank's`,
      'sign-in service. Nothing has changed yet: they must first prove who they are with the contacts',
      'and answers on file.',
    ]
    : [
      `The ${LOST[kind]} of your account (${r.username}) has been recovered. Every session of the`,
      'account has been signed out.',
    ];
  return {
    to: r.to,
    subject: notice === 'started' ? 'Someone started recovering your account' : 'Your account has been recovered',
    text: [greeting, '', ...lines, CLOSING].join('\n'),
  };
}
