/**
 * One public id for every resource (issue 25, section 2): branches (`entities`), access policies,
 * device bindings, device tokens, notification templates, FAQ articles and security questions
 * gain a `uuid`, the id their routes take and their answers give; the integer `id` stays the
 * internal key (joins, foreign keys). Expand only: a column with a default and a unique index per
 * table, so the previous release keeps working on the migrated schema. The default is volatile,
 * so PostgreSQL rewrites each table once: these tables are small (the largest, device tokens, is
 * at most 30 rows per user).
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export const PUBLIC_ID_TABLES = ['entities', 'access_policies', 'device_bindings', 'device_tokens', 'notification_templates', 'faqs', 'security_questions'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, PUBLIC_ID_TABLES.map((table) => `
    ALTER TABLE ${table} ADD COLUMN uuid uuid NOT NULL DEFAULT gen_random_uuid();
    CREATE UNIQUE INDEX ${table}_uuid ON ${table} (uuid);
  `).join('\n'));
}
