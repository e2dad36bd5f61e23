/**
 * Field encryption of personal data (issue 3, section 2): `users.email` and `users.phone` may
 * now hold ciphertext (random IV), so email uniqueness moves from `lower(email)` to a blind
 * index, `email_bidx` (HMAC of the trimmed, lower-cased email; src/platform/crypto/blind-index.ts).
 *
 * Rows written before this migration have no index yet (a migration holds no key); until
 * `strongroom rotate-field-key` indexes them, the old rule keeps guarding them through a
 * partial index, and lookups fall back to `lower(email)` for them.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE users ADD COLUMN email_bidx text;
    DROP INDEX users_email_lower;
    CREATE UNIQUE INDEX users_email_bidx ON users (email_bidx);
    CREATE UNIQUE INDEX users_email_lower_unindexed ON users (lower(email)) WHERE email IS NOT NULL AND email_bidx IS NULL;
  `);
}
