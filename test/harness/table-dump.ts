/**
 * Every row of every table of a database, as lower-cased text per table: the erasure tests dump
 * it and look for a person's identifiers, which must appear nowhere once they are erased.
 */
import { sql, type Kysely } from 'kysely';

/** Every base table of the current schema, every row, as lower-cased JSON text, by table name. */
export async function dumpEveryTable<DB>(db: Kysely<DB>): Promise<Map<string, string>> {
  const tables = await sql<{ t: string }>`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`.execute(db);
  const out = new Map<string, string>();
  for (const { t: table } of tables.rows) {
    const rows = await sql`SELECT * FROM ${sql.table(table)}`.execute(db);
    out.set(table, JSON.stringify(rows.rows).toLowerCase());
  }
  return out;
}

/** The tables whose dump holds `needle` (case-insensitive). */
export const tablesHolding = (dump: Map<string, string>, needle: string): string[] =>
  [...dump].filter(([, text]) => text.includes(needle.toLowerCase())).map(([table]) => table);
