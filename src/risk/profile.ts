/**
 * What the risk evaluation keeps and reads (migration 040):
 *
 * - `risk_profiles`, one row per account, every part bounded: the last PROFILE_BOUNDS.devices
 *   device fingerprints (keyed hashes, most recent first), up to PROFILE_BOUNDS.countries
 *   countries with their sign-in counts, the last PROFILE_BOUNDS.networks networks (ASNs), a
 *   24-hour histogram (UTC), the success count, the last sign-in's time and the last located
 *   one's time, country and coordinates. Merged by one upsert in the session's transaction, in
 *   SQL, so parallel sign-ins of one account each count exactly once.
 * - `risk_network_failures`: which accounts (keyed hashes) failed from which client network
 *   (keyed hash), and when; older than the window it is deleted by the clean-up job.
 *
 * Failed passwords and failed second factors on the account are counted from the audit trail
 * itself (FAILED_LOGIN_ATTEMPT and MFA_FAILED entries of the account in the window, over the
 * user-and-time index): the trail is written anyway, and a second record would only drift from it.
 */
import { sql } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { RiskConfig } from '../platform/config-risk.js';
import type { Db } from '../platform/db/database.js';

/** How much of each history a profile keeps. */
export const PROFILE_BOUNDS = { devices: 20, countries: 10, networks: 20 } as const;

/** The last sign-in from a known country (internal and unknown addresses leave it as it was). */
export interface LastLocated {
  at: number;
  country: string;
  latitude: number | null;
  longitude: number | null;
  accuracyKm: number | null;
}

export interface RiskProfile {
  successCount: number;
  /** Keyed hashes of device fingerprints, most recent first. */
  devices: readonly string[];
  /** Country code -> successful sign-ins from it. */
  countries: Readonly<Record<string, number>>;
  /** ASNs, most recent first. */
  asns: readonly number[];
  /** Successful sign-ins per hour of the day (UTC), 24 entries. */
  hours: readonly number[];
  lastAt: number | null;
  lastLocated: LastLocated | null;
}

/** What the evaluation of a right password reads, in one round trip. */
export interface PriorSignIns {
  profile: RiskProfile | null;
  failedPasswords: number;
  failedSecondFactors: number;
  failingAccounts: number;
}

/** A successful sign-in, as the profile records it. */
export interface Visit {
  at: number;
  deviceHash: string | null;
  /** Null: internal or unknown (the located fields stay as they were). */
  country: string | null;
  asn: number | null;
  latitude: number | null;
  longitude: number | null;
  accuracyKm: number | null;
}

interface ProfileRow {
  success_count: number | null;
  devices: string[] | null;
  countries: Record<string, number> | string | null;
  asns: number[] | null;
  hours: number[] | null;
  last_at: Date | string | null;
  located_at: Date | string | null;
  located_country: string | null;
  located_latitude: number | null;
  located_longitude: number | null;
  located_accuracy_km: number | null;
}

/** Counting stops here: past any threshold, the exact number adds nothing. */
const COUNT_CAP = 1000;

const ms = (d: Date | string | null): number | null => (d === null ? null : new Date(d).getTime());

function profileOf(r: ProfileRow): RiskProfile | null {
  if (r.success_count === null) return null;
  const located = ms(r.located_at);
  return {
    successCount: r.success_count,
    devices: r.devices ?? [],
    countries: typeof r.countries === 'string' ? (JSON.parse(r.countries) as Record<string, number>) : (r.countries ?? {}),
    asns: (r.asns ?? []).map(Number),
    hours: (r.hours ?? []).map(Number),
    lastAt: ms(r.last_at),
    lastLocated: located === null || r.located_country === null ? null : {
      at: located, country: r.located_country, latitude: r.located_latitude, longitude: r.located_longitude, accuracyKm: r.located_accuracy_km,
    },
  };
}

export class RiskStore {
  constructor(private readonly deps: { db: Db; clock: Clock; settings: Pick<RiskConfig, 'windowMinutes' | 'stuffingAccounts'> }) {}

  private since(): Date {
    return new Date(this.deps.clock.now() - this.deps.settings.windowMinutes * 60_000);
  }

