/**
 * What every batch of `strongroom bench seed` needs (the database, the keys, the values computed
 * once per run), and the SQL that derives a synthetic user's uuid from its number, as
 * `seedUuid` does in JavaScript (bench-seed-identity.ts).
 *
 * The password is the bcrypt hash of SEED_PASSWORD at the server's cost, made once; session keys
 * and TOTP secrets share one ciphertext each (a ciphertext is bound to its column, not to its
 * row, so each still decrypts).
 */
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import { sql, type RawBuilder } from 'kysely';
import type { BlindIndex } from '../platform/crypto/blind-index.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { KeyMaterial } from '../platform/crypto/key-material.js';
import { SensitiveColumns } from '../platform/crypto/sensitive.js';
import type { Db } from '../platform/db/database.js';
import { SEED_PASSWORD, SEED_UUID_SALT } from './bench-seed-identity.js';
import type { SeedPlan } from './bench-seed-marker.js';

/** What every batch needs: the database, the keys and the shared values computed once per run. */
export interface SeedContext {
  db: Db;
  plan: SeedPlan;
  anchor: Date;
  sensitive: SensitiveColumns;
  blindIndex: BlindIndex;
  passwordHash: string;
  passwordCopy: string;
  totpSecret: string;
  sessionKey: string;
  customerRoleId: number;
}

/** The keys and shared values of a run: the bcrypt hash (at the server's cost) is made here, once. */
export async function seedContext(db: Db, opts: { keys: KeyMaterial; encrypt: boolean; bcryptCost: number; plan: SeedPlan; anchor: Date }): Promise<SeedContext> {
  const { keys } = opts;
  const sensitive = new SensitiveColumns(keys.cipher(ENCRYPTED_COLUMNS.usersEmail.purpose), opts.encrypt);
  const role = await sql<{ id: number }>`SELECT id FROM roles WHERE name = 'customer'`.execute(db);
  if (!role.rows[0]) throw new Error('The database has no role "customer": is it migrated?');
  return {
    db, plan: opts.plan, anchor: opts.anchor, sensitive, blindIndex: keys.blindIndex('blind-index'),
    passwordHash: await bcrypt.hash(SEED_PASSWORD, opts.bcryptCost),
    passwordCopy: keys.cipher(ENCRYPTED_COLUMNS.passwordCopy.purpose).encrypt(SEED_PASSWORD, ENCRYPTED_COLUMNS.passwordCopy.context),
    // RFC 4648 base32 of 20 bytes, as an enrolment makes; shared by every synthetic TOTP factor.
    totpSecret: keys.cipher(ENCRYPTED_COLUMNS.totpSecret.purpose).encrypt('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', ENCRYPTED_COLUMNS.totpSecret.context),
    sessionKey: sensitive.protect(randomBytes(32).toString('hex'), ENCRYPTED_COLUMNS.sessionKey.context),
    customerRoleId: role.rows[0].id,
  };
}

/** md5 hex of the uuid salt and user number `n` (an SQL expression): what `seedUuidFromMd5` shapes. */
export function seedMd5Sql(n: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`md5(${SEED_UUID_SALT}::text || ${n}::text)`;
}

/** The uuid of a synthetic user from `seedMd5Sql` of its number: what `seedUuid` computes in JavaScript. */
export function seedUuidFromMd5(h: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`(substr(${h}, 1, 8) || '-' || substr(${h}, 9, 4) || '-4' || substr(${h}, 14, 3) || '-8' || substr(${h}, 18, 3) || '-' || substr(${h}, 21, 12))::uuid`;
}

/** `make_interval(days => expr)`. */
export const days = (expr: RawBuilder<unknown>): RawBuilder<unknown> => sql`make_interval(days => (${expr})::int)`;
