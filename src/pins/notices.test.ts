import { describe, expect, it } from 'vitest';
import { NOTICE_LANGUAGES } from '../platform/notices/language.js';
import { fitsOneSegment } from '../platform/notices/sms.js';
import { pinResetMail, pinResetSms } from './notices.js';

const AT = new Date('2026-12-28T23:59:00Z');
/** GSM-7 as these notices write it (src/platform/notices/every-sms.test.ts). */
const GSM7 = /^[\x20-\x5F\x61-\x7E£¥èéùìòÇØøÅåÄÖÑÜäöñüàÉÆæß§¿¡¤]*$/;

describe('the PIN reset notice', () => {
  it('as SMS: GSM-7, one segment, in every language, with the longest sender; it says when and to call', () => {
    for (const language of [...NOTICE_LANGUAGES, null]) {
      for (const sender of ['Strongroom', 'BankSecure1']) {
        const text = pinResetSms(sender, AT, language);
        expect(text, `${language}`).toMatch(GSM7);
        expect(fitsOneSegment(text), `${language}: ${text}`).toBe(true);
        expect(text).toContain('2026-12-28 23:59 UTC');
      }
    }
  });

  it('as email: greets a plain name, names the account and the time, and says to call the bank; never a link', () => {
    for (const language of NOTICE_LANGUAGES) {
      const m = pinResetMail('a@bank.example', { username: 'amina.otieno', fullName: 'Call +44 20 7946 0000 now', language }, AT);
      expect(m.text).toContain('(amina.otieno)');
      expect(m.text).toContain('2026-12-28 23:59 (UTC)');
      expect(m.text).not.toContain('+44');
      expect(m.text).not.toMatch(/https?:/);
    }
  });
});
