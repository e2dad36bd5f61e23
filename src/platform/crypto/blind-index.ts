/**
 * Blind index: a keyed hash (HMAC-SHA256, RFC 2104) of a normalised value, stored beside the
 * value's ciphertext so a column encrypted with a random IV can still be unique and looked up
 * by equality (ARCHITECTURE.md 4, docs/decisions.md). The key is derived per purpose from the
 * field-encryption master key (HKDF), never the encryption key itself.
 *
 * Stored form: `<key id>:<hex HMAC>`, the key id (8 hex digits) naming which master key made
 * it. During a rotation lookups try every configured key (`candidates`), and the re-encryption
 * pass finds indexes still under an old key by their prefix.
 */
import { createHash, createHmac } from 'node:crypto';
import { deriveKey } from './field-cipher.js';

interface IndexKey {
  id: string;
  key: Buffer;
}

/**
 * What a phone number's blind index is made of: the number without the separators people
 * write (spaces, dashes, dots, brackets), so `+254 712-345 678` and `+254712345678` are one
 * number. The API accepts E.164 only, which this leaves as it is.
 */
export function phoneIndexValue(phone: string): string {
  return phone.replace(/[\s\-.()]/g, '');
}

export class BlindIndex {
  private readonly keys: IndexKey[] = [];

  /** @param masters the current master key first, then older ones still accepted for lookups. */
  constructor(masters: Buffer[], purpose = 'blind-index') {
    if (masters.length === 0) throw new Error('BlindIndex needs at least one key');
    for (const m of masters) {
      const key = deriveKey(m, purpose);
      const id = createHash('sha256').update(key).digest().subarray(0, 4).toString('hex');
      if (!this.keys.some((k) => k.id === id)) this.keys.push({ id, key });
    }
  }

  get currentKeyId(): string {
    return this.keys[0]!.id;
  }

  /** What is indexed: surrounding blanks and case do not make a different value. */
  static normalize(value: string): string {
    return value.trim().toLowerCase();
  }

  /** The index of `value` under the current key: what is written. */
  of(value: string): string {
    return this.under(this.keys[0]!, value);
  }

  /** The index of `value` under every configured key, current first: what a lookup matches. */
  candidates(value: string): string[] {
    return this.keys.map((k) => this.under(k, value));
  }

  /** `of` for a case-sensitive value (a push token): nothing is trimmed or lowered. */
  ofExact(value: string): string {
    return this.under(this.keys[0]!, value, true);
  }

  /** `candidates` for a case-sensitive value. */
  candidatesExact(value: string): string[] {
    return this.keys.map((k) => this.under(k, value, true));
  }

  /** The key id a stored index was made with. */
  keyIdOf(stored: string): string | undefined {
    const m = /^([0-9a-f]{8}):[0-9a-f]{64}$/.exec(stored);
    return m?.[1];
  }

  private under(k: IndexKey, value: string, exact = false): string {
    return `${k.id}:${createHmac('sha256', k.key).update(exact ? value : BlindIndex.normalize(value), 'utf8').digest('hex')}`;
  }
}
