/**
 * Every text message the service sends to an account holder, rendered in every language with the
 * longest inputs it can meet, is written in GSM-7 and fits one segment (see sms.ts for why). The
 * texts live in their capabilities; they are gathered here so that a new notice, language or
 * longer wording cannot slip past the rule.
 */
import { describe, expect, it } from 'vitest';
import { breachSms } from '../../gdpr/breaches/notices.js';
import { erasureSms, type ErasureNotice } from '../../gdpr/erasure/notices.js';
import { contactCodeSms, contactNoticeSms, type ContactKind, type NoticeStage } from '../../gdpr/profile/messages.js';
import { codeSms, maskDestination, type OtpPurpose } from '../../mfa/otp/templates.js';
import { passkeyNoticeSms, type PasskeyNoticeKind } from '../../passkeys/notices.js';
import { RECOVERY_KINDS } from '../../recovery/matrix.js';
import { noticeSms, type RecoveryNotice } from '../../recovery/notices.js';
import { signInNoticeSms, type SignInNoticeKind } from '../../risk/responses/notices.js';
import { NOTICE_LANGUAGES, type NoticeLanguage } from './language.js';
import { gsm7Length } from './sms.js';

const LANGUAGES: (NoticeLanguage | null)[] = [...NOTICE_LANGUAGES, null];
/** The longest username the service accepts (64 characters). */
const USERNAME = `amina.otieno.wanjiru.kamau-${'x'.repeat(37)}`;
/** The default SMS_SENDER_ID, and the longest alphanumeric sender a network carries (11 characters). */
const SENDERS = ['Strongroom', 'BankSecure1'];
const AT = new Date('2026-12-28T23:59:00Z');
/** Masked new addresses: a phone, and email domains short, long and too long to show. */
const MASKED: Record<ContactKind, string[]> = {
  phone: [maskDestination('phone', '+254712345678'), maskDestination('phone', '+3524621')],
  email: [maskDestination('email', 'amina@bank.example'), maskDestination('email', `a@${'long-subsidiary-name.'.repeat(3)}bank.example`), maskDestination('email', `a@${'x'.repeat(200)}.example`)],
};
/** Places a sign-in notice names: unknown, short, exactly the longest kept whole, a city too long, a country too long (its code). */
const PLACES: [string | null, string | null][] = [[null, null], ['Lisbon', 'PT'], ['Santa Maria da Feira', 'PT'], ['Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch', 'GB'], [null, 'GS'], ['Abidjan', 'CI']];
/** GSM-7 default alphabet as written by these notices: printable ASCII but the backtick, and its accented letters (3GPP TS 23.038). */
const GSM7 = /^[\x20-\x5F\x61-\x7E£¥èéùìòÇØøÅåÄÖÑÜäöñüàÉÆæß§¿¡¤]*$/;

function everySms(): { what: string; text: string }[] {
  const all: { what: string; text: string }[] = [];
  const add = (what: string, text: string): void => { all.push({ what, text }); };
  for (const language of LANGUAGES) {
    for (const notice of ['started', 'waiting', 'completed', 'cancelled', 'stopped'] satisfies RecoveryNotice[]) {
      for (const kind of RECOVERY_KINDS) {
        add(`recovery ${notice} ${kind} ${language}`, noticeSms({ notice, kind, language, username: USERNAME, fullName: 'Amina Otieno', until: AT, cancelLink: 'https://auth.bank.example/recovery/cancel#rcx_x' }));
      }
    }
    add(`breach ${language}`, breachSms({ language }));
    for (const kind of ['signed_in', 'second_factor_required', 'refused'] satisfies SignInNoticeKind[]) {
      for (const [city, country] of PLACES) {
        for (const notMeLink of ['https://auth.bank.example/security/not-me#rnm_x', undefined]) {
          add(`sign-in ${kind} ${city} ${country} ${notMeLink ? 'link' : 'no link'} ${language}`, signInNoticeSms({
            kind, language, username: USERNAME, fullName: 'Amina Otieno', at: AT, country, city, device: { browser: 'Samsung Internet', system: 'Android' }, channel: 'mobile', ...(notMeLink ? { notMeLink } : {}),
          }));
        }
      }
    }
    for (const notice of ['requested', 'cancelled'] satisfies ErasureNotice[]) {
      add(`erasure ${notice} ${language}`, erasureSms({ notice, language, username: USERNAME, fullName: 'Amina Otieno', eraseAfter: AT }));
    }
    for (const sender of SENDERS) {
      for (const minutes of [1, 5, 30]) add(`contact code ${sender} ${minutes} ${language}`, contactCodeSms(sender, '042917', minutes, language));
      for (const stage of ['requested', 'changed'] satisfies NoticeStage[]) {
        for (const kind of ['email', 'phone'] satisfies ContactKind[]) {
          for (const newMasked of MASKED[kind]) add(`contact ${stage} ${kind} ${newMasked.length} ${sender} ${language}`, contactNoticeSms(sender, { stage, kind, newMasked }, language));
        }
      }
    }
  }
  for (const sender of SENDERS) {
    for (const purpose of ['signin', 'stepup', 'enroll', 'recovery'] satisfies OtpPurpose[]) {
      for (const validityMinutes of [1, 30]) add(`otp ${purpose} ${sender} ${validityMinutes}`, codeSms(sender, { code: '048213', purpose, method: 'sms', validityMinutes }));
    }
    for (const language of LANGUAGES) {
      for (const kind of ['added', 'removed'] satisfies PasskeyNoticeKind[]) add(`passkey ${kind} ${sender} ${language}`, passkeyNoticeSms(sender, { kind, at: AT, byAdmin: true }, language));
    }
  }
  return all;
}

describe('every text message', () => {
  it('is GSM-7 and fits one 160-septet segment, in every language, with the longest username and sender', () => {
    const all = everySms();
    expect(all.length).toBe(4 * (20 + 1 + 2 + 2 * (3 + 2 * (3 + 2)) + 3 * 6 * 2) + 2 * 4 * 2 + 2 * 4 * 2);
    for (const { what, text } of all) {
      expect(GSM7.test(text), `${what}: ${text}`).toBe(true);
      expect(gsm7Length(text), `${what}: ${text}`).toBeLessThanOrEqual(160);
    }
  });

  it('names the account in the recovery notices, and the date in the erasure and cooling-off ones', () => {
    for (const language of LANGUAGES) {
      for (const notice of ['started', 'waiting', 'completed', 'cancelled', 'stopped'] satisfies RecoveryNotice[]) {
        expect(noticeSms({ notice, kind: 'mfa', language, username: USERNAME, fullName: null, until: AT })).toContain(USERNAME);
      }
      expect(noticeSms({ notice: 'waiting', kind: 'mfa', language, username: USERNAME, fullName: null, until: AT })).toContain('2026-12-28 23:59 UTC');
      expect(erasureSms({ notice: 'requested', language, username: USERNAME, fullName: null, eraseAfter: AT })).toContain('2026-12-28 23:59 UTC');
    }
  });
});
