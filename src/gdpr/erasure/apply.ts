/**
 * What erasure does with a table's rows (the personal-data registry names one decision per table,
 * src/gdpr/export/registry.ts), and the three decisions that are more than a DELETE: the users
 * row becomes a tombstone, the audit trail and the consent history are pseudonymised.
 *
 * Pseudonymised means: the rows stay (a bank keeps its security records for years after the
 * relationship ends), still linked by the account's uuid (which now names a tombstone), but
 * whatever identifies the person directly is gone: the username becomes the account's pseudonym
 * (`erased-…`), client addresses and device fingerprints become keyed hashes (`k:…`: the bank,
 * holding the key, can still tell that two events came from one address, or check an address an
 * investigator gives it; the database alone cannot be reversed), user agents and locations are
 * nulled, and `details` loses every key that may carry a contact, a mask or a name.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../platform/db/database.js';

export type ErasureAction = 'delete' | 'erase columns' | 'pseudonymise' | 'keep';

/** One account's erasure, inside the job's transaction. */
export interface ErasureContext {
  /** The job's transaction. */
  db: Db;
  user: { id: number; uuid: string; username: string; email: string | null; phone: string | null };
  /** The account's pseudonym (`erased-…`), unique per account. */
  pseudonym: string;
  /** A keyed hash (`k:…`) of a value that must stay comparable but not readable. */
  keyed(value: string): string;
  now: Date;
}

export interface Erasure {
  action: ErasureAction;
  /** Why: what the rows are, and for `keep` and `pseudonymise` the legal ground. */
  why: string;
  /** Applies the decision to the person's rows of `table`; the rows touched. Absent for `keep`. */
  apply?(c: ErasureContext, table: string): Promise<number>;
}

/**
 * The risk indicators (`[{signal, weight, details}]`, src/risk/types.ts) of a jsonb column with
 * their details removed: which signals raised the score and by how much stay; where (countries,
 * networks, distances) goes, as `location` does.
 */
export const placelessIndicators = (column: RawBuilder<unknown>): RawBuilder<unknown> =>
  sql`(SELECT coalesce(jsonb_agg(jsonb_build_object('signal', i->'signal', 'weight', i->'weight')), '[]'::jsonb) FROM jsonb_array_elements(${column}) AS i)`;

/** `details` keys that may carry a contact, a mask, a name or a client trait: removed from the person's audit entries. */
export const PERSONAL_DETAIL_KEYS: ReadonlySet<string> = new Set([
  'email', 'phone', 'to', 'destination', 'destination_masked', 'masked', 'subject_masked', 'contact', 'contacts', 'address',
  'new_value', 'old_value', 'full_name', 'name', 'date_of_birth', 'identifier', 'login', 'ip', 'ip_address', 'user_agent',
  'device_fingerprint', 'fingerprint', 'location', 'device_name', 'label', 'push_token', 'name_id', 'idp_subject',
  'from', 'recipient', 'old', 'new', 'device', 'country', 'city', 'latitude', 'longitude', 'asn', 'as_org',
]);

/** A `details` key that carries a contact or a mask: listed, or named `…masked` / `…_mask`. */
const personalKey = (k: string): boolean => PERSONAL_DETAIL_KEYS.has(k) || /masked$|_mask$/.test(k);

/** What a person may have typed to sign in: the username, the email address, the phone number (lower case). */
const identifiersOf = (c: Pick<ErasureContext, 'user'>): string[] => [c.user.username, c.user.email, c.user.phone].filter((x): x is string => !!x).map((x) => x.toLowerCase());

/** `details` without personal keys (at any depth), with the person's identifiers replaced by the pseudonym. */
export function scrubDetails(value: unknown, c: Pick<ErasureContext, 'user' | 'pseudonym'>): unknown {
  const identifiers = identifiersOf(c);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return identifiers.some((id) => v.toLowerCase().includes(id)) ? c.pseudonym : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => !personalKey(k)).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value);
}

const hashed = (c: ErasureContext, v: string | null): string | null => (v === null || v === '' ? null : c.keyed(v));

/** Audit rows pseudonymised per round trip: one SELECT and one UPDATE for each batch. */
const AUDIT_BATCH = 500;

interface AuditRow { audit_id: string; ts: string; ip_address: string | null; device_fingerprint: string | null; details: unknown }

/**
 * The person's audit rows, in batches of AUDIT_BATCH in (timestamp, audit_id) order after
 * `after`. "The person's" is two conditions, each answered by an index of every partition
 * (migrations 029 and 039): the account's uuid, or the identifier typed (rows written before the
 * account existed or without a uuid, such as sign-ins under the username, email address or phone
 * number that found no account: the identifier is the person's either way). A UNION
 * of the two rather than an OR, which the planner answers by reading every partition whole. The
 * timestamp travels as text with its microseconds, so that the UPDATE finds rows written by the
 * database's clock too.
 */
