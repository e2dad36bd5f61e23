/**
 * Who may use each channel (src/access/channels.ts): a row per channel an administrator set,
 * with the roles that may sign in and hold sessions on it (null: anyone). A channel without a
 * row keeps the built-in default (the agent channel: role `agent`; the others: anyone), so the
 * safe default needs no row and cannot be deleted by mistake.
 *
 * Also: `ldap_config.groups_base_dn`, the subtree under which a group's short name (`tellers`)
 * maps roles; a group anywhere else maps roles only by its full DN (src/ldap/groups.ts).
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE channel_access (
      channel text PRIMARY KEY CHECK (channel IN ('web', 'mobile', 'ussd', 'agent')),
      allowed_roles jsonb,
      updated_at timestamptz NOT NULL,
      updated_by uuid
    );
    ALTER TABLE ldap_config ADD COLUMN groups_base_dn text;
  `);
}
