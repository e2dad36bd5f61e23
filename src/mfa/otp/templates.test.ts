import { describe, expect, it } from 'vitest';
import { codeMail, codeSms, maskDestination, maskPhone, type OtpPurpose } from './templates.js';

const PURPOSES: OtpPurpose[] = ['signin', 'stepup', 'enroll'];

describe('masks', () => {
  it('keeps the country code and operator prefix and the last two digits of a phone number', () => {
    expect(maskPhone('+254712345612')).toBe('+2547****12');
    expect(maskPhone('+14155550123')).toBe('+1415****23');
    expect(maskPhone('+3524621')).toBe('+3****21'); // a short number gives away less
    expect(maskPhone('12')).toBe('***');
  });

  it('masks by method or contact kind, a phone the same whether it is an SMS destination or a contact', () => {
    expect(maskDestination('email', 'jane.doe@bank.example')).toBe('j***@bank.example');
    expect(maskDestination('sms', '+254712345612')).toBe('+2547****12');
    expect(maskDestination('phone', '+254712345612')).toBe('+2547****12');
  });
});

describe('messages', () => {
  it('the email carries the code on its own line, its validity, the warning, and no link', () => {
    for (const purpose of PURPOSES) {
      const m = codeMail({ to: 'amina@bank.example', username: 'amina', fullName: 'Amina Otieno' }, { code: '048213', purpose, method: 'email', validityMinutes: 5 });
      expect(m.to).toBe('amina@bank.example');
      expect(m.text).toMatch(/^Code: 048213$/m);
      expect(m.text).toContain('valid for 5 minutes and works only once');
      expect(m.text).toContain('bank will never ask you for it');
      expect(m.text).toContain('Dear Amina Otieno,');
      expect(m.text).not.toMatch(/https?:\/\//);
    }
    expect(codeMail({ to: 'a@b.example', username: 'al', fullName: null }, { code: '000001', purpose: 'signin', method: 'email', validityMinutes: 1 }).text)
      .toContain('valid for 1 minute and');
  });

  it('the text message fits one 160-character segment for every purpose and names the code first', () => {
    for (const purpose of PURPOSES) {
      const text = codeSms('Strongroom', { code: '048213', purpose, method: 'sms', validityMinutes: 30 });
      expect(text.length).toBeLessThanOrEqual(160);
      expect(text.startsWith('048213 is your Strongroom code')).toBe(true);
      expect(text).toContain('never ask for it');
      expect(text).toMatch(/^[\x20-\x7e]*$/); // GSM-7 safe: no character that forces UCS-2 (70 per segment)
    }
  });
});
