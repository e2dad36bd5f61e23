/**
 * Named prepared statements on the PostgreSQL pool (src/platform/db/prepared.ts): a statement is
 * parsed once per connection and reused, at most MAX_PREPARED of them per connection, and a
 * statement whose result columns change under it (a newer release adds a column during a rolling
 * upgrade) keeps working instead of failing on its cached plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PREPARED, PreparingClient } from '../../src/platform/db/prepared.js';
import { emptyPostgresDatabase } from '../harness/app.js';

describe('prepared statements', () => {
  let client: PreparingClient;
  const prepared = async (): Promise<string[]> => ((await client.query('SELECT statement FROM pg_prepared_statements')).rows as { statement: string }[]).map((r) => r.statement);

  beforeAll(async () => {
    client = new PreparingClient({ connectionString: await emptyPostgresDatabase('prepared') });
    await client.connect();
    await client.query('CREATE TABLE accounts (id integer PRIMARY KEY, name text)');
    await client.query('INSERT INTO accounts VALUES (1, $1), (2, $2)', ['ama', 'kofi']);
  });
  afterAll(() => client.end());

  it('prepares a statement once on its connection and runs it again by name', async () => {
    const text = 'SELECT name FROM accounts WHERE id = $1';
    expect((await client.query(text, [1])).rows).toEqual([{ name: 'ama' }]);
    expect((await client.query(text, [2])).rows).toEqual([{ name: 'kofi' }]);
    expect((await prepared()).filter((s) => s === text)).toHaveLength(1);
    // DDL and transaction control are never prepared.
    expect((await prepared()).some((s) => /CREATE TABLE|^BEGIN/i.test(s))).toBe(false);
  });

  it('keeps a SELECT * working when a column is added under it, and inside a transaction fails only that transaction', async () => {
    const text = 'SELECT * FROM accounts WHERE id = $1';
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, name: 'ama' }]);
    await client.query('ALTER TABLE accounts ADD COLUMN branch text');
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, name: 'ama', branch: null }]);

    await client.query('ALTER TABLE accounts ADD COLUMN tier integer');
    await client.query('BEGIN');
    await expect(client.query(text, [1])).rejects.toMatchObject({ code: '0A000' });
    await client.query('ROLLBACK');
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, name: 'ama', branch: null, tier: null }]);
  });

  it(`prepares at most ${MAX_PREPARED} statements a connection; past that, statements run unnamed`, async () => {
    for (let i = 0; i < MAX_PREPARED + 20; i++) {
      expect((await client.query(`SELECT ${i} + $1::int AS n`, [1])).rows).toEqual([{ n: i + 1 }]);
    }
    expect((await prepared()).length).toBeLessThanOrEqual(MAX_PREPARED);
    expect((await prepared()).length).toBeGreaterThan(MAX_PREPARED - 10);
  });
});
