import { describe, expect, it } from 'vitest';
import { allRepeated, pinViolations, sequential, sharesPhoneDigits, type PinRules } from './rules.js';

/** Migration 009's defaults. */
const DEFAULTS: PinRules = { minLength: 4, maxLength: 6, digitsOnly: true, noRepeatedDigits: true, noSequentialDigits: true, phoneDigitsRun: 4, historyCount: 4 };
const PHONE = '+254712345678';

const rulesOf = (pin: string, rules: PinRules = DEFAULTS, phone: string | null = PHONE): string[] => pinViolations(pin, rules, { phone }).map((v) => v.rule);

describe('PIN rules', () => {
  it.each(['2580', '1357', '9074', '50219', '740391', '1235', '1122'])('accepts %s', (pin) => {
    expect(rulesOf(pin)).toEqual([]);
  });

  it.each([
    ['digits_only', '12a4'], ['digits_only', '١٢٣٤'], ['digits_only', '25 80'], ['digits_only', '-2580'],
    ['min_length', '258'], ['min_length', ''], ['max_length', '2580193'],
    ['repeated_digits', '1111'], ['repeated_digits', '000000'],
    ['sequential_digits', '1234'], ['sequential_digits', '9876'], ['sequential_digits', '0123'], ['sequential_digits', '3210'],
    ['sequential_digits', '456789'], ['sequential_digits', '7890'], ['sequential_digits', '1098'],
    ['contains_phone_digits', '7123'], ['contains_phone_digits', '4712'], ['contains_phone_digits', '905678'], ['contains_phone_digits', '2547'],
  ])('refuses %s: %s', (rule, pin) => {
    expect(rulesOf(pin)).toContain(rule);
  });

  it('reports every broken rule at once, each with a message', () => {
    const v = pinViolations('1x', DEFAULTS, { phone: PHONE });
    expect(v.map((x) => x.rule)).toEqual(['digits_only', 'min_length']);
    for (const x of v) expect(x.message.length).toBeGreaterThan(0);
    expect(rulesOf('1111111')).toEqual(['max_length', 'repeated_digits']);
  });

  it('has no phone rule without a phone number, or with the rule off', () => {
    expect(rulesOf('7123', DEFAULTS, null)).toEqual([]);
    expect(rulesOf('7123', { ...DEFAULTS, phoneDigitsRun: null })).toEqual([]);
    expect(rulesOf('5671', { ...DEFAULTS, phoneDigitsRun: 3 })).toEqual(['contains_phone_digits']);
  });

  it('follows the row: the repeated and sequential rules can be turned off, the lengths changed', () => {
    const loose = { ...DEFAULTS, noRepeatedDigits: false, noSequentialDigits: false, minLength: 6, maxLength: 8 };
    expect(rulesOf('111111', loose)).toEqual([]);
    expect(rulesOf('13579', loose)).toEqual(['min_length']);
    expect(rulesOf('12345678', loose, null)).toEqual([]);
  });

  it('the helpers: only whole-PIN repeats and runs, runs of the phone\'s digits in order', () => {
    expect(allRepeated('1112')).toBe(false);
    expect(allRepeated('7')).toBe(false);
    expect(sequential('1245')).toBe(false);
    expect(sequential('1357')).toBe(false); // steps of 2 are not a run
    expect(sequential('12')).toBe(false);
    expect(sharesPhoneDigits('8765', PHONE, 4)).toBe(false); // reversed is not the phone's order
    expect(sharesPhoneDigits('0254', '+254712345678', 3)).toBe(true);
  });
});
