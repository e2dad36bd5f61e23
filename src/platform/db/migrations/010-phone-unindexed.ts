/**
 * The phone lookup's fallback for rows written before `phone_bidx` existed (migration 009:
 * `phone_bidx IS NULL AND phone = $1`) gets its own partial index, as email's does (migration
 * 003), so a USSD sign-in never scans the users table while such rows remain.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE INDEX users_phone_unindexed ON users (phone) WHERE phone_bidx IS NULL AND phone IS NOT NULL;
  `);
}
