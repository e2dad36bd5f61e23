/**
 * The server's RSA transport key pairs (SPEC Transport encryption 2). Kept in the database so
 * every node decrypts with the same keys, each private key wrapped by the master key. The
 * newest key is published by `public_key`; every key is accepted until its own `expires_at`
 * (its 90 days as the current key plus a grace period), so clients holding the previous public
 * key keep working across a rotation. A configured PEM (TRANSPORT_PRIVATE_KEY_PATH, or the
 * development key in DATA_DIR) is imported as the current key when the keyring does not hold it.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { FieldCipher } from '../platform/crypto/field-cipher.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';

const generate = promisify(generateKeyPair);
const CONTEXT = ENCRYPTED_COLUMNS.transportKey.context;
const DAY = 86_400_000;

export interface TransportKey {
  keyId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicKeyPem: string;
  createdAt: number;
  expiresAt: number;
}

/** What the transport plugin needs from a keyring: usable by other services of the platform. */
export interface TransportKeySource {
  current(): TransportKey;
  /** Keys accepted now, newest first. */
  live(): TransportKey[];
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

export class TransportKeyring implements TransportKeySource {
  private keys: TransportKey[] = [];

  constructor(
    private readonly deps: { db: Db; cipher: FieldCipher; clock: Clock; bus: EventBus; log: Logger; rotationDays: number; graceDays: number; configuredPem: string },
  ) {
    deps.bus.subscribe((e) => {
      if (e.type === 'transport-keys.changed') void this.reload().catch((err) => deps.log.error({ err }, 'transport keyring reload failed'));
    });
  }

  async init(): Promise<void> {
    const configured = createPrivateKey(this.deps.configuredPem);
    const details = configured.asymmetricKeyDetails;
    if (configured.asymmetricKeyType !== 'rsa' || (details?.modulusLength ?? 0) < 2048) {
      throw new Error('The transport key must be an RSA private key of at least 2048 bits');
    }
    const keyId = keyIdOf(createPublicKey(configured));
    await this.deps.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.transportKeys})`.execute(trx);
      const known = await trx.selectFrom('transport_keys').select('key_id').where('key_id', '=', keyId).executeTakeFirst();
      if (!known) await this.insert(trx, configured);
    });
    await this.rotateIfDue();
    await this.reload();
  }

  current(): TransportKey {
    const k = this.keys[0];
    if (!k) throw new Error('transport keyring not initialised');
    return k;
  }

  live(): TransportKey[] {
    const now = this.deps.clock.now();
    return this.keys.filter((k) => k.expiresAt > now);
  }

  async reload(): Promise<void> {
    const rows = await this.deps.db.selectFrom('transport_keys').selectAll().where('expires_at', '>', new Date(this.deps.clock.now())).orderBy('version', 'desc').execute();
    this.keys = rows.map((r) => {
      const privateKey = createPrivateKey(this.deps.cipher.decrypt(r.private_pem_enc, CONTEXT));
      return { keyId: r.key_id, privateKey, publicKey: createPublicKey(privateKey), publicKeyPem: r.public_pem, createdAt: new Date(r.created_at).getTime(), expiresAt: new Date(r.expires_at).getTime() };
    });
    if (this.keys.length === 0) throw new Error('no live transport key');
  }

  /** A new RSA-2048 key pair becomes current now; the others stay accepted until they expire. */
  async rotate(opts: { revokePrevious?: boolean } = {}): Promise<string> {
    const { privateKey } = await generate('rsa', { modulusLength: 2048 });
    const keyId = await this.deps.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.transportKeys})`.execute(trx);
      if (opts.revokePrevious) await trx.updateTable('transport_keys').set({ expires_at: new Date(this.deps.clock.now()) }).where('expires_at', '>', new Date(this.deps.clock.now())).execute();
      return this.insert(trx, privateKey);
    });
    await this.reload();
    await this.deps.bus.publish({ type: 'transport-keys.changed' });
    return keyId;
  }

  async rotateIfDue(): Promise<boolean> {
    const newest = await this.deps.db.selectFrom('transport_keys').select('created_at').orderBy('version', 'desc').limit(1).executeTakeFirst();
    if (newest && this.deps.clock.now() - new Date(newest.created_at).getTime() < this.deps.rotationDays * DAY) return false;
    await this.rotate();
    this.deps.log.info('transport key pair rotated');
    return true;
  }

  private async insert(trx: Db, privateKey: KeyObject): Promise<string> {
    const publicKey = createPublicKey(privateKey);
    const keyId = keyIdOf(publicKey);
    const now = this.deps.clock.now();
    await trx.insertInto('transport_keys').values({
      key_id: keyId,
      private_pem_enc: this.deps.cipher.encrypt(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), CONTEXT),
      public_pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      created_at: new Date(now),
      expires_at: new Date(now + (this.deps.rotationDays + this.deps.graceDays) * DAY),
    }).onConflict((oc) => oc.column('key_id').doNothing()).execute();
    return keyId;
  }
}
