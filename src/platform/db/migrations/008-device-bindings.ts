/**
 * Device binding (SPEC "Access policy": device binding for operators and agents): the devices
 * an administrator has approved for a user, keyed by a keyed hash of the device fingerprint
 * (the fingerprint itself is an identifier of a person's phone: not stored). A sign-in from an
 * unknown device on a channel whose policy requires binding leaves a `pending` row for an
 * administrator to approve; revoked rows stay, so a revoked phone cannot queue itself again.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE device_bindings (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      fingerprint_hash text NOT NULL,
      label text NOT NULL,
      channel text NOT NULL CHECK (channel IN ('web', 'mobile', 'ussd', 'agent')),
      status text NOT NULL CHECK (status IN ('pending', 'approved', 'revoked')),
      requested_at timestamptz NOT NULL,
      decided_at timestamptz,
      decided_by uuid,
      UNIQUE (user_id, fingerprint_hash)
    );
    CREATE INDEX device_bindings_pending ON device_bindings (requested_at) WHERE status = 'pending';
  `);
  await sql`INSERT INTO permissions (name, description) VALUES ('devices.manage', 'List, approve and revoke users'' device bindings')`.execute(db);
  await grantAllToAdmin(db);
}
