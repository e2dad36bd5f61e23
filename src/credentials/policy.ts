/**
 * SPEC "Password rules": length, the four character classes, no keyboard patterns, no
 * dictionary words, not containing the username or email, bcrypt's byte limit; and, when the
 * operator has loaded a breach corpus (BREACHED_PASSWORDS_FILTER), not a password known from a
 * data breach. Limits per account class (admin, regular, service) live in the
 * `password_restrictions` table. Every violated rule is reported, each with a stable `rule` name.
 * Every way a password is set goes through `CredentialService.prepare`, which calls `check`.
 */
import type { Db } from '../platform/db/database.js';
import type { BreachedPasswords } from './breached/corpus.js';
import { BCRYPT_MAX_BYTES } from './hashing.js';
import { StrengthChecker } from './strength.js';

export type AccountClass = 'admin' | 'regular' | 'service';

export interface Restrictions {
  minLength: number;
  maxBytes: number;
  requireUpper: boolean;
  requireLower: boolean;
  requireDigit: boolean;
  requireSymbol: boolean;
  historyCount: number;
  reuseMonths: number;
  expiryDays: number | null;
  warnDays: number;
}

/** The `breached` rule's message. */
export const BREACHED_MESSAGE = 'This password appears in data breaches of other services, so attackers try it first: choose another.';

export interface Violation {
  rule: string;
  message: string;
}

const KEYBOARD_ROWS = ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm', 'qazwsxedc', 'azertyuiop', 'qwertzuiop'];
const WALK_LENGTH = 4;

/** True when the password holds 4 or more keys in a row of a keyboard, either direction. */
export function hasKeyboardWalk(password: string): boolean {
  const p = password.toLowerCase();
  for (const row of KEYBOARD_ROWS) {
    for (const line of [row, [...row].reverse().join('')]) {
      for (let i = 0; i + WALK_LENGTH <= line.length; i++) if (p.includes(line.slice(i, i + WALK_LENGTH))) return true;
    }
  }
  return false;
}

export class PasswordPolicy {
  private cache = new Map<AccountClass, Restrictions>();
  private readonly strength = new StrengthChecker();

  /** `breached`: the breach corpus; without one, no password is refused as breached. */
  constructor(private readonly db: Db, private readonly breached: BreachedPasswords = { isBreached: () => false }) {}

  /** Stops the strength-check worker (it also stops by itself when idle). */
  async close(): Promise<void> {
    await this.strength.close();
  }

  async restrictions(accountClass: AccountClass, trx: Db = this.db): Promise<Restrictions> {
    const hit = this.cache.get(accountClass);
    if (hit) return hit;
    const r = await trx.selectFrom('password_restrictions').selectAll().where('account_class', '=', accountClass).executeTakeFirstOrThrow();
    const out: Restrictions = {
      minLength: r.min_length, maxBytes: Math.min(r.max_bytes, BCRYPT_MAX_BYTES), requireUpper: r.require_upper,
      requireLower: r.require_lower, requireDigit: r.require_digit, requireSymbol: r.require_symbol,
      historyCount: r.history_count, reuseMonths: r.reuse_months, expiryDays: r.expiry_days, warnDays: r.warn_days,
    };
    this.cache.set(accountClass, out);
    return out;
  }

  async check(password: string, who: { username: string; email: string | null; accountClass: AccountClass }, trx: Db = this.db): Promise<Violation[]> {
    const r = await this.restrictions(who.accountClass, trx);
    const v: Violation[] = [];
    const chars = [...password].length;
    if (chars < r.minLength) v.push({ rule: 'min_length', message: `Use at least ${r.minLength} characters.` });
    if (Buffer.byteLength(password, 'utf8') > r.maxBytes) v.push({ rule: 'max_bytes', message: `Use at most ${r.maxBytes} bytes (bcrypt reads no more).` });
    if ([...password].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) v.push({ rule: 'control_characters', message: 'Control characters are not allowed.' });
    if (r.requireUpper && !/\p{Lu}/u.test(password)) v.push({ rule: 'uppercase', message: 'Include an uppercase letter.' });
    if (r.requireLower && !/\p{Ll}/u.test(password)) v.push({ rule: 'lowercase', message: 'Include a lowercase letter.' });
    if (r.requireDigit && !/\p{Nd}/u.test(password)) v.push({ rule: 'digit', message: 'Include a digit.' });
    if (r.requireSymbol && !/[^\p{L}\p{Nd}\s]/u.test(password)) v.push({ rule: 'symbol', message: 'Include a symbol.' });
    const lower = password.toLowerCase();
    const personal = [who.username, who.email, who.email?.split('@')[0]].filter((s): s is string => !!s && s.length >= 3);
    if (personal.some((s) => lower.includes(s.toLowerCase()))) v.push({ rule: 'contains_personal_data', message: 'Do not include your username or email.' });
    let keyboard = hasKeyboardWalk(password);
    let dictionary = false;
    if (chars <= 256) {
      for (const m of await this.strength.check(password)) {
        if (m.pattern === 'spatial' && m.length >= WALK_LENGTH) keyboard = true;
        if (m.pattern === 'dictionary' && m.length >= 4) dictionary = true;
      }
    }
    if (keyboard) v.push({ rule: 'keyboard_pattern', message: 'Avoid keyboard patterns such as qwerty or 1234.' });
    if (dictionary) v.push({ rule: 'dictionary_word', message: 'Avoid dictionary words and common passwords.' });
    // Which breach, or how often the password was seen, is never said: it would tell the
    // person (or whoever is trying passwords) something about other people's passwords.
    if (this.breached.isBreached(password)) v.push({ rule: 'breached', message: BREACHED_MESSAGE });
    return v;
  }
}
