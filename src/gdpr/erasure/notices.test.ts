import { describe, expect, it } from 'vitest';
import { gsm7Length } from '../../platform/notices/sms.js';
import { erasureMail, erasureSms } from './notices.js';

const base = { username: 'amina.otieno', fullName: 'Amina Otieno', eraseAfter: new Date('2026-12-28T05:00:00Z') };

describe('erasure notices', () => {
  it('are in the account\'s language (English when unset), with the date, the cancel link when there is one, and no contact', () => {
    const en = erasureMail('amina@bank.example', { ...base, notice: 'requested', language: null, cancelLink: 'https://auth.bank.example/gdpr/erasure/cancel#erx_x' });
    expect(en.subject).toBe('Your account will be erased');
    expect(en.text).toContain('2026-12-28 05:00');
    expect(en.text).toContain('https://auth.bank.example/gdpr/erasure/cancel#erx_x');
    expect(en.text).not.toContain('amina@bank.example');
    const pt = erasureMail('a@b.example', { ...base, notice: 'requested', language: 'pt' });
    expect(pt.subject).toBe('A sua conta vai ser apagada');
    expect(pt.text).toContain('nome de utilizador e palavra-passe'); // no link configured: cancel with the credentials
    expect(erasureMail('a@b.example', { ...base, notice: 'cancelled', language: 'fr' }).subject).toBe("L'effacement de votre compte est annulé");
    expect(erasureSms({ ...base, notice: 'requested', language: 'fr' })).toContain('2026-12-28 05:00');
    for (const language of ['en', 'pt', 'fr'] as const) expect(gsm7Length(erasureSms({ ...base, notice: 'requested', language }))).toBeLessThanOrEqual(160);
    expect(erasureSms({ ...base, notice: 'requested', language: 'pt' })).toContain('sera apagada em 2026-12-28 05:00 UTC'); // GSM-7: no UCS-2 for one accent
  });
});
