/**
 * What a workflow shows of contacts, and the stand-ins of a workflow that has none (a made-up
 * account, or a real one without that contact). A stand-in must read like a real answer:
 *
 * - when the identifier typed is itself an email address or a phone number, its own mask is the
 *   destination of that code, exactly as a real account found by it would show;
 * - otherwise the mask is made from a keyed hash of the account (or identifier), so it is the
 *   same on every call and every workflow, as a real contact's mask is.
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

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
/** Where most customers' mail is: a stand-in names one of them. */
const COMMON_DOMAINS = ['gmail.com', 'yahoo.com', 'outlook.com', 'hotmail.com', 'icloud.com'];

/** A stand-in email mask from a keyed hash (hex): `k***@gmail.com`. */
export function standInEmailMask(seedHex: string): string {
  const b = Buffer.from(seedHex, 'hex');
  return `${LETTERS[b[0]! % LETTERS.length]}***@${COMMON_DOMAINS[b[1]! % COMMON_DOMAINS.length]}`;
}

/** A stand-in phone mask from a keyed hash (hex), shaped as `maskPhone` shapes one: `+2547****12`. */
export function standInPhoneMask(seedHex: string): string {
  const b = Buffer.from(seedHex, 'hex');
  const digits = [1 + (b[0]! % 9), ...[1, 2, 3, 4, 5].map((i) => b[i]! % 10)];
  return `+${digits.slice(0, 4).join('')}****${digits.slice(4).join('')}`;
}
