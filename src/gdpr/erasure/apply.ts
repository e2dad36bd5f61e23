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
import { sql } from 'kysely';
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

/** `details` keys that may carry a contact, a mask, a name or a client trait: removed from the person's audit entries. */
export const PERSONAL_DETAIL_KEYS: ReadonlySet<string> = new Set([
  'email', 'phone', 'to', 'destination', 'destination_masked', 'masked', 'subject_masked', 'contact', 'contacts', 'address',
  'new_value', 'old_value', 'full_name', 'name', 'date_of_birth', 'identifier', 'login', 'ip', 'ip_address', 'user_agent',
  'device_fingerprint', 'fingerprint', 'location', 'device_name', 'label', 'push_token', 'name_id', 'idp_subject',
  'from', 'recipient', 'old', 'new', 'device',
]);

/** A `details` key that carries a contact or a mask: listed, or named `…masked` / `…_mask`. */
const personalKey = (k: string): boolean => PERSONAL_DETAIL_KEYS.has(k) || /masked$|_mask$/.test(k);

/** `details` without personal keys (at any depth), with the person's identifiers replaced by the pseudonym. */
export function scrubDetails(value: unknown, c: Pick<ErasureContext, 'user' | 'pseudonym'>): unknown {
  const identifiers = [c.user.username, c.user.email, c.user.phone].filter((x): x is string => !!x).map((x) => x.toLowerCase());
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

async function pseudonymiseAudit(c: ErasureContext, table: string): Promise<number> {
  const rows = (await sql<{ audit_id: string; timestamp: Date; ip_address: string | null; device_fingerprint: string | null; details: unknown }>`
    SELECT audit_id, timestamp, ip_address, device_fingerprint, details FROM ${sql.table(table)}
    WHERE user_id = ${c.user.uuid} OR lower(username) = lower(${c.user.username})`.execute(c.db)).rows;
  for (const r of rows) {
    await sql`UPDATE ${sql.table(table)} SET username = ${c.pseudonym}, ip_address = ${hashed(c, r.ip_address)}, device_fingerprint = ${hashed(c, r.device_fingerprint)},
      user_agent = NULL, location = NULL, details = ${JSON.stringify(scrubDetails(r.details, c))}::jsonb
      WHERE audit_id = ${r.audit_id} AND timestamp = ${r.timestamp}`.execute(c.db);
  }
  return rows.length;
}

async function pseudonymiseConsents(c: ErasureContext): Promise<number> {
  const rows = (await sql<{ id: number; client_address: string | null }>`SELECT id, client_address FROM consent_history WHERE user_id = ${c.user.id}`.execute(c.db)).rows;
  for (const r of rows) {
    await sql`UPDATE consent_history SET client_address = ${hashed(c, r.client_address)}, user_agent = NULL WHERE id = ${r.id}`.execute(c.db);
  }
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
    why: 'Security and transaction records a bank must keep for years after the relationship ends (anti-money-laundering record keeping, e.g. 5 years; GDPR article 17(3)(b), a legal obligation): kept for the audit retention period (AUDIT_RETENTION_MONTHS), by uuid, with the username replaced by the pseudonym, addresses and fingerprints keyed-hashed, user agent and location nulled, contacts and masks removed from details.',
    apply: (c: ErasureContext, table: string) => pseudonymiseAudit(c, table),
  },
  consentHistory: {
    action: 'pseudonymise',
    why: 'The bank must be able to prove the consent it relied on while the account existed (GDPR article 7(1)), against a claim made later: kept by the tombstone\'s id (purpose, text version and hash, given or withdrawn, when, channel), the client address keyed-hashed and the user agent nulled.',
    apply: (c: ErasureContext) => pseudonymiseConsents(c),
  },
} satisfies Record<string, Erasure>;
