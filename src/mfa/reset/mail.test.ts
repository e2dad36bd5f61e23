import { describe, expect, it } from 'vitest';
import { resetNoticeMail, type ResetNotice } from './mail.js';

const to = { to: 'amina@bank.example', username: 'amina.otieno', fullName: 'Amina Otieno' };
const ALL: ResetNotice[] = ['requested', 'approved', 'rejected', 'expired'];

describe('MFA reset notices', () => {
  it('each notice greets the user, names the account and tells someone who did not ask to contact the bank', () => {
    for (const notice of ALL) {
      const m = resetNoticeMail(to, notice);
      expect(m.to).toBe('amina@bank.example');
      expect(m.text.startsWith('Dear Amina Otieno,\n')).toBe(true);
      expect(m.text).toContain('(amina.otieno)');
      expect(m.text).toContain('If you did not ask for this');
      expect(m.text).not.toMatch(/https?:\/\/|www\./); // no links to follow
    }
  });

  it('has one subject per transition', () => {
    const subjects = ALL.map((n) => resetNoticeMail(to, n).subject);
    expect(new Set(subjects).size).toBe(ALL.length);
    expect(resetNoticeMail(to, 'requested').subject).toBe('We received a request to reset your second factor');
  });

  it('falls back to the username without a full name, and says what happens next', () => {
    const m = resetNoticeMail({ ...to, fullName: '  ' }, 'approved');
    expect(m.text).toContain('Dear amina.otieno,');
    expect(m.text).toContain('set up your second factor again');
    expect(resetNoticeMail(to, 'rejected').text).toContain('Your second factors are unchanged');
  });
});