  /**
   * The account's failed sign-ins in the window: wrong secrets (not refusals of a right one) and
   * attempts while it was locked. The lockout (MAX_LOGIN_ATTEMPTS, 5 by default) stops wrong
   * secrets at its limit, so without the locked ones "more than 5" could never be reached.
   */
  private failedPasswordsOf(userUuid: string, since: Date) {
    return sql<number>`(SELECT count(*)::int FROM (SELECT 1 FROM audit_log a WHERE a.user_id = ${userUuid} AND a.timestamp > ${since}::timestamptz
      AND ((a.event_type = 'FAILED_LOGIN_ATTEMPT' AND a.details->>'reason' = 'invalid_credentials') OR a.event_type = 'LOCKED_LOGIN_ATTEMPT') LIMIT ${COUNT_CAP}) f)`;
  }

  /** Distinct accounts that failed from the network in the window (`except`: one not to count; no network: 0). */
  private failingAccountsOf(networkHash: string | null, since: Date, except: string | null) {
    if (networkHash === null) return sql<number>`0`;
    return sql<number>`(SELECT count(*)::int FROM (SELECT 1 FROM risk_network_failures n WHERE n.network_hash = ${networkHash} AND n.failed_at > ${since}::timestamptz
      AND n.account_hash IS DISTINCT FROM ${except} LIMIT ${COUNT_CAP}) s)`;
  }

  /**
   * The account's profile and the recent failures around this sign-in: one statement, a primary
   * key read and three short index range scans (run while the password is being compared).
   * `networkHash` null: the address is a gateway's, whose failures are not counted.
   */
  async prior(user: { id: number; uuid: string }, networkHash: string | null): Promise<PriorSignIns> {
    const since = this.since();
    const r = await sql<ProfileRow & { failed_passwords: number; failed_factors: number; failing_accounts: number }>`
      SELECT p.success_count, p.devices, p.countries, p.asns, p.hours, p.last_at, p.located_at, p.located_country,
             p.located_latitude, p.located_longitude, p.located_accuracy_km,
             ${this.failedPasswordsOf(user.uuid, since)} AS failed_passwords,
             (SELECT count(*)::int FROM (SELECT 1 FROM audit_log a WHERE a.user_id = ${user.uuid} AND a.timestamp > ${since}::timestamptz
               AND a.event_type = 'MFA_FAILED' AND a.details->>'reason' IS DISTINCT FROM 'locked' LIMIT ${COUNT_CAP}) f) AS failed_factors,
             ${this.failingAccountsOf(networkHash, since, null)} AS failing_accounts
      FROM (SELECT 1) AS one LEFT JOIN risk_profiles p ON p.user_id = ${user.id}`.execute(this.deps.db);
    const row = r.rows[0]!;
    return { profile: profileOf(row), failedPasswords: row.failed_passwords, failedSecondFactors: row.failed_factors, failingAccounts: row.failing_accounts };
  }

  /**
   * A wrong password: the account is counted against the client's network, and the counts come
   * back with this failure included (its audit entry is written after, with them). `networkHash`
   * null: the address is a gateway's; the failure is not counted against it.
   */
  async failure(accountHash: string, networkHash: string | null, userUuid: string | null): Promise<{ failedPasswords: number; failingAccounts: number }> {
    const since = this.since();
    const at = new Date(this.deps.clock.now());
    const hit = networkHash === null ? sql`SELECT 1` : sql`
        INSERT INTO risk_network_failures (network_hash, account_hash, failed_at) VALUES (${networkHash}, ${accountHash}, ${at}::timestamptz)
        ON CONFLICT (network_hash, account_hash) DO UPDATE SET failed_at = GREATEST(risk_network_failures.failed_at, EXCLUDED.failed_at)`;
    const r = await sql<{ failed_passwords: number; failing_accounts: number }>`
      WITH hit AS (${hit})
      SELECT ${userUuid === null ? sql<number>`0` : this.failedPasswordsOf(userUuid, since)} + 1 AS failed_passwords,
             ${this.failingAccountsOf(networkHash, since, accountHash)} + ${networkHash === null ? 0 : 1} AS failing_accounts`.execute(this.deps.db);
    const row = r.rows[0]!;
    return { failedPasswords: row.failed_passwords, failingAccounts: row.failing_accounts };
  }

