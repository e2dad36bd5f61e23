/**
 * The one-time code messages, in the bank's voice: the code, how long it lasts, and the warning
 * that the bank never asks for it (the usual script of a phone fraudster is "read me the code
 * we just sent"). Plain text, no links. Also the masks that stand for an address in the audit
 * trail and in API answers.
 */
import type { MailMessage } from '../../mail/mailer.js';
import { maskEmail, type Recipient } from '../../mail/templates.js';
import type { OtpMethod } from '../../platform/db/schema.js';
import { addressee } from '../../platform/notices/letter.js';
import { smsText } from '../../platform/notices/sms.js';

/** What a code is for: finishing a sign-in, a signed-in step-up, confirming a new factor, or recovering an account (src/recovery). */
export type OtpPurpose = 'signin' | 'stepup' | 'enroll' | 'recovery';

export interface CodeMessage {
  code: string;
  purpose: OtpPurpose;
  method: OtpMethod;
  validityMinutes: number;
}

function action(m: Pick<CodeMessage, 'purpose' | 'method'>): string {
  if (m.purpose === 'signin') return 'to finish signing in';
  if (m.purpose === 'stepup') return 'to confirm it is you';
  if (m.purpose === 'recovery') return 'to recover your account';
  return m.method === 'email' ? 'to confirm this email address for sign-in codes' : 'to confirm this phone number for sign-in codes';
}

const minutes = (n: number): string => `${n} minute${n === 1 ? '' : 's'}`;

const SUBJECTS: Record<OtpPurpose, string> = {
  signin: 'Your sign-in code',
  stepup: 'Your verification code',
  enroll: 'Confirm your email address for sign-in codes',
  recovery: 'Your account recovery code',
};

/** The email carrying a code. The code stands alone on its `Code:` line. */
export function codeMail(r: Recipient, m: CodeMessage): MailMessage {
  return {
    to: r.to,
    subject: SUBJECTS[m.purpose],
    text: [
      `Dear ${addressee(r)},`,
      '',
      `Here is your one-time code ${action(m)}:`,
      '',
      `Code: ${m.code}`,
      '',
      `It is valid for ${minutes(m.validityMinutes)} and works only once.`,
      '',
      'Never share this code with anyone, not even someone who says they work for the bank: the',
      'bank will never ask you for it. If you did not ask for a code, someone may know your',
      'password: change it, and contact the bank through the number or address you already know.',
      '',
      'Information Security',
      'This message was sent automatically; replies are not read.',
    ].join('\n'),
  };
}

/** The text message carrying a code: one GSM-7 segment (at most 160 characters). */
export function codeSms(sender: string, m: CodeMessage): string {
  return smsText(`${m.code} is your ${sender} code ${action(m)}. Valid ${minutes(m.validityMinutes)}. Never share it: the bank will never ask for it.`);
}

/**
 * `+2547****12`: the country code and operator prefix, and the last two digits, enough for the
 * user to recognise their number and for an auditor to tell numbers apart, not enough to call.
 */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  if (digits.length < 7) return '***';
  const keep = digits.length >= 10 ? 4 : 1;
  return `+${digits.slice(0, keep)}****${digits.slice(-2)}`;
}

/**
 * The masked form of an address, whichever its kind: a code's method (`email`, `sms`, `push`) or
 * a contact's kind (`email`, `phone`). The one mask of the audit trail, API answers and notices,
 * so that the same address always reads the same wherever it appears.
 */
export function maskDestination(kind: OtpMethod | 'phone', address: string): string {
  return kind === 'email' ? maskEmail(address) : maskPhone(address);
}
