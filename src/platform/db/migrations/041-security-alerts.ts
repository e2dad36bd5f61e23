/**
 * Security alerts (issue 29, section 3): each alert a record (`security_alerts`), raised once per
 * event however many nodes see it (a UNIQUE dedupe key and `INSERT ... ON CONFLICT DO NOTHING`),
 * open, then acknowledged and resolved by an administrator, who and when and with a note; and its
 * deliveries to the security team (`security_alert_deliveries`: one row per channel, email or
 * webhook), an outbox queued in the alert's transaction and claimed atomically by the background
 * job, so that no two nodes send one delivery at once. The account is its public uuid, as the
 * audit trail names it, so that an alert and the entries around it join on one key. Permission
 * `alerts.manage`, granted to the built-in `admin` role. Expand only: new tables and a permission.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE security_alerts (
      id uuid PRIMARY KEY,
      dedupe_key text NOT NULL CONSTRAINT security_alerts_dedupe UNIQUE,
      rule text NOT NULL,
      severity text NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
      user_uuid uuid,
      audit_id uuid,
      channel text,
      ip_hash text,
      location jsonb,
      score real CHECK (score >= 0 AND score <= 100),
      indicators jsonb NOT NULL,
      state text NOT NULL CHECK (state IN ('open', 'acknowledged', 'resolved')),
      acknowledged_at timestamptz,
      acknowledged_by uuid,
      acknowledgement_note text,
      resolved_at timestamptz,
      resolved_by uuid,
      resolution_note text,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX security_alerts_created ON security_alerts (created_at DESC, id);
    CREATE INDEX security_alerts_state ON security_alerts (state, created_at DESC, id);
    CREATE INDEX security_alerts_user ON security_alerts (user_uuid, created_at DESC, id) WHERE user_uuid IS NOT NULL;
    CREATE INDEX security_alerts_rule ON security_alerts (rule, created_at DESC, id);

    CREATE TABLE security_alert_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      alert_id uuid NOT NULL REFERENCES security_alerts(id) ON DELETE CASCADE,
      channel text NOT NULL CHECK (channel IN ('email', 'webhook')),
      state text NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      claim_token uuid,
      lease_until timestamptz,
      last_error text,
      sent_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (alert_id, channel)
    );
    CREATE INDEX security_alert_deliveries_due ON security_alert_deliveries (next_attempt_at, id) WHERE state = 'pending';
  `);
  await sql`INSERT INTO permissions (name, description) VALUES
    ('alerts.manage', 'Read the security alerts with the audit trail around each, and acknowledge and resolve them')`.execute(db);
  await grantAllToAdmin(db);
}