  /** Adds a successful sign-in to the account's profile, in `trx` (the session's transaction). */
  async recordSuccess(trx: Db, userId: number, v: Visit): Promise<void> {
    const at = new Date(v.at);
    const hour = new Date(v.at).getUTCHours() + 1; // SQL arrays count from 1
    const b = PROFILE_BOUNDS;
    const dev = sql`${v.deviceHash}::text`;
    const cc = sql`${v.country}::text`;
    const asn = sql`${v.asn}::bigint`;
    const located = v.country === null ? null : at;
    // The new country is kept whatever its count: the least-seen others make room for it.
    const countries = sql`(SELECT COALESCE(jsonb_object_agg(k, n), '{}'::jsonb) FROM (
        SELECT k, n FROM (
          SELECT key AS k, CASE WHEN key = ${cc} THEN value::int + 1 ELSE value::int END AS n FROM jsonb_each_text(risk_profiles.countries)
          UNION ALL SELECT ${cc}, 1 WHERE risk_profiles.countries->${cc} IS NULL
        ) merged ORDER BY (k = ${cc}) DESC, n DESC, k LIMIT ${sql.lit(b.countries)}) kept)`;
    await sql`
      INSERT INTO risk_profiles (user_id, success_count, devices, countries, asns, hours, last_at,
        located_at, located_country, located_latitude, located_longitude, located_accuracy_km)
      VALUES (${userId}, 1,
        CASE WHEN ${dev} IS NULL THEN '{}'::text[] ELSE ARRAY[${dev}] END,
        CASE WHEN ${cc} IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(${cc}, 1) END,
        CASE WHEN ${asn} IS NULL THEN '{}'::bigint[] ELSE ARRAY[${asn}] END,
        (SELECT array_agg(CASE WHEN i = ${hour} THEN 1 ELSE 0 END ORDER BY i) FROM generate_series(1, 24) AS i),
        ${at}::timestamptz, ${located}::timestamptz, ${cc}, ${v.latitude}::double precision, ${v.longitude}::double precision, ${v.accuracyKm}::double precision)
      ON CONFLICT (user_id) DO UPDATE SET
        success_count = risk_profiles.success_count + 1,
        devices = CASE WHEN ${dev} IS NULL THEN risk_profiles.devices ELSE (ARRAY[${dev}] || array_remove(risk_profiles.devices, ${dev}))[1:${sql.lit(b.devices)}] END,
        countries = CASE WHEN ${cc} IS NULL THEN risk_profiles.countries ELSE ${countries} END,
        asns = CASE WHEN ${asn} IS NULL THEN risk_profiles.asns ELSE (ARRAY[${asn}] || array_remove(risk_profiles.asns, ${asn}))[1:${sql.lit(b.networks)}] END,
        hours = (SELECT array_agg(CASE WHEN i = ${hour} THEN n + 1 ELSE n END ORDER BY i) FROM unnest(risk_profiles.hours) WITH ORDINALITY AS h(n, i)),
        last_at = GREATEST(risk_profiles.last_at, EXCLUDED.last_at),
        located_at = CASE WHEN ${cc} IS NULL THEN risk_profiles.located_at ELSE EXCLUDED.located_at END,
        located_country = COALESCE(EXCLUDED.located_country, risk_profiles.located_country),
        located_latitude = CASE WHEN ${cc} IS NULL THEN risk_profiles.located_latitude ELSE EXCLUDED.located_latitude END,
        located_longitude = CASE WHEN ${cc} IS NULL THEN risk_profiles.located_longitude ELSE EXCLUDED.located_longitude END,
        located_accuracy_km = CASE WHEN ${cc} IS NULL THEN risk_profiles.located_accuracy_km ELSE EXCLUDED.located_accuracy_km END`.execute(trx);
  }

  /** Deletes the network failures older than the window; returns how many. */
  async purge(): Promise<number> {
    const r = await sql`DELETE FROM risk_network_failures WHERE failed_at <= ${this.since()}::timestamptz`.execute(this.deps.db);
    return Number(r.numAffectedRows ?? 0);
  }
}
