/**
 * The service provider's signing keys (migration 017): RSA-2048, the private key sealed with
 * the master key, a self-signed certificate (src/platform/crypto/self-signed.ts) published in
 * the SP metadata so the IdP can check what we sign (LogoutRequests and LogoutResponses). Made
 * on first need (every node sees the same key: one insert under an advisory lock), rotated by
 * the operator (`strongroom rotate-saml-sp-key`): the new key signs at once, the previous one
 * stays in the metadata until the next rotation, so an IdP that refreshes metadata late keeps
 * verifying. Each node caches the keys until a change is announced.
 */
import { createPrivateKey, generateKeyPair, type KeyObject, X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { FieldCipher } from '../platform/crypto/field-cipher.js';
import { selfSignedCertificatePem } from '../platform/crypto/self-signed.js';
import { AnnouncedCache } from '../platform/db/announced-cache.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';

const generate = promisify(generateKeyPair);
const CONTEXT = ENCRYPTED_COLUMNS.samlSpKey.context;
/** SAML ignores a certificate's dates; a long validity spares IdPs that warn about expired ones. */
const CERTIFICATE_DAYS = 10 * 365;

export interface SpKey {
  keyId: string;
  privateKey: KeyObject;
  privateKeyPem: string;
  certPem: string;
  createdAt: number;
}

export class SamlSpKeys {
  private readonly cache: AnnouncedCache<SpKey[]>;

  constructor(private readonly deps: { db: Db; cipher: FieldCipher; clock: Clock; bus: EventBus; commonName: () => Promise<string> }) {
    this.cache = new AnnouncedCache(deps.bus, 'saml-sp-keys.changed', () => this.load());
  }

  /** The key that signs now (made on first need). */
  async current(): Promise<SpKey> {
    const keys = await this.published();
    return keys[0]!;
  }

  /** The keys the metadata publishes, newest first (made on first need). */
  async published(): Promise<SpKey[]> {
    const keys = await this.cache.get();
    if (keys.length > 0) return keys;
    await this.add(false);
    return this.cache.get();
  }

  /** A new signing key; the one before stays published, older ones are retired. Returns the new key's id. */
  async rotate(): Promise<{ keyId: string; retired: string[] }> {
    return this.add(true);
  }

  private async add(rotating: boolean): Promise<{ keyId: string; retired: string[] }> {
    const d = this.deps;
    const { privateKey } = await generate('rsa', { modulusLength: 2048 });
    const now = d.clock.now();
    const certPem = selfSignedCertificatePem(privateKey, await d.commonName(), now, CERTIFICATE_DAYS);
    const keyId = new X509Certificate(certPem).fingerprint256.replace(/:/g, '').slice(0, 16).toLowerCase();
    const outcome = await d.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.samlSpKeys})`.execute(trx);
      const active = await trx.selectFrom('saml_sp_keys').select('key_id').where('retired_at', 'is', null).orderBy('seq', 'desc').execute();
      // First need on two nodes at once: the second finds the first one's key and keeps it.
      if (!rotating && active.length > 0) return { keyId: active[0]!.key_id, retired: [] };
      const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      await trx.insertInto('saml_sp_keys').values({ key_id: keyId, private_key_enc: d.cipher.encrypt(pem, CONTEXT), certificate: certPem, created_at: new Date(now), retired_at: null }).execute();
      const retired = active.slice(1).map((k) => k.key_id);
      if (retired.length > 0) await trx.updateTable('saml_sp_keys').set({ retired_at: new Date(now) }).where('key_id', 'in', retired).execute();
      return { keyId, retired };
    });
    await d.bus.publish({ type: 'saml-sp-keys.changed' });
    return outcome;
  }

  private async load(): Promise<SpKey[]> {
    const rows = await this.deps.db.selectFrom('saml_sp_keys').selectAll().where('retired_at', 'is', null).orderBy('seq', 'desc').execute();
    return rows.map((r) => {
      const privateKeyPem = this.deps.cipher.decrypt(r.private_key_enc, CONTEXT);
      return { keyId: r.key_id, privateKey: createPrivateKey(privateKeyPem), privateKeyPem, certPem: r.certificate, createdAt: new Date(r.created_at).getTime() };
    });
  }
}
