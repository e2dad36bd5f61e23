import { describe, expect, it } from 'vitest';
import type { NoticeLanguage } from '../platform/notices/language.js';
import { RECOVERY_KINDS } from './matrix.js';
import { noticeMail, noticePush, noticeSms, type RecoveryNotice } from './notices.js';

const NOTICES: RecoveryNotice[] = ['started', 'waiting', 'completed', 'cancelled'];
const LANGUAGES: NoticeLanguage[] = ['en', 'pt', 'fr'];
const LINK = 'https://auth.bank.example/recovery/cancel#rcx_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const base = { username: 'amina.otieno', fullName: 'Amina Otieno', until: new Date(Date.UTC(2026, 2, 6, 9, 30)), cancelLink: LINK };

describe('recovery notices', () => {
  it('every notice exists in en, pt and fr, each language its own words, naming the account', () => {
    for (const notice of NOTICES) {
      const subjects = new Set<string>();
      for (const language of LANGUAGES) {
        for (const kind of RECOVERY_KINDS) {
          const mail = noticeMail('a@bank.example', { ...base, notice, kind, language });
          expect(mail.text).toContain('amina.otieno');
          expect(mail.text).toContain('Amina Otieno');
          expect(noticeSms({ ...base, notice, kind, language })).toContain('amina.otieno');
          expect(noticePush({ ...base, notice, kind, language }).title).toBe(mail.subject);
          subjects.add(mail.subject);
        }
      }
      expect(subjects.size).toBe(3);
    }
  });

  it('the cooling-off notice says when it takes effect; every notice but the cancellation carries the link; no SMS carries one', () => {
    for (const language of LANGUAGES) {
      expect(noticeMail('a@bank.example', { ...base, notice: 'waiting', kind: 'mfa', language }).text).toContain('2026-03-06 09:30');
      for (const notice of NOTICES) {
        const text = noticeMail('a@bank.example', { ...base, notice, kind: 'device', language }).text;
        if (notice === 'cancelled') expect(text).not.toContain('rcx_');
        else expect(text).toContain(LINK);
        expect(noticeSms({ ...base, notice, kind: 'device', language })).not.toContain('http');
      }
    }
  });

  it('without a link (RECOVERY_CANCEL_URL unset), the notice says to contact the bank; no language means English', () => {
    const text = noticeMail('a@bank.example', { ...base, cancelLink: undefined, notice: 'started', kind: 'password', language: null }).text;
    expect(text).toContain('contact the bank at once');
    expect(text).not.toContain('rcx_');
  });

  it('the SMS drops the accents GSM-7 lacks (one segment, not UCS-2); the push keeps them', () => {
    const pt = { ...base, notice: 'started' as const, kind: 'password' as const, language: 'pt' as const };
    expect(noticeSms(pt)).toBe('Banco: alguém iniciou a recuperacao da conta amina.otieno. Nao foi voce? Veja o email para a interromper.');
    expect(noticePush(pt).body).toBe('Banco: alguém iniciou a recuperação da conta amina.otieno. Não foi você? Veja o email para a interromper.');
    expect(noticeSms({ ...pt, notice: 'completed', kind: 'mfa', language: 'fr' })).toBe('Banque : le compte amina.otieno a été récupéré (seconds facteurs). Pas vous ? Appelez la banque.');
  });
});
