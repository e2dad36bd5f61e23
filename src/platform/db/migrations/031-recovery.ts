/**
 * Self-service account recovery (issue 27, phase 1): one row per workflow, one per proof of it.
 *
 * A workflow is found only by the keyed hash of its `recovery_id` (`handle_hash`); the handle
 * itself is never stored. `account_hash` is a keyed hash of the account it names (the user, or
 * for an unknown identifier the identifier itself), so the partial unique index admits one
 * active workflow per account and lost thing, decoys included; a workflow that does not hold
 * that slot (`holds_slot` false) is a decoy handed to a second initiate. Contacts are never
 * copied: a proof keeps only the masked destination a code went to. Codes live in
 * `mfa_otp_codes` (as keyed hashes), under the new purpose `recovery`. Expand only.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

const ACTIVE = `('initiated', 'verifying', 'verified', 'waiting')`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE recovery_workflows (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      handle_hash text NOT NULL UNIQUE,
      kind text NOT NULL CHECK (kind IN ('password', 'pin', 'mfa', 'device')),
      state text NOT NULL CHECK (state IN ('initiated', 'verifying', 'verified', 'waiting', 'completed', 'cancelled', 'expired', 'rejected')),
      user_id integer REFERENCES users(id) ON DELETE CASCADE,
      decoy boolean NOT NULL,
      account_hash text NOT NULL,
      holds_slot boolean NOT NULL,
      login_key text NOT NULL,
      subject_masked text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      verified_at timestamptz,
      completed_at timestamptz,
      ended_at timestamptz,
      CHECK (decoy OR user_id IS NOT NULL)
    );
    CREATE UNIQUE INDEX recovery_workflows_one_active ON recovery_workflows (account_hash, kind) WHERE holds_slot AND state IN ${ACTIVE};
    CREATE INDEX recovery_workflows_due ON recovery_workflows (expires_at) WHERE state IN ${ACTIVE};
    CREATE INDEX recovery_workflows_ended ON recovery_workflows (ended_at) WHERE ended_at IS NOT NULL;
    CREATE INDEX recovery_workflows_user ON recovery_workflows (user_id) WHERE user_id IS NOT NULL;

    CREATE TABLE recovery_proofs (
      workflow_id uuid NOT NULL REFERENCES recovery_workflows(id) ON DELETE CASCADE,
      proof text NOT NULL CHECK (proof IN ('email_code', 'sms_code', 'totp', 'backup_code', 'branch_approval', 'security_questions', 'password', 'pin')),
      attempts integer NOT NULL DEFAULT 0,
      passed_at timestamptz,
      sends integer NOT NULL DEFAULT 0,
      last_sent_at timestamptz,
      code_expires_at timestamptz,
      destination_masked text,
      question_ids text,
      PRIMARY KEY (workflow_id, proof)
    );

    ALTER TABLE mfa_otp_codes DROP CONSTRAINT mfa_otp_codes_purpose_check;
    ALTER TABLE mfa_otp_codes ADD CONSTRAINT mfa_otp_codes_purpose_check CHECK (purpose IN ('signin', 'stepup', 'enroll', 'recovery'));
  `);
}
