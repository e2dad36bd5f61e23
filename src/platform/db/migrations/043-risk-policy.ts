/**
 * The risk response policy (issue 29, section 3): what a sign-in does about its risk assessment
 * (ask for a second factor, refuse, lock the account, block the address), by rule and channel,
 * as the administrators last saved it. A singleton, as the LDAP and SAML settings are; until a row
 * exists the operator's RISK_* settings make the policy. `updated_by` is the administrator's
 * public uuid. `risk_address_blocks`: the client networks (keyed hashes, as the failure counts keep
 * them) blocked for credential stuffing and until when, shared by every node (each keeps them in
 * memory, told of a new one on the event bus). Also: a sign-in notice may now tell of a right
 * password the policy refused (`risk_notices.outcome` 'refused'). Expand only: new tables, a wider
 * CHECK.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE risk_policy (
      singleton_key text PRIMARY KEY CHECK (singleton_key = 'SINGLETON'),
      policy jsonb NOT NULL,
      updated_at timestamptz NOT NULL,
      updated_by uuid
    );
    CREATE TABLE risk_address_blocks (
      network_hash text PRIMARY KEY,
      blocked_until timestamptz NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX risk_address_blocks_until ON risk_address_blocks (blocked_until);
    ALTER TABLE risk_notices DROP CONSTRAINT risk_notices_outcome_check;
    ALTER TABLE risk_notices ADD CONSTRAINT risk_notices_outcome_check CHECK (outcome IN ('signed_in', 'second_factor_required', 'refused'))
  `);
}
