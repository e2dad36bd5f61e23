import { sql, type Kysely } from 'kysely';

/**
 * Runs a DDL script statement by statement: both drivers use the extended query protocol,
 * which takes one statement at a time. Statements are split on a semicolon that ends a line,
 * so scripts must not put such a semicolon inside a string literal.
 */
export async function runScript(db: Kysely<unknown>, script: string): Promise<void> {
  for (const statement of script.split(/;\s*$/m)) {
    if (statement.trim() !== '') await sql.raw(statement).execute(db);
  }
}
