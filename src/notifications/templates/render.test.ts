import { describe, expect, it } from 'vitest';
import { PUSH_TEXT_MAX } from '../outbox.js';
import { LANGUAGES, NAMED_TEMPLATES } from './catalogue.js';
import { braceProblem, fill, placeholdersOf } from './render.js';
import { allowedPlaceholders, textProblems } from './service.js';

describe('placeholders', () => {
  it('are names in braces, each listed once in order of first use', () => {
    expect(placeholdersOf('{amount} {currency} to {credit_name}; {amount} again')).toEqual(['amount', 'currency', 'credit_name']);
    expect(placeholdersOf('no placeholder, {not one}, {1st}, {}')).toEqual([]);
  });

  it('a brace outside a placeholder makes a template unusable (a message must never go out with braces in it)', () => {
    expect(braceProblem('{amount} {currency}')).toBeUndefined();
    for (const bad of ['{amount', 'amount}', '{{amount}}', '{not one}', '{}', '{1st}']) expect(braceProblem(bad), bad).toMatch(/brace/);
  });

  it('fills in one pass: a value holding a placeholder stays text (template injection)', () => {
    expect(fill('{debit_name} sent {amount}', { debit_name: '{amount}', amount: '10.00' })).toBe('{amount} sent 10.00');
    expect(fill('{a}{b}', { a: '$&', b: '$1' })).toBe('$&$1'); // replacement patterns are not interpreted
  });
});

describe('the named templates (SPEC)', () => {
  it('exist in en, pt and fr; each language uses every declared placeholder and no other, and no stray brace', () => {
    expect(Object.keys(NAMED_TEMPLATES).sort()).toEqual(['DEPOSIT', 'INITIAL_DEPOSIT', 'INTERNAL_TRANSFER', 'send2FA']);
    for (const [name, t] of Object.entries(NAMED_TEMPLATES)) {
      for (const lang of LANGUAGES) {
        const { subject, message } = t.text[lang];
        expect(textProblems(name, { subject, message }), `${name}/${lang}`).toEqual([]);
        expect(new Set([...placeholdersOf(subject), ...placeholdersOf(message)]), `${name}/${lang}`).toEqual(new Set(t.placeholders));
      }
    }
  });

  it('INTERNAL_TRANSFER has SPEC\'s seven placeholders', () => {
    expect([...NAMED_TEMPLATES.INTERNAL_TRANSFER!.placeholders].sort()).toEqual(['amount', 'credit_account', 'credit_name', 'currency', 'debit_account', 'debit_name', 'transaction_reference_id']);
  });

  it('fit SPEC\'s 240 characters once filled with long but ordinary values', () => {
    const long: Record<string, string> = { debit_name: 'Maria da Conceição Fernandes', credit_name: 'Jean-Baptiste Nkurunziza', amount: '1,250,000.00', currency: 'XOF', debit_account: '****4471', credit_account: '****9012', transaction_reference_id: 'TRX-20261126-000042', account: '****4471', name: 'Maria da Conceição Fernandes', code: '048213', validity_minutes: '5' };
    for (const [name, t] of Object.entries(NAMED_TEMPLATES)) {
      for (const lang of LANGUAGES) {
        expect([...fill(t.text[lang].message, long)].length, `${name}/${lang}`).toBeLessThanOrEqual(PUSH_TEXT_MAX);
        expect(fill(t.text[lang].message, long)).not.toMatch(/[{}]/);
      }
    }
  });

  it('an administrator may reword one but not give it a placeholder its callers do not send', () => {
    expect(textProblems('DEPOSIT', { subject: 'Deposit', message: '{amount} {currency} in.' })).toEqual([]);
    expect(textProblems('DEPOSIT', { subject: 'Deposit', message: '{amount} from {sender}.' })).toEqual([{ field: 'message', message: expect.stringContaining('{sender}') as string }]);
    // A template of the administrators' own may use any placeholder; values may name what its languages use.
    expect(textProblems('LOAN_DUE', { subject: 'Loan due', message: '{amount} due on {date}' })).toEqual([]);
    expect(allowedPlaceholders('LOAN_DUE', [{ subject: '{title}', message: '{amount}' }, { subject: 'x', message: '{amount} {date}' }])).toEqual(['title', 'amount', 'date']);
    expect(allowedPlaceholders('DEPOSIT', [])).toEqual(['amount', 'currency', 'account', 'transaction_reference_id']);
  });
});
