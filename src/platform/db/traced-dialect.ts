/**
 * A span per SQL statement for any Kysely dialect (docs/operations.md "Traces"). The driver's
 * connections get an `executeQuery` of their own, as Kysely's own query log wraps them, so
 * statements of transactions (BEGIN, COMMIT) are seen too. A span is named by the statement's
 * operation and first table (`SELECT users`, `db.query.summary`), never by its text or its
 * parameters, and says which server (`server.address` of PostgreSQL; none for PGlite). Waiting
 * longer than a millisecond for a connection (a full pool, PGlite's one connection busy) is a
 * span of its own. Outside a traced request: one lookup of the current span a statement.
 */
import { AliasNode, TableNode, type CompiledQuery, type DatabaseConnection, type Dialect, type Driver, type OperationNode, type RootOperationNode } from 'kysely';
import type { Attributes } from '@opentelemetry/api';
import { inSpan, recordSpan, traced } from '../observability/tracing.js';

/** `dialect` with a span per statement; `url`: PostgreSQL's connection string (only its host and port are read), none for PGlite. */
export function tracedDialect(dialect: Dialect, url?: string): Dialect {
  const server = url === undefined ? undefined : serverOf(url);
  const base: Attributes = { 'db.system.name': 'postgresql', ...(server === undefined ? {} : { 'server.address': server.address, 'server.port': server.port }) };
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => tracedDriver(dialect.createDriver(), base),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

/** Where PostgreSQL is, for `server.address`; none for a Unix socket or a URL that does not parse. */
function serverOf(url: string): { address: string; port: number } | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  return u.hostname === '' ? undefined : { address: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port || 5432) };
}

function tracedDriver(driver: Driver, base: Attributes): Driver {
  const wrapped = new WeakSet<DatabaseConnection>();
  const acquire = driver.acquireConnection.bind(driver);
  driver.acquireConnection = async () => {
    const began = traced() ? performance.now() : undefined;
    const connection = await acquire();
    if (began !== undefined && performance.now() - began >= 1) recordSpan('connection wait', base, began);
    if (!wrapped.has(connection)) {
      wrapped.add(connection);
      const execute = connection.executeQuery.bind(connection);
      connection.executeQuery = ((query: CompiledQuery) => (traced() ? inStatementSpan(query, base, () => execute(query)) : execute(query))) as DatabaseConnection['executeQuery'];
    }
    return connection;
  };
  return driver;
}

function inStatementSpan<T>(query: CompiledQuery, base: Attributes, execute: () => Promise<T>): Promise<T> {
  const { operation, table } = describe(query);
  const summary = table === undefined ? operation : `${operation} ${table}`;
  return inSpan(summary, { ...base, 'db.operation.name': operation, 'db.query.summary': summary, ...(table === undefined ? {} : { 'db.collection.name': table }) }, execute);
}

const OPERATIONS: Partial<Record<RootOperationNode['kind'], string>> = {
  SelectQueryNode: 'SELECT', InsertQueryNode: 'INSERT', UpdateQueryNode: 'UPDATE', DeleteQueryNode: 'DELETE', MergeQueryNode: 'MERGE',
};

/**
 * The operation (from the query builder's tree, else the statement's first word) and the first
 * table: from the tree, else the first name after FROM, INTO or UPDATE in the statement with its
 * string literals blanked, so a name can only come from the code's SQL, never from a value.
 */
export function describe(query: CompiledQuery): { operation: string; table: string | undefined } {
  const node = query.query;
  const operation = OPERATIONS[node.kind] ?? /^\s*([A-Za-z]+)/.exec(query.sql)?.[1]?.toUpperCase() ?? 'QUERY';
  const first = node.kind === 'SelectQueryNode' || node.kind === 'DeleteQueryNode' ? node.from?.froms[0]
    : node.kind === 'InsertQueryNode' || node.kind === 'MergeQueryNode' ? node.into
      : node.kind === 'UpdateQueryNode' ? node.table : undefined;
  if (first !== undefined) return { operation, table: tableName(first) };
  if (node.kind !== 'RawNode') return { operation, table: undefined };
  const named = /\b(?:from|into|update)\s+"?([A-Za-z_][A-Za-z0-9_]*)/i.exec(query.sql.replace(/'(?:[^']|'')*'/g, "''"));
  return { operation, table: named?.[1] };
}

function tableName(node: OperationNode): string | undefined {
  if (TableNode.is(node)) return node.table.identifier.name;
  return AliasNode.is(node) ? tableName(node.node) : undefined;
}
