/**
 * The keys the service holds, as an operator needs to know them (GET /api/v1/admin/keys): what
 * each is for, an id or fingerprint, the algorithm, when it was made, its age, whether its
 * rotation is due under the service's own policy, and the CLI command that rotates it. Never key
 * material: ids are the ones the service already publishes or stores beside its values (a JWT's
 * `kid`, the transport key's `key_id`, the prefix of a blind index), or a short hash of a key
 * derived for that purpose alone.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { deriveKey } from '../platform/crypto/field-cipher.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import type { Db } from '../platform/db/database.js';
import type { TransportKeySource } from '../transport/keys.js';

const DAY = 86_400_000;
/** The HKDF purpose of the fingerprints below: a key of its own, used for nothing else. */
const FINGERPRINT = 'key-fingerprint';

export type KeyKind = 'jwt_signing' | 'transport' | 'field_encryption' | 'blind_index' | 'ip_hash' | 'saml_sp';
/** current: in use for new work; verifying / accepted / published: an older key still honoured; previous: read only, during a rotation. */
export type KeyStatus = 'current' | 'verifying' | 'accepted' | 'published' | 'previous';

export interface KeyInfo {
  kind: KeyKind;
  id: string;
  algorithm: string;
  status: KeyStatus;
  created_at: string | null;
  age_days: number | null;
  /** Until when an older key is still honoured (transport keys). */
  expires_at: string | null;
  /** When the policy rotates it (current keys under a rotation period); null: no period. */
  rotation_due_at: string | null;
  rotation_due: boolean | null;
  /** `automatic`: the service rotates it on its period (the command rotates it sooner); `manual`: only the command; `none`: no rotation exists. */
  rotation: 'automatic' | 'manual' | 'none';
  rotate_command: string | null;
  /** Set (true) only on a SAML SP key whose stored certificate does not parse: listed with what is known (id, created), `algorithm` `unknown`. */
  certificate_unreadable?: true;
}

export interface KeyInventoryDeps {
  db: Db;
  clock: Clock;
  keys: KeyMaterial;
  transportKeys: TransportKeySource;
  config: Pick<Config, 'secrets' | 'tokens' | 'transport'>;
}

/** The 8-hex-digit id of a master key: sha256 of a key derived from it for fingerprints only (as the blind index names its keys). */
export function masterFingerprint(master: Buffer): string {
  return createHash('sha256').update(deriveKey(master, FINGERPRINT)).digest().subarray(0, 4).toString('hex');
}

export class KeyInventory {
  constructor(private readonly d: KeyInventoryDeps) {}

  async list(): Promise<KeyInfo[]> {
    return [...(await this.jwt()), ...this.transport(), ...this.field(), ...(await this.samlSp())];
  }

  private dated(createdAt: number, periodDays: number | null): Pick<KeyInfo, 'created_at' | 'age_days' | 'rotation_due_at' | 'rotation_due'> {
    const now = this.d.clock.now();
    const due = periodDays === null ? null : createdAt + periodDays * DAY;
    return { created_at: new Date(createdAt).toISOString(), age_days: Math.floor((now - createdAt) / DAY), rotation_due_at: due === null ? null : new Date(due).toISOString(), rotation_due: due === null ? null : due <= now };
  }

  /** The signing key and the one before it, which still verifies (src/tokens/keyring.ts). */
  private async jwt(): Promise<KeyInfo[]> {
    const rows = await this.d.db.selectFrom('jwt_signing_keys').select(['kid', 'created_at']).orderBy('version', 'desc').limit(2).execute();
    return rows.map((r, i) => ({
      kind: 'jwt_signing', id: r.kid, algorithm: 'HS256', status: i === 0 ? 'current' : 'verifying', expires_at: null,
      ...this.dated(new Date(r.created_at).getTime(), i === 0 ? this.d.config.tokens.keyRotationDays : null),
      ...(i === 0 ? {} : { rotation_due: null, rotation_due_at: null }),
      rotation: 'automatic', rotate_command: 'strongroom rotate-keys',
    }));
  }

  /** The published key and the older ones still accepted until they expire (src/transport/keys.ts). */
  private transport(): KeyInfo[] {
    return this.d.transportKeys.live().map((k, i) => ({
      kind: 'transport', id: k.keyId, algorithm: `RSA-${k.publicKey.asymmetricKeyDetails?.modulusLength ?? 2048}`, status: i === 0 ? 'current' : 'accepted',
      expires_at: new Date(k.expiresAt).toISOString(),
      ...this.dated(k.createdAt, i === 0 ? this.d.config.transport.keyRotationDays : null),
      rotation: 'automatic', rotate_command: 'strongroom rotate-transport-key',
    }));
  }

  /**
   * The master keys the environment gives (FIELD_ENCRYPTION_KEY, FIELD_ENCRYPTION_KEYS_PREVIOUS,
   * IP_HASH_KEY): the service is not told when they were made, so no age. The blind-index key is
   * derived from the field key and rotates with it.
   */
  private field(): KeyInfo[] {
    const undated = { created_at: null, age_days: null, expires_at: null, rotation_due_at: null, rotation_due: null } as const;
    const previous = this.d.config.secrets.previousFieldKeys.map((k): KeyInfo => ({
      kind: 'field_encryption', id: masterFingerprint(k), algorithm: 'AES-256-GCM', status: 'previous', ...undated, rotation: 'manual', rotate_command: 'strongroom rotate-field-key',
    }));
    return [
      { kind: 'field_encryption', id: this.d.keys.blindIndex(FINGERPRINT).currentKeyId, algorithm: 'AES-256-GCM', status: 'current', ...undated, rotation: 'manual', rotate_command: 'strongroom rotate-field-key' },
      ...previous,
      { kind: 'blind_index', id: this.d.keys.blindIndex('blind-index').currentKeyId, algorithm: 'HMAC-SHA256', status: 'current', ...undated, rotation: 'manual', rotate_command: 'strongroom rotate-field-key' },
      { kind: 'ip_hash', id: this.d.keys.hasher('ip', FINGERPRINT).hex(FINGERPRINT).slice(0, 8), algorithm: 'HMAC-SHA256', status: 'current', ...undated, rotation: 'none', rotate_command: null },
    ];
  }

  /** The SP signing keys the metadata publishes (src/saml/sp-keys.ts), read without making one. */
  private async samlSp(): Promise<KeyInfo[]> {
    const rows = await this.d.db.selectFrom('saml_sp_keys').select(['key_id', 'certificate', 'created_at']).where('retired_at', 'is', null).orderBy('seq', 'desc').execute();
    return rows.map((r, i): KeyInfo => {
      // One damaged row must not take the whole inventory down (a 500): it is listed, flagged.
      let bits: number | undefined;
      try {
        bits = new X509Certificate(r.certificate).publicKey.asymmetricKeyDetails?.modulusLength ?? 2048;
      } catch {
        bits = undefined;
      }
      return {
        kind: 'saml_sp', id: r.key_id, algorithm: bits === undefined ? 'unknown' : `RSA-${bits}`, status: i === 0 ? 'current' : 'published', expires_at: null,
        ...this.dated(new Date(r.created_at).getTime(), null), rotation: 'manual', rotate_command: 'strongroom rotate-saml-sp-key',
        ...(bits === undefined ? { certificate_unreadable: true as const } : {}),
      };
    });
  }
}
