import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { emailMask, identifierKind, maskIdentifier, phoneMask, standInEmailMask, standInPhoneMask } from './masks.js';

const seed = (s: string): string => createHmac('sha256', 'k').update(s).digest('hex');

describe('recovery masks', () => {
  it('tells a phone number, an email address and a username apart', () => {
    expect(identifierKind('+254712345678')).toBe('phone');
    expect(identifierKind('+0712345678')).toBe('username'); // not E.164
    expect(identifierKind('amina@bank.example')).toBe('email');
    expect(identifierKind('amina.otieno')).toBe('username');
  });

  it('never shows an identifier in clear in the audit trail', () => {
    expect(maskIdentifier('Amina@Bank.example')).toBe('a***@bank.example');
    expect(maskIdentifier('+254712345678')).toBe('+2547****78');
    expect(maskIdentifier('amina.otieno')).toBe('am***');
    expect(maskIdentifier('ab')).toBe('***');
  });

  it('threat: enumeration by letter case: an email mask is the same whatever case was typed or stored', () => {
    expect(emailMask('Amina@bank.example')).toBe(emailMask('amina@bank.example'));
    expect(phoneMask('+254712345678')).toBe('+2547****78');
  });

  it('stand-ins have the shape of real masks and are stable for one seed, different across seeds', () => {
    const a = standInEmailMask(seed('a'));
    expect(a).toMatch(/^[a-z]\*\*\*@(gmail|yahoo|outlook|hotmail|icloud)\.com$/);
    expect(standInEmailMask(seed('a'))).toBe(a);
    const p = standInPhoneMask(seed('a'));
    expect(p).toMatch(/^\+[1-9]\d{3}\*\*\*\*\d{2}$/);
    expect(standInPhoneMask(seed('a'))).toBe(p);
    const many = new Set(Array.from({ length: 50 }, (_, i) => standInPhoneMask(seed(String(i)))));
    expect(many.size).toBeGreaterThan(40);
  });
});
