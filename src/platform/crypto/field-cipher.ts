/**
 * At-rest encryption of single values: AES-256-GCM (NIST SP 800-38D) with a 12-byte random IV
 * and a 16-byte tag, under a key derived per purpose from the master key (HKDF, RFC 5869).
 *
 * Format: `fe1:<base64url(key id || iv || ciphertext || tag)>`, where the 4-byte key id lets
 * several master keys coexist while a rotation re-encrypts. `seal`/`open` give the same bytes
 * without the prefix, for places that want bare base64url (the JWT `sub`, ruling 8). The
 * `context` (for example the column name) is bound as additional authenticated data, so a
 * value copied into another column fails to open.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'fe1';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export function deriveKey(master: Buffer, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `strongroom:${purpose}`, length));
}

export class FieldCipherError extends Error {
  constructor() {
    super('A stored value could not be decrypted.');
    this.name = 'FieldCipherError';
  }
}

interface KeyEntry {
  id: string;
  idBytes: Buffer;
  key: Buffer;
}

export class FieldCipher {
  private readonly current: KeyEntry;
  private readonly byId = new Map<string, KeyEntry>();

  /** @param masters the current master key first, then older ones still readable. */
  constructor(masters: Buffer[], purpose: string) {
    if (masters.length === 0) throw new Error('FieldCipher needs at least one key');
    for (const m of masters) {
      const key = deriveKey(m, `field:${purpose}`);
      const idBytes = createHash('sha256').update(key).digest().subarray(0, 4);
      const id = idBytes.toString('hex');
      this.byId.set(id, { id, idBytes, key });
    }
    this.current = this.byId.get([...this.byId.keys()][0]!)!;
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  /** AES-256-GCM; returns base64url(key id || iv || ciphertext || tag). */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.current.key, iv, { authTagLength: 16 });
    c.setAAD(Buffer.from(context, 'utf8'));
    const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
    return Buffer.concat([this.current.idBytes, iv, ct, c.getAuthTag()]).toString('base64url');
  }

  open(sealed: string, context: string): string {
    const raw = Buffer.from(sealed, 'base64url');
    const entry = raw.length >= 4 + 12 + 16 ? this.byId.get(raw.subarray(0, 4).toString('hex')) : undefined;
    if (!entry) throw new FieldCipherError();
    try {
      const d = createDecipheriv('aes-256-gcm', entry.key, raw.subarray(4, 16), { authTagLength: 16 });
      d.setAAD(Buffer.from(context, 'utf8'));
      d.setAuthTag(raw.subarray(raw.length - 16));
      return Buffer.concat([d.update(raw.subarray(16, raw.length - 16)), d.final()]).toString('utf8');
    } catch {
      throw new FieldCipherError();
    }
  }

  encrypt(plaintext: string, context: string): string {
    return `${PREFIX}:${this.seal(plaintext, context)}`;
  }

  decrypt(value: string, context: string): string {
    if (!this.isEncrypted(value)) throw new FieldCipherError();
    return this.open(value.slice(PREFIX.length + 1), context);
  }

  isEncrypted(value: string): boolean {
    return value.startsWith(`${PREFIX}:`);
  }

  /**
   * A POSIX regular expression (PostgreSQL `~`) that matches exactly the stored values written
   * under the current key, so a re-encryption pass selects the others in SQL. The key id is 32
   * bits: five base64url characters carry 30 of them, the sixth the last two and four bits of
   * the IV, so the sixth is one of sixteen consecutive characters of the alphabet.
   */
  currentKeyPattern(): string {
    const head = Buffer.concat([this.current.idBytes, Buffer.alloc(1)]).toString('base64url').slice(0, 5);
    const start = (this.current.idBytes[3]! & 0b11) * 16;
    const sixth = B64URL.slice(start, start + 16).replace('-', '').concat(B64URL.slice(start, start + 16).includes('-') ? '-' : '');
    return `^${PREFIX}:${head}[${sixth}]`;
  }

  /** Key id (hex) a stored value was written with, or undefined: for re-encryption batches. */
  keyIdOf(value: string): string | undefined {
    if (!this.isEncrypted(value)) return undefined;
    const raw = Buffer.from(value.slice(PREFIX.length + 1, PREFIX.length + 1 + 8), 'base64url');
    return raw.length >= 4 ? raw.subarray(0, 4).toString('hex') : undefined;
  }
}

/** Keyed hash for lookups of values that are stored encrypted or must not be stored (RFC 2104). */
export class Hasher {
  constructor(private readonly key: Buffer) {}
  hex(value: string): string {
    return createHmac('sha256', this.key).update(value, 'utf8').digest('hex');
  }
}

/** Constant-time string equality (no early exit on the first differing byte). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
