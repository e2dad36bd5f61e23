/**
 * `npx tsx bench/faq.ts`: the FAQ search row of `npm run bench` alone (issue 13 section 5), on a
 * PostgreSQL of its own with its durable defaults. Prints the two figures and their ratio.
 */
import pg from 'pg';
import { startPostgres } from '../test/harness/postgres.js';
import { faqSearchBench, FAQ_QUERIES } from './lib/faq.js';

const postgres = await startPostgres({ durable: true });
try {
  const client = new pg.Client({ connectionString: postgres.url('postgres') });
  await client.connect();
  await client.query('CREATE DATABASE faq_bench');
  const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  await client.end();
  const r = await faqSearchBench(postgres.url('faq_bench'), { rounds: 3, seconds: 2 });
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  console.log(`PostgreSQL ${version}, ${r.articles} active articles, ${FAQ_QUERIES.length} queries in a loop, one at a time, 3 turns of 2 s each:`);
  console.log(`| Measure | p50 | p99 | queries/s | found |`);
  console.log(`|---|---|---|---|---|`);
  console.log(`| naive ILIKE scan | ${ms(r.ilike.p50Ms)} | ${ms(r.ilike.p99Ms)} | ${Math.round(r.ilike.perSec)} | ${r.found.ilike}/${FAQ_QUERIES.length} |`);
  console.log(`| FAQ search (src/faq/search.ts) | ${ms(r.search.p50Ms)} | ${ms(r.search.p99Ms)} | ${Math.round(r.search.perSec)} | ${r.found.search}/${FAQ_QUERIES.length} |`);
  console.log(`Search p99 / ILIKE p99: ${(r.search.p99Ms / r.ilike.p99Ms).toFixed(2)}; target: search p99 <= 5 ms (${r.search.p99Ms <= 5 ? 'met' : 'NOT MET'}).`);
} finally {
  postgres.stop();
}
