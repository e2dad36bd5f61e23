/**
 * PINs and USSD sign-in (issue 10, section 1).
 *
 * - `users.phone_bidx`: HMAC blind index of the phone number (E.164), like `email_bidx`
 *   (migration 003), so a USSD gateway's subscriber is found by phone although the phone is
 *   stored encrypted; unique, since a phone number names one USSD subscriber. Rows written
 *   before this migration have no index (a migration holds no key) until `strongroom
 *   rotate-field-key` indexes them; lookups fall back to the stored text for them meanwhile.
 * - `password_restrictions` gets the account class `pin`, the PIN's own rules (SPEC record
 *   PasswordRestriction), with the columns only PINs use: at most `max_length` characters,
 *   digits only, no digit repeated throughout, no ascending or descending run, and no run of
 *   `phone_digits_run` digits of the user's phone number. The password classes leave them off.
 * - A PIN is a `credentials` row of type `pin` (UNIQUE (user_id, type) holds one per user),
 *   its history `credential_history` rows of type `pin`: no new table.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE users ADD COLUMN phone_bidx text;
    CREATE UNIQUE INDEX users_phone_bidx ON users (phone_bidx);

    ALTER TABLE password_restrictions DROP CONSTRAINT password_restrictions_account_class_check;
    ALTER TABLE password_restrictions ADD CONSTRAINT password_restrictions_account_class_check
      CHECK (account_class IN ('admin', 'regular', 'service', 'pin'));
    ALTER TABLE password_restrictions
      ADD COLUMN max_length integer,
      ADD COLUMN digits_only boolean NOT NULL DEFAULT false,
      ADD COLUMN no_repeated_digits boolean NOT NULL DEFAULT false,
      ADD COLUMN no_sequential_digits boolean NOT NULL DEFAULT false,
      ADD COLUMN phone_digits_run integer CHECK (phone_digits_run >= 2);
    INSERT INTO password_restrictions
      (account_class, min_length, max_length, max_bytes, require_upper, require_lower, require_digit, require_symbol,
       history_count, reuse_months, expiry_days, warn_days, digits_only, no_repeated_digits, no_sequential_digits, phone_digits_run)
    VALUES ('pin', 4, 6, 72, false, false, true, false, 4, 0, NULL, 0, true, true, true, 4);
  `);
}
