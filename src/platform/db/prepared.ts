/**
 * Named prepared statements for the PostgreSQL pool (DB_PREPARED_STATEMENTS, on by default).
 *
 * Kysely sends every query as an unnamed statement, which PostgreSQL parses and plans on each
 * execution. On the hot paths that planning costs more than executing: measured with
 * pg_stat_statements over 101 refreshes, 0.78 ms of planning against 0.55 ms of execution per
 * refresh, and 1.9 ms against 1.1 ms per password sign-in (docs/benchmarks.md). A client of this
 * class gives each distinct SELECT, INSERT, UPDATE, DELETE or WITH text its own name on its
 * connection, so PostgreSQL parses it once and, after its first executions, reuses a plan.
 *
 * Bounded: at most `MAX_PREPARED` statements a connection (the hot ones are met first; past the
 * bound a text runs unnamed, as before). A statement whose cached plan PostgreSQL refuses because
 * its result columns changed (a newer release added a column to a table read with `*`, during a
 * rolling upgrade) is given a new name, so it is prepared again; outside a transaction it is
 * retried at once, inside one the error ends the transaction as any error would.
 *
 * Not for a pooler in transaction mode that predates prepared-statement support (PgBouncer
 * before 1.21): set DB_PREPARED_STATEMENTS=0 there.
 */
import pg from 'pg';

export const MAX_PREPARED = 300;
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;
const TRANSACTION_START = /^\s*(begin|start transaction)\b/i;
const TRANSACTION_END = /^\s*(commit|rollback|end)\b/i;

function planChanged(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

export class PreparingClient extends pg.Client {
  /** Statement text to its name on this connection. */
  private readonly names = new Map<string, string>();
  private issued = 0;
  private inTransaction = false;

  private nameFor(text: string): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined || this.issued >= MAX_PREPARED) return known;
    const name = `sr_${++this.issued}`;
    this.names.set(text, name);
    return name;
  }

  private async named(text: string, values: unknown[]): Promise<pg.QueryResult> {
    const name = this.nameFor(text);
    if (name === undefined) return super.query(text, values);
    try {
      return await super.query({ name, text, values });
    } catch (err) {
      if (!planChanged(err)) throw err;
      this.names.delete(text);
      if (this.inTransaction) throw err;
      const renamed = this.nameFor(text);
      return renamed === undefined ? super.query(text, values) : super.query({ name: renamed, text, values });
    }
  }

  // Kysely calls query(text, values); every other form (a config object, a cursor, a callback) passes through.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && callback === undefined && (values === undefined || Array.isArray(values))) {
      if (TRANSACTION_START.test(config)) this.inTransaction = true;
      else if (TRANSACTION_END.test(config)) this.inTransaction = false;
      else if (PREPARABLE.test(config)) return this.named(config, values ?? []);
    }
    return super.query(config, values, callback);
  }
}
