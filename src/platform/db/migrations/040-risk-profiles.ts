/**
 * Risk evaluation of sign-ins (issue 29, section 2). `risk_profiles`: one row per account, what its
 * successful sign-ins looked like, every part bounded (the recent devices as keyed hashes, the
 * countries with their counts, the networks, an hour-of-day histogram, the last located sign-in).
 * `risk_network_failures`: which accounts failed to sign in from which client network, recently
 * (both as keyed hashes), for credential stuffing; a background job deletes what is older than
 * the window. Expand only: two new tables.
 */
import type { Kysely } from 'kysely';
import { runScript } from './script.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await runScript(db, `
    CREATE TABLE risk_profiles (
      user_id integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
      success_count integer NOT NULL DEFAULT 0,
      devices text[] NOT NULL DEFAULT '{}',
      countries jsonb NOT NULL DEFAULT '{}',
      asns bigint[] NOT NULL DEFAULT '{}', -- autonomous system numbers are 32-bit unsigned
      hours integer[] NOT NULL DEFAULT array_fill(0, ARRAY[24]),
      last_at timestamptz,
      located_at timestamptz,
      located_country text,
      located_latitude double precision,
      located_longitude double precision,
      located_accuracy_km double precision
    );
    CREATE TABLE risk_network_failures (
      network_hash text NOT NULL,
      account_hash text NOT NULL,
      failed_at timestamptz NOT NULL,
      PRIMARY KEY (network_hash, account_hash)
    );
    CREATE INDEX risk_network_failures_time ON risk_network_failures (failed_at);
  `);
}
