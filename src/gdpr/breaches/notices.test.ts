import { describe, expect, it } from 'vitest';
import { gsm7Length } from '../../platform/notices/sms.js';
import { breachMail, breachSms } from './notices.js';

const base = {
  username: 'amina.otieno', fullName: 'Amina Otieno', occurredFrom: new Date('2026-03-01T08:00:00Z'), occurredTo: new Date('2026-03-01T10:30:00Z'),
  categories: ['contact_details', 'credentials'] as const, contactPoint: 'dpo@bank.example',
};

describe('breach notices', () => {
  it('speak the account holder\'s language, name the window, the categories and the contact point', () => {
    const en = breachMail('a@bank.example', { ...base, language: null });
    expect(en.subject).toBe('Important: a security incident may have affected your account');
    expect(en.text).toContain('between 2026-03-01 08:00 and 2026-03-01 10:30 (UTC)');
    expect(en.text).toContain('- your email address and phone number');
    expect(en.text).toContain('Change your password or PIN');
    expect(en.text).toContain('contact: dpo@bank.example');
    expect(breachMail('a@bank.example', { ...base, language: 'pt' }).subject).toBe('Importante: um incidente de segurança pode ter afetado a sua conta');
    expect(breachMail('a@bank.example', { ...base, language: 'fr' }).text).toContain('Bonjour Amina Otieno,');
  });

  it('advise a password change only when secrets were exposed, and carry no link', () => {
    const mail = breachMail('a@bank.example', { ...base, language: 'en', categories: ['audit_data'] });
    expect(mail.text).not.toContain('Change your password');
    expect(mail.text).not.toMatch(/https?:/);
  });

  it('fit one GSM-7 SMS segment in every language, accents GSM-7 lacks removed', () => {
    for (const language of ['en', 'pt', 'fr', null] as const) expect(gsm7Length(breachSms({ language }))).toBeLessThanOrEqual(160);
    expect(breachSms({ language: 'pt' })).toContain('um incidente de seguranca pode ter afetado a sua conta');
    expect(breachSms({ language: null })).toBe(breachSms({ language: 'en' }));
  });
});
