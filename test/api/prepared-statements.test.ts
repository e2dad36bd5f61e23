/**
 * Named prepared statements on the PostgreSQL pool (src/platform/db/prepared.ts): a statement is
 * parsed once per connection and reused, at most MAX_PREPARED of them per connection, and a
 * statement whose result columns change under it (a newer release adds a column during a rolling
 * upgrade) keeps working instead of failing on its cached plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { sql } from 'kysely';
import { openDatabase } from '../../src/platform/db/database.js';
import { MAX_PREPARED, PreparingClient } from '../../src/platform/db/prepared.js';
import { searchFaqs } from '../../src/faq/search.js';
import { Vocabulary } from '../../src/faq/vocabulary.js';
import { systemClock } from '../../src/platform/clock.js';
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

describe('prepared statements on the index-scan pool', () => {
  it('prepares the FAQ search on the connections it runs on, as the main pool does', async () => {
    const handle = await openDatabase({ kind: 'postgres', url: await emptyPostgresDatabase('prepared_scans'), poolSize: 2 }, pino({ level: 'silent' }));
    try {
      await handle.migrate();
      const scans = handle.indexScans!;
      const vocabulary = new Vocabulary({ db: handle.db, clock: systemClock, bus: handle.bus, log: pino({ level: 'silent' }) });
      // One query at a time: the pool hands the same idle connection back, whose statements are listed.
      await searchFaqs(handle.db, vocabulary, { query: 'lost card', limit: 10 }, scans);
      const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(scans);
      expect(rows.some((r) => /faqs/i.test(r.statement))).toBe(true);
    } finally {
      await handle.close();
    }
  });
});
