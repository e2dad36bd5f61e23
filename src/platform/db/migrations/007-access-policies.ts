/**
 * Access policies (SPEC "Access policy"; records AccessPolicy, LoginIPRestriction,
 * LoginDayRestriction, GeofencingRestriction): one row per policy of a channel, optionally
 * narrowed to a role, its rules as one validated JSON document (src/access/policy.ts), and the
 * permission that manages them.
 */
import { sql, type Kysely } from 'kysely';
import { grantAllToAdmin } from './001-core.js';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE access_policies (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL UNIQUE,
      channel text NOT NULL CHECK (channel IN ('web', 'mobile', 'ussd', 'agent')),
      role text,
      enabled boolean NOT NULL DEFAULT true,
      rules jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX access_policies_channel ON access_policies (channel) WHERE enabled;
  `);
  await sql`INSERT INTO permissions (name, description) VALUES ('policies.manage', 'Read and change access policies')`.execute(db);
  await grantAllToAdmin(db);
}
