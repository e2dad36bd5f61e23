import { describe, expect, it } from 'vitest';
import { addressee, letterText } from './letter.js';
import { utcMinute } from './time.js';

describe('notice letters', () => {
  it('greeting, blank line, paragraphs separated by blank lines, blank line, closing', () => {
    const text = letterText({ greeting: 'Dear Amina,', paragraphs: ['First.', ['A list:', '- one', '- two']], closing: 'Information Security\nSent automatically.' });
    expect(text).toBe('Dear Amina,\n\nFirst.\n\nA list:\n- one\n- two\n\nInformation Security\nSent automatically.');
    expect(letterText({ greeting: 'Hi,', paragraphs: [], closing: ['A', 'B'] })).toBe('Hi,\n\nA\nB');
  });

  it('greets the full name, or the username when there is none', () => {
    expect(addressee({ fullName: '  Amina Otieno ', username: 'amina' })).toBe('Amina Otieno');
    expect(addressee({ fullName: null, username: 'amina' })).toBe('amina');
    expect(addressee({ fullName: '   ', username: 'amina' })).toBe('amina');
    expect(addressee({ fullName: "João D'Ávila-Mbeki Jr.", username: 'joao' })).toBe("João D'Ávila-Mbeki Jr.");
  });

  it('threat: a stolen session writes a phone number or a link into the full name, which the bank\'s own security notice would carry — the username is greeted instead', () => {
    for (const planted of ['Amina, call +44 20 7946 0000 to cancel', 'Amina see https://bank-secure.example', 'Amina\nYour account is locked', 'A'.repeat(81), '.Amina', 'Amina <b>', 'Amina (call 0800)']) {
      expect(addressee({ fullName: planted, username: 'amina.otieno' }), planted).toBe('amina.otieno');
    }
  });

  it('shows an instant in UTC, to the minute', () => {
    expect(utcMinute(new Date('2026-03-06T09:30:59.999Z'))).toBe('2026-03-06 09:30');
    expect(utcMinute(new Date('2026-12-31T23:59:00+03:00'))).toBe('2026-12-31 20:59');
  });
});
