import { CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { describe as summary } from './traced-dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const db = new Kysely<any>({
  dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (k) => new PostgresIntrospector(k), createQueryCompiler: () => new PostgresQueryCompiler() },
});

describe('a statement\'s span name and attributes', () => {
  it('are its operation and first table, from the query builder', () => {
    expect(summary(db.selectFrom('users as u').innerJoin('sessions', 'sessions.user_id', 'u.id').select('u.id').where('u.username', '=', 'amina').compile())).toEqual({ operation: 'SELECT', table: 'users' });
    expect(summary(db.insertInto('sessions').values({ id: 'x' }).compile())).toEqual({ operation: 'INSERT', table: 'sessions' });
    expect(summary(db.updateTable('users').set({ email: 'amina@bank.example' }).where('id', '=', 1).compile())).toEqual({ operation: 'UPDATE', table: 'users' });
    expect(summary(db.deleteFrom('login_attempts').where('id', '=', 1).compile())).toEqual({ operation: 'DELETE', table: 'login_attempts' });
  });

  it('raw SQL: the first word and the first name after FROM, INTO or UPDATE, never from inside a string literal', () => {
    expect(summary(sql`SELECT 'from amina' AS x, u.id FROM users u WHERE u.username = ${'amina'}`.compile(db))).toEqual({ operation: 'SELECT', table: 'users' });
    expect(summary(sql`with spent as (select 1 from refresh_tokens) select * from spent`.compile(db))).toEqual({ operation: 'WITH', table: 'refresh_tokens' });
    expect(summary(CompiledQuery.raw('begin'))).toEqual({ operation: 'BEGIN', table: undefined });
    expect(summary(CompiledQuery.raw("select 'it''s from alice'"))).toEqual({ operation: 'SELECT', table: undefined });
  });
});
