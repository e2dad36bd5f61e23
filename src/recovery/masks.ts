/**
 * What a workflow shows of contacts: only what the person typed. When the identifier is itself
 * an email address or a phone number, a code of that kind shows its mask (the account was found
 * by it, so it is the contact on file); any other code says "on file" (`ON_FILE`), for a real
 * account and a made-up one alike.
 *
 * Email masks are lower-cased (`j***@bank.example`): the case a person typed must not make a real
 * account's mask differ from a stand-in's.
 */
import { maskEmail } from '../mail/templates.js';
import { maskPhone } from '../mfa/otp/templates.js';

/** An E.164 number (`+` and 7 to 15 digits): a phone identifier, looked up as USSD does. */
export const PHONE_IDENTIFIER = /^\+[1-9][0-9]{6,14}$/;

export type IdentifierKind = 'username' | 'email' | 'phone';

export function identifierKind(identifier: string): IdentifierKind {
  if (PHONE_IDENTIFIER.test(identifier)) return 'phone';
  return identifier.includes('@') ? 'email' : 'username';
}

/** The identifier as the audit trail shows it for a workflow with no account: never in clear. */
export function maskIdentifier(identifier: string): string {
  const kind = identifierKind(identifier);
  if (kind === 'email') return maskEmail(identifier.toLowerCase());
  if (kind === 'phone') return maskPhone(identifier);
  const chars = [...identifier];
  return chars.length <= 2 ? '***' : `${chars.slice(0, 2).join('')}***`;
}

export const emailMask = (email: string): string => maskEmail(email.toLowerCase());
export const phoneMask = (phone: string): string => maskPhone(phone);

/**
 * What a code's destination says when the identifier typed was not that contact (a username, or
 * an email address for an SMS code): the same words for every account, so nothing about the
 * account on file shows. A mask of the account's real contact would tell a real account from a
 * made-up one (its country code, its mail domain, the same mask under two identifiers).
 */
export const ON_FILE = { email_code: 'the email address on file', sms_code: 'the phone number on file' } as const;
