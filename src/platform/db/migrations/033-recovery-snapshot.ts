/**
 * Account recovery: a workflow keeps the matrix it started with. `alternatives` holds the
 * alternatives of its kind as they were configured when it was initiated, written as the setting
 * is (`email_code+sms_code|totp+email_code`), so a change of RECOVERY_PROOFS_* and a restart
 * judge only the workflows started afterwards; a row written before this migration has none
 * (null) and is judged by the configuration, as before.
 *
 * A decoy's code request writes a one-time code row as a real one does (the same statements, so
 * the time taken tells no real account from a made-up one): a made-up account has no user, so
 * `mfa_otp_codes.user_id` may now be null (such a row matches nothing and is never delivered).
 *
 * Expand only: a nullable column, a NOT NULL dropped; the previous release keeps working on the
 * migrated schema.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE recovery_workflows ADD COLUMN alternatives text;
    ALTER TABLE mfa_otp_codes ALTER COLUMN user_id DROP NOT NULL;
  `);
}
