import { describe, expect, it } from 'vitest';
import { emailMask, identifierKind, maskIdentifier, phoneMask } from './masks.js';

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
});
