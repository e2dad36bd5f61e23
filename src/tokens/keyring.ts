/**
 * The HS256 signing keyring. Keys live in the database (so every node signs and verifies with
 * the same ones), each secret wrapped with AES-256-GCM under the master key. The newest key
 * signs; the newest two verify (SPEC Authentication 4). Keys rotate every
 * `JWT_KEY_ROTATION_DAYS` by themselves and on demand (`strongroom rotate-keys`).
 *
 * Each token type signs with its own key derived from the secret (HMAC(secret, type)), so a
 * refresh or reset token can never verify as an access token even if a type check were missed.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { FieldCipher } from '../platform/crypto/field-cipher.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';

export const TOKEN_TYPES = ['access', 'refresh', 'reset', '2fa'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

interface LoadedKey {
  kid: string;
  createdAt: number;
  keys: Record<TokenType, Buffer>;
}

const VERIFYING_VERSIONS = 2;
const RELOAD_THROTTLE_MS = 5000;
const CONTEXT = ENCRYPTED_COLUMNS.jwtSecret.context;

export class Keyring {
  private loaded: LoadedKey[] = [];
  private lastReload = 0;

  constructor(
    private readonly deps: { db: Db; cipher: FieldCipher; clock: Clock; bus: EventBus; log: Logger; rotationDays: number },
  ) {
    deps.bus.subscribe((e) => {
      if (e.type === 'keyring.changed') void this.reload().catch((err) => deps.log.error({ err }, 'keyring reload failed'));
    });
    deps.bus.onReconnect(() => void this.reload().catch(() => undefined));
  }

  /** Loads the keyring, creating the first key when there is none. */
  async init(): Promise<void> {
    await this.rotateIfDue();
    await this.reload();
  }

  async reload(): Promise<void> {
    const rows = await this.deps.db
      .selectFrom('jwt_signing_keys')
      .select(['kid', 'secret_enc', 'created_at'])
      .orderBy('version', 'desc')
      .limit(VERIFYING_VERSIONS)
      .execute();
    const loaded: LoadedKey[] = [];
    for (const row of rows) {
      const secret = Buffer.from(this.deps.cipher.decrypt(row.secret_enc, CONTEXT), 'base64');
      loaded.push({ kid: row.kid, createdAt: new Date(row.created_at).getTime(), keys: deriveTypeKeys(secret) });
    }
    this.loaded = loaded;
    this.lastReload = this.deps.clock.now();
  }

  signingKey(type: TokenType): { kid: string; key: Buffer } {
    const newest = this.loaded[0];
    if (!newest) throw new Error('keyring not initialised');
    return { kid: newest.kid, key: newest.keys[type] };
  }

  /** The verification key for `kid`, or undefined. */
  verificationKey(kid: string, type: TokenType): Buffer | undefined {
    return this.loaded.find((k) => k.kid === kid)?.keys[type];
  }

  /**
   * An unknown kid may mean another node just rotated: reload, but at most once per few
   * seconds so hostile kids cannot hammer the database. True when it reloaded.
   */
  async reloadForUnknownKid(): Promise<boolean> {
    if (this.deps.clock.now() - this.lastReload < RELOAD_THROTTLE_MS) return false;
    await this.reload();
    return true;
  }

  /** Adds a new signing key now. The previous one keeps verifying; older ones stop. */
  async rotate(): Promise<string> {
    const kid = await this.deps.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.jwtKeys})`.execute(trx);
      return this.insertKey(trx);
    });
    await this.reload();
    await this.deps.bus.publish({ type: 'keyring.changed' });
    return kid;
  }

  /** Rotates when the newest key is older than the rotation period (or there is none). */
  async rotateIfDue(): Promise<boolean> {
    const rotated = await this.deps.db.transaction().execute(async (trx) => {
      // One node at a time, so two nodes never both rotate and push a valid key out.
      await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.jwtKeys})`.execute(trx);
      const newest = await trx.selectFrom('jwt_signing_keys').select('created_at').orderBy('version', 'desc').limit(1).executeTakeFirst();
      const ageMs = newest ? this.deps.clock.now() - new Date(newest.created_at).getTime() : Infinity;
      if (ageMs < this.deps.rotationDays * 86_400_000) return null;
      await this.insertKey(trx);
      return newest ? 'rotated' : 'created';
    });
    if (rotated) {
      await this.reload();
      await this.deps.bus.publish({ type: 'keyring.changed' });
      this.deps.log.info(rotated === 'created' ? 'JWT signing key created (a new database)' : 'JWT signing key rotated (tokens signed with the previous key stay valid until they expire)');
    }
    return rotated !== null;
  }

  private async insertKey(trx: Db): Promise<string> {
    const kid = randomBytes(8).toString('hex');
    const secret = randomBytes(32).toString('base64'); // 256 bits (RFC 7518 3.2: key >= hash size)
    await trx
      .insertInto('jwt_signing_keys')
      .values({ kid, secret_enc: this.deps.cipher.encrypt(secret, CONTEXT), created_at: new Date(this.deps.clock.now()) })
      .execute();
    return kid;
  }
}

function deriveTypeKeys(secret: Buffer): Record<TokenType, Buffer> {
  const out = {} as Record<TokenType, Buffer>;
  for (const type of TOKEN_TYPES) out[type] = createHmac('sha256', secret).update(`strongroom-jwt:${type}`).digest();
  return out;
}
