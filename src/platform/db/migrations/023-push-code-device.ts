/**
 * One-time codes by push go to one device, the one confirmed at enrolment (docs/decisions.md
 * "One-time codes by push"): `device_tokens.receives_codes` marks it (at most one per user), and
 * a code row remembers which device an enrolment code went to (`mfa_otp_codes.device_token_id`),
 * so that entering it binds that device and no other.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE device_tokens ADD COLUMN receives_codes boolean NOT NULL DEFAULT false;
    CREATE UNIQUE INDEX device_tokens_code_device ON device_tokens (user_id) WHERE receives_codes;
    ALTER TABLE mfa_otp_codes ADD COLUMN device_token_id integer REFERENCES device_tokens(id) ON DELETE SET NULL;
  `);
}
