/**
 * Password expiry warnings (SPEC "Password rules": a warning is emailed `warn_days` before
 * expiry). `credentials.expiry_warned_at` records that the warning for the current password was
 * claimed; `CredentialService.setPassword` clears it, so each password is warned about once.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE credentials ADD COLUMN expiry_warned_at timestamptz;
    CREATE INDEX credentials_expiry_unwarned ON credentials (expires_at) WHERE expiry_warned_at IS NULL AND expires_at IS NOT NULL;
  `);
}
