import { describe, expect, it } from 'vitest';
import { maskDestination } from '../../mfa/otp/templates.js';
import type { NoticeLanguage } from '../../platform/notices/language.js';
import { gsm7Length } from '../../platform/notices/sms.js';
import { contactCodeMail, contactCodeSms, contactNoticeMail, contactNoticeSms, type ContactKind, type ContactNotice, type NoticeStage } from './messages.js';

const LANGUAGES: NoticeLanguage[] = ['en', 'pt', 'fr'];
const STAGES: NoticeStage[] = ['requested', 'changed'];
const KINDS: ContactKind[] = ['email', 'phone'];
const SENDER = 'Strongroom'; // the default SMS_SENDER_ID
const amina = (language: NoticeLanguage | null) => ({ username: 'amina', fullName: 'Amina Otieno', language });
const PHONE = maskDestination('phone', '+254712345678');
const EMAIL = maskDestination('email', 'amina.otieno@bank.example');
const notice = (stage: NoticeStage, kind: ContactKind, newMasked = kind === 'email' ? EMAIL : PHONE): ContactNotice => ({ stage, kind, newMasked });
/** Printable ASCII but the backtick, and the accented letters of the GSM-7 default alphabet (3GPP TS 23.038). */
const inGsm7 = (text: string): boolean => /^[\x20-\x5F\x61-\x7E£¥èéùìòÇØøÅåÄÖÑÜäöñüàÉÆæß§¿¡¤]*$/.test(text);

describe('contact change messages', () => {
  it('the code mail carries the code alone on its line, and no link, in every language', () => {
    const labels = { en: 'Code: ', pt: 'Código: ', fr: 'Code : ' };
    for (const language of LANGUAGES) {
      const m = contactCodeMail('new@bank.example', amina(language), '042917', 5);
      expect(m.to).toBe('new@bank.example');
      expect(m.text).toMatch(new RegExp(`^${labels[language]}042917$`, 'm'));
      expect(m.text).toContain('Amina Otieno');
      expect(m.text).not.toMatch(/https?:/);
    }
    expect(contactCodeMail('new@bank.example', amina('en'), '042917', 5).text).toContain('Dear Amina Otieno,');
  });

  it('each language has its own words in every message; no language means English', () => {
    const all = (language: NoticeLanguage | null): string[] => [
      contactCodeMail('new@bank.example', amina(language), '042917', 5).subject,
      contactCodeSms(SENDER, '042917', 5, language),
      ...STAGES.flatMap((stage) => KINDS.flatMap((kind) => [
        contactNoticeMail('old@bank.example', amina(language), notice(stage, kind)).subject,
        contactNoticeMail('old@bank.example', amina(language), notice(stage, kind)).text,
        contactNoticeSms(SENDER, notice(stage, kind), language),
      ])),
    ];
    const [en, pt, fr] = LANGUAGES.map(all);
    for (let i = 0; i < en!.length; i++) expect(new Set([en![i], pt![i], fr![i]]).size, en![i]).toBe(3);
    expect(all(null)).toEqual(en);
    expect(contactNoticeMail('old@bank.example', amina('pt'), notice('changed', 'email')).subject).toBe('O seu endereço de email foi alterado');
    expect(contactNoticeMail('old@bank.example', amina('fr'), notice('changed', 'phone')).subject).toBe('Votre numéro de téléphone a été modifié');
    expect(contactNoticeSms(SENDER, notice('requested', 'phone'), 'pt')).toContain('Nao foi voce?');
    expect(contactNoticeSms(SENDER, notice('requested', 'phone'), 'fr')).toContain('Pas vous ?');
  });

  it('every text message is GSM-7 and fits one segment with the default sender, the code first, the new number shown', () => {
    for (const language of LANGUAGES) {
      for (const minutes of [1, 5, 15, 60]) {
        const code = contactCodeSms(SENDER, '042917', minutes, language);
        expect(code).toMatch(/^042917 /);
        expect(inGsm7(code), code).toBe(true);
        expect(gsm7Length(code), code).toBeLessThanOrEqual(160);
      }
      for (const stage of STAGES) {
        for (const kind of KINDS) {
          const sms = contactNoticeSms(SENDER, notice(stage, kind), language);
          expect(inGsm7(sms), sms).toBe(true);
          expect(gsm7Length(sms), sms).toBeLessThanOrEqual(160);
          expect(sms, sms).toContain(kind === 'email' ? EMAIL : PHONE);
        }
      }
    }
  });

  it('a long email domain: the notice SMS leaves out the address, never the warning, in every language', () => {
    const warning = { en: 'Not you?', pt: 'Nao foi voce?', fr: 'Pas vous ?' };
    const masked = maskDestination('email', `a@${'x'.repeat(150)}.example`);
    for (const language of LANGUAGES) {
      for (const stage of STAGES) {
        const sms = contactNoticeSms(SENDER, notice(stage, 'email', masked), language);
        expect(gsm7Length(sms), sms).toBeLessThanOrEqual(160);
        expect(sms).toContain(warning[language]);
        expect(sms).not.toContain('xxx');
      }
    }
  });

  it('notices show the new address masked, never whole', () => {
    for (const language of LANGUAGES) {
      const mail = contactNoticeMail('old@bank.example', amina(language), notice('requested', 'email', maskDestination('email', 'thief@evil.example')));
      expect(mail.text).toContain('t***@evil.example');
      expect(mail.text).not.toContain('thief@');
      const sms = contactNoticeSms(SENDER, notice('changed', 'phone', maskDestination('phone', '+254712345678')), language);
      expect(sms).toContain('+2547****78');
      expect(sms).not.toContain('712345678');
    }
    expect(contactNoticeMail('old@bank.example', amina(null), notice('requested', 'email')).subject).toBe('A change of your email address was requested');
  });
});
