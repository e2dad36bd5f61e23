/**
 * `mfa_otp_codes.device_token_id` (migration 023) is `ON DELETE SET NULL`: without an index every
 * deletion of a device token (the per-user cap, a user's own delete, a user deleted) would scan
 * the week of codes kept. Only push enrolment codes name a device.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `CREATE INDEX mfa_otp_codes_device ON mfa_otp_codes (device_token_id) WHERE device_token_id IS NOT NULL;`);
}
