/**
 * Secrets the process needs. In production they come from the environment (config refuses to
 * start without them). Elsewhere, missing ones are generated once and kept under
 * `DATA_DIR/secrets/` with mode 0600, so a development server keeps its keys across restarts.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync, renameSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';

export interface Secrets {
  /** The current field-encryption master key: every new value is written under it. */
  fieldKey: Buffer;
  /** Older master keys still readable during a rotation (FIELD_ENCRYPTION_KEYS_PREVIOUS). */
  previousFieldKeys?: Buffer[];
  ipHashKey: Buffer;
  transportPrivateKeyPem: string;
  /** Names of the secrets that were generated for development, for the startup warning. */
  generated: string[];
  /** Names of the development secrets read from `DATA_DIR/secrets` (made by an earlier start). */
  fromDataDir: string[];
}

function readOrCreate(file: string, create: () => string | Buffer): { value: Buffer; created: boolean } {
  if (existsSync(file)) return { value: readFileSync(file), created: false };
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, create(), { mode: 0o600 });
  renameSync(tmp, file); // atomic: a crash never leaves half a key behind
  return { value: readFileSync(file), created: true };
}

export function resolveSecrets(config: Config): Secrets {
  const dir = path.join(config.dataDir, 'secrets');
  const generated: string[] = [];
  const fromDataDir: string[] = [];
  const pick = (given: Buffer | undefined, name: string, file: string): Buffer => {
    if (given) return given;
    const r = readOrCreate(path.join(dir, file), () => randomBytes(32).toString('base64'));
    (r.created ? generated : fromDataDir).push(name);
    return Buffer.from(r.value.toString('utf8').trim(), 'base64');
  };
  const fieldKey = pick(config.secrets.fieldKey, 'FIELD_ENCRYPTION_KEY', 'field-encryption.key');
  const ipHashKey = pick(config.secrets.ipHashKey, 'IP_HASH_KEY', 'ip-hash.key');

  let pem = config.secrets.transportPrivateKeyPem;
  if (pem?.startsWith('@file:')) pem = readFileSync(pem.slice('@file:'.length), 'utf8');
  if (!pem) {
    const r = readOrCreate(path.join(dir, 'transport-private.pem'), () =>
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    (r.created ? generated : fromDataDir).push('TRANSPORT_PRIVATE_KEY');
    pem = r.value.toString('utf8');
  }
  return { fieldKey, previousFieldKeys: config.secrets.previousFieldKeys, ipHashKey, transportPrivateKeyPem: pem, generated, fromDataDir };
}

/** The field-encryption master keys, current first: what every FieldCipher and BlindIndex takes. */
export function fieldMasters(secrets: Pick<Secrets, 'fieldKey' | 'previousFieldKeys'>): Buffer[] {
  const previous = (secrets.previousFieldKeys ?? []).filter((k) => !k.equals(secrets.fieldKey));
  return [secrets.fieldKey, ...previous];
}
