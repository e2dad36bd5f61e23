/**
 * Key attestation at push-approval enrolment (docs/push-approval.md): `attestation` holds what the
 * verifier proved of the working key (Android Key Attestation: TEE or StrongBox; iOS App Attest:
 * the genuine app handed it over), null when none was given; `public_key` becomes nullable, for an
 * enrolment started before the phone has made its key (Android writes the challenge into the key's
 * attestation, so the challenge comes first); a confirmed key always has one (CHECK).
 * Expand only: a new nullable column, a NOT NULL dropped (every existing row has a key), a CHECK
 * every existing row meets; a node of the previous version never reads a row without a key as
 * confirmed.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE push_approval_keys ADD COLUMN attestation jsonb;
    ALTER TABLE push_approval_keys ALTER COLUMN public_key DROP NOT NULL;
    ALTER TABLE push_approval_keys ADD CONSTRAINT push_approval_keys_confirmed_key CHECK (confirmed_at IS NULL OR public_key IS NOT NULL)
  `);
}
