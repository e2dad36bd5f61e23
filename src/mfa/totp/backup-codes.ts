/**
 * Backup codes: 10 single-use codes issued when TOTP is enrolled, for a lost phone.
 *
 * A code is 8 characters of Crockford's base32 alphabet (no i, l, o, u) shown as `xxxx-xxxx`:
 * 40 bits from the CSPRNG. Input is normalised the Crockford way (case-folded, dashes and
 * spaces dropped, o read as 0, i and l as 1), so what a person copies by hand still matches.
 * Only a keyed HMAC of each code is stored (the key is not in the database), so a dump alone
 * cannot test guesses; a code is found by its hash and spent with one conditional UPDATE.
 */
import { randomInt } from 'node:crypto';
import type { Hasher } from '../../platform/crypto/field-cipher.js';
import type { Db } from '../../platform/db/database.js';

export const BACKUP_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 8;

/** One new code, `xxxx-xxxx`. */
export function newBackupCode(): string {
  let out = '';
  for (let i = 0; i < LENGTH; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return `${out.slice(0, 4)}-${out.slice(4)}`;
}

/** The canonical form of what a user typed, or null when it cannot be a backup code. */
export function normaliseBackupCode(input: string): string | null {
  const s = input.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  if (s.length !== LENGTH || [...s].some((c) => !ALPHABET.includes(c))) return null;
  return s;
}

export class BackupCodes {
  constructor(private readonly hasher: Hasher) {}

  /** Domain-separated from one-time codes, which share the HMAC key. */
  private hash(userId: number, canonical: string): string {
    return this.hasher.hex(`backup_code:${userId}:${canonical}`);
  }

  /** Replaces the user's codes by a new set; returns them for showing once. */
  async replace(trx: Db, userId: number, now: Date): Promise<string[]> {
    const codes = new Set<string>();
    while (codes.size < BACKUP_CODE_COUNT) codes.add(newBackupCode());
    const list = [...codes];
    await trx.deleteFrom('mfa_backup_codes').where('user_id', '=', userId).execute();
    await trx.insertInto('mfa_backup_codes')
      .values(list.map((c) => ({ user_id: userId, code_hash: this.hash(userId, normaliseBackupCode(c)!), created_at: now, used_at: null })))
      .execute();
    return list;
  }

  /**
   * Spends a code: true when it was unused. The `used_at IS NULL` condition makes two parallel
   * uses of one code a race only one of them wins.
   */
  async use(trx: Db, userId: number, input: string, now: Date): Promise<boolean> {
    const canonical = normaliseBackupCode(input);
    if (canonical === null) return false;
    const row = await trx.updateTable('mfa_backup_codes').set({ used_at: now })
      .where('user_id', '=', userId).where('code_hash', '=', this.hash(userId, canonical)).where('used_at', 'is', null)
      .returning('id').executeTakeFirst();
    return row !== undefined;
  }

  async remaining(trx: Db, userId: number): Promise<number> {
    const r = await trx.selectFrom('mfa_backup_codes').select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
