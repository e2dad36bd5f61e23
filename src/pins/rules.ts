/**
 * The PIN rules (issue 10, section 1), pure: what a new PIN may not be. The limits come from
 * the `pin` row of `password_restrictions` (migration 009), so a bank tunes them there. Every
 * broken rule is reported, each with a stable `rule` name, as the password rules are.
 *
 * Rules: `digits_only`, `min_length`, `max_length`, `repeated_digits` (one digit throughout:
 * 1111), `sequential_digits` (each digit one more, or one less, than the one before, counting
 * 9 and 0 as neighbours as on a keypad: 1234, 9876, 0123, 7890), `contains_phone_digits` (a run
 * of `phone_digits_run` digits of the user's own phone number), and `history` (checked by
 * the service: it needs bcrypt). Not the birth year: users have no birth date yet.
 */
import type { Violation } from '../credentials/policy.js';

export interface PinRules {
  minLength: number;
  maxLength: number;
  digitsOnly: boolean;
  noRepeatedDigits: boolean;
  noSequentialDigits: boolean;
  /** Refuse a run of this many digits of the user's phone number; null: off. */
  phoneDigitsRun: number | null;
  /** The last N PINs may not be used again. */
  historyCount: number;
}

/** True when every digit is the same (1111, 000000). */
export function allRepeated(pin: string): boolean {
  return pin.length > 1 && [...pin].every((c) => c === pin[0]);
}

/** True when each digit is one more (or each one less) than the one before, 9 and 0 neighbours. */
export function sequential(pin: string): boolean {
  if (pin.length < 3 || !/^[0-9]+$/.test(pin)) return false;
  const steps = new Set<number>();
  for (let i = 1; i < pin.length; i++) steps.add((Number(pin[i]) - Number(pin[i - 1]) + 10) % 10);
  return steps.size === 1 && (steps.has(1) || steps.has(9));
}

/** True when `run` consecutive characters of `pin` stand, in order, among the digits of `phone`. */
export function sharesPhoneDigits(pin: string, phone: string | null, run: number): boolean {
  if (phone === null) return false;
  const digits = phone.replace(/\D/g, '');
  for (let i = 0; i + run <= pin.length; i++) if (digits.includes(pin.slice(i, i + run))) return true;
  return false;
}

/** Every rule `pin` breaks, history aside. */
export function pinViolations(pin: string, rules: PinRules, who: { phone: string | null }): Violation[] {
  const v: Violation[] = [];
  const length = [...pin].length;
  if (rules.digitsOnly && !/^[0-9]*$/.test(pin)) v.push({ rule: 'digits_only', message: 'Use digits 0 to 9 only.' });
  if (length < rules.minLength) v.push({ rule: 'min_length', message: `Use at least ${rules.minLength} digits.` });
  if (length > rules.maxLength) v.push({ rule: 'max_length', message: `Use at most ${rules.maxLength} digits.` });
  if (rules.noRepeatedDigits && allRepeated(pin)) v.push({ rule: 'repeated_digits', message: 'Do not repeat one digit throughout (such as 1111).' });
  if (rules.noSequentialDigits && sequential(pin)) v.push({ rule: 'sequential_digits', message: 'Do not use digits in a row, up or down (such as 1234 or 9876).' });
  if (rules.phoneDigitsRun !== null && sharesPhoneDigits(pin, who.phone, rules.phoneDigitsRun)) {
    v.push({ rule: 'contains_phone_digits', message: `Do not use ${rules.phoneDigitsRun} digits in a row from your phone number.` });
  }
  return v;
}
