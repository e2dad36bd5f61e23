/**
 * Push approval, part 2 (issue 30): a request is for a sign-in (`purpose` `sign_in`, bound to its
 * 2FA token's `two_factor_jti`) or for a signed-in session's step-up (`step_up`, bound to that
 * session's `session_id`, so another session cannot complete it); `completed_at` marks the
 * approval used (a sign-in finished, a step-up recorded: once); and `expired` becomes a state of
 * its own, set by the expiry job (one conditional UPDATE: one node announces each expiry).
 * Expand only: two new nullable columns, a column with a default, `two_factor_jti` nullable (every
 * existing row has one), wider CHECKs; a node of the previous version reads `expired` as an
 * answered request.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    ALTER TABLE push_approval_requests ADD COLUMN purpose text NOT NULL DEFAULT 'sign_in' CHECK (purpose IN ('sign_in', 'step_up'));
    ALTER TABLE push_approval_requests ADD COLUMN session_id uuid;
    ALTER TABLE push_approval_requests ADD COLUMN completed_at timestamptz;
    ALTER TABLE push_approval_requests ALTER COLUMN two_factor_jti DROP NOT NULL;
    ALTER TABLE push_approval_requests ADD CONSTRAINT push_approval_requests_bound CHECK (
      (purpose = 'sign_in' AND two_factor_jti IS NOT NULL AND session_id IS NULL)
      OR (purpose = 'step_up' AND session_id IS NOT NULL AND two_factor_jti IS NULL));
    ALTER TABLE push_approval_requests DROP CONSTRAINT push_approval_requests_state_check;
    ALTER TABLE push_approval_requests ADD CONSTRAINT push_approval_requests_state_check CHECK (state IN ('pending', 'approved', 'denied', 'expired'));
    CREATE INDEX push_approval_requests_session_idx ON push_approval_requests (session_id) WHERE session_id IS NOT NULL;
    CREATE INDEX push_approval_requests_pending_idx ON push_approval_requests (expires_at) WHERE state = 'pending'
  `);
}
