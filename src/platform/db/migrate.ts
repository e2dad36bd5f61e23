/**
 * Runs the migrations, forward only. Releases change the schema by expand, then contract: a
 * release's migrations only add (tables, nullable or defaulted columns, indexes), so the release
 * before it keeps working on the migrated schema while nodes are replaced one by one; what a
 * release stops using is removed by a later release's migration, once no running release reads
 * it. Hence a node of the previous release that (re)starts on a schema migrated by a newer
 * release serves without migrating, and says so, instead of refusing to start.
 */
import { Migrator, sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { migrationProvider, migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export const MIGRATION_TABLE = 'strongroom_migrations';

async function executedMigrations(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ present: boolean }>`SELECT to_regclass(${MIGRATION_TABLE}) IS NOT NULL AS present`.execute(db);
  if (!rows[0]?.present) return [];
  const executed = await sql<{ name: string }>`SELECT name FROM ${sql.table(MIGRATION_TABLE)} ORDER BY name`.execute(db);
  return executed.rows.map((r) => r.name);
}

/**
 * The migrations a newer release applied that this one does not know. Throws when the database
 * also lacks one this release has: it was migrated by another line of releases, and neither
 * serving nor migrating it is safe.
 */
export async function migrationsAhead(db: Kysely<Database>): Promise<string[]> {
  const executed = await executedMigrations(db);
  const unknown = executed.filter((name) => !Object.hasOwn(migrations, name));
  if (unknown.length === 0) return [];
  const missing = Object.keys(migrations).filter((name) => !executed.includes(name));
  if (missing.length > 0) {
    throw new Error(
      `The database was migrated by another line of releases: it has migrations this release does not know (${unknown.join(', ')}) and lacks some it has (${missing.join(', ')}). Restore a backup taken before, or migrate it with a release that has all of them.`,
    );
  }
  return unknown;
}

/** Applies the pending migrations; returns their names (none when the schema is ahead). */
export async function runMigrations(db: Kysely<Database>, log: Logger): Promise<string[]> {
  const ahead = await migrationsAhead(db);
  if (ahead.length > 0) {
    log.warn({ migrations_ahead: ahead }, `The database schema is newer than this release (${ahead.join(', ')} applied by a newer release): serving on it without migrating, as the previous release does during a rolling upgrade`);
    return [];
  }
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableName: MIGRATION_TABLE, migrationLockTableName: `${MIGRATION_TABLE}_lock` });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