async function auditBatch(c: ErasureContext, table: string, after: { ts: string; id: string }): Promise<AuditRow[]> {
  const t = sql.table(table);
  const later = sql`(timestamp, audit_id) > (${after.ts}::timestamptz, ${after.id}::uuid)`;
  return (await sql<AuditRow>`
    SELECT audit_id, to_char(timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ts, ip_address, device_fingerprint, details FROM (
      (SELECT audit_id, timestamp, ip_address, device_fingerprint, details FROM ${t}
        WHERE user_id = ${c.user.uuid} AND ${later} ORDER BY timestamp, audit_id LIMIT ${AUDIT_BATCH})
      UNION
      (SELECT audit_id, timestamp, ip_address, device_fingerprint, details FROM ${t}
        WHERE lower(username) IN (${sql.join(identifiersOf(c).map((x) => sql`${x}`))}) AND ${later} ORDER BY timestamp, audit_id LIMIT ${AUDIT_BATCH})
    ) AS mine ORDER BY timestamp, audit_id LIMIT ${AUDIT_BATCH}`.execute(c.db)).rows;
}

/**
 * Pseudonymises the person's audit rows a batch at a time: what needs the service's key or code
 * (the keyed hashes, the scrubbed details) is computed here, and each batch is written by one
 * UPDATE joined to the batch's values (the primary key finds each row in its month's partition).
 */
async function pseudonymiseAudit(c: ErasureContext, table: string): Promise<number> {
  let after = { ts: '-infinity', id: '00000000-0000-0000-0000-000000000000' };
  let total = 0;
  for (;;) {
    const rows = await auditBatch(c, table, after);
    if (rows.length === 0) break;
    const values = rows.map((r) => ({
      audit_id: r.audit_id, ts: r.ts, ip: hashed(c, r.ip_address), fp: hashed(c, r.device_fingerprint), details: scrubDetails(r.details, c) ?? {},
    }));
    await sql`UPDATE ${sql.table(table)} AS a SET username = ${c.pseudonym}, ip_address = v.ip, device_fingerprint = v.fp, user_agent = NULL, location = NULL,
      suspicious_indicators = ${placelessIndicators(sql.ref('a.suspicious_indicators'))}, details = v.details
      FROM jsonb_to_recordset(${JSON.stringify(values)}::jsonb) AS v(audit_id uuid, ts timestamptz, ip text, fp text, details jsonb)
      WHERE a.audit_id = v.audit_id AND a.timestamp = v.ts`.execute(c.db);
    total += rows.length;
    if (rows.length < AUDIT_BATCH) break;
    const last = rows[rows.length - 1]!;
    after = { ts: last.ts, id: last.audit_id };
  }
  return total;
}

/** The consent history's client addresses keyed-hashed and user agents nulled, in one UPDATE. */
async function pseudonymiseConsents(c: ErasureContext): Promise<number> {
  const rows = (await sql<{ id: number; client_address: string | null }>`SELECT id, client_address FROM consent_history WHERE user_id = ${c.user.id}`.execute(c.db)).rows;
  if (rows.length === 0) return 0;
  const values = rows.map((r) => ({ id: Number(r.id), addr: hashed(c, r.client_address) }));
  await sql`UPDATE consent_history AS h SET client_address = v.addr, user_agent = NULL
    FROM jsonb_to_recordset(${JSON.stringify(values)}::jsonb) AS v(id integer, addr text) WHERE h.id = v.id`.execute(c.db);
  return rows.length;
}

async function tombstone(c: ErasureContext): Promise<number> {
  // The sign-in counters keyed by the account (`u:<id>`) go with it.
  await sql`DELETE FROM login_attempts WHERE subject_key IN (${`u:${c.user.id}`}, ${`p:u:${c.user.id}`})`.execute(c.db); // the password's and the PIN's counters
  const out = await sql`UPDATE users SET username = ${c.pseudonym}, email = NULL, email_bidx = NULL, phone = NULL, phone_bidx = NULL, full_name = NULL,
    date_of_birth = NULL, language = NULL, is_active = false, must_change_password = false, erased_at = ${c.now}, updated_at = ${c.now}
    WHERE id = ${c.user.id} RETURNING 1`.execute(c.db);
  return out.rows.length;
}

export const ERASE = {
  tombstone: {
    action: 'erase columns',
    why: 'The account row stays as a tombstone, so that the uuid the kept records carry names something: username replaced by the account\'s pseudonym, email, phone, their blind indexes, name, date of birth and language erased, inactive, `erased_at` set.',
    apply: (c: ErasureContext) => tombstone(c),
  },
  audit: {
    action: 'pseudonymise',
    why: 'Security and transaction records a bank must keep for years after the relationship ends (anti-money-laundering record keeping, e.g. 5 years; GDPR article 17(3)(b), a legal obligation): kept for the audit retention period (AUDIT_RETENTION_MONTHS), by uuid, with the username replaced by the pseudonym, addresses and fingerprints keyed-hashed, user agent and location nulled, the risk indicators kept without their places (countries, networks, distances), contacts, masks and places removed from details.',
    apply: (c: ErasureContext, table: string) => pseudonymiseAudit(c, table),
  },
  consentHistory: {
    action: 'pseudonymise',
    why: 'The bank must be able to prove the consent it relied on while the account existed (GDPR article 7(1)), against a claim made later: kept by the tombstone\'s id (purpose, text version and hash, given or withdrawn, when, channel), the client address keyed-hashed and the user agent nulled.',
    apply: (c: ErasureContext) => pseudonymiseConsents(c),
  },
} satisfies Record<string, Erasure>;
