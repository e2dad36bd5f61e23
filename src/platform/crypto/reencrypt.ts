/**
 * Re-encryption of every encrypted column under the current field key (`strongroom
 * rotate-field-key`, docs/operations.md). The operator first makes the new key current
 * (FIELD_ENCRYPTION_KEY) and the old one readable (FIELD_ENCRYPTION_KEYS_PREVIOUS) on every
 * server; this pass then rewrites what the old key wrote, and recomputes the blind indexes of
 * the email and the phone number.
 *
 * Batches of rows in primary-key order, each batch in its own transaction, and each pass selects
 * in SQL only the values not yet under the current key: interrupted anywhere and started again,
 * it loses nothing (a batch commits whole or not at all) and does only what is left. Each update
 * is conditional on the values it read, so a value a running server rewrote meanwhile (under the
 * current key) is left alone. With DB_FIELD_ENCRYPTION=1 it also encrypts plaintext values of
 * the columns that switch controls; with 0 it leaves them in clear and only rotates ciphertext.
 */
import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { BlindIndex, phoneIndexValue } from './blind-index.js';
import { FieldCipher, FieldCipherError, deriveKey } from './field-cipher.js';
import { ENCRYPTED_COLUMNS } from './columns.js';

interface EncryptedColumn {
  column: string;
  /** The purpose its key is derived for, as createServices (src/app.ts) builds its FieldCipher. */
  purpose: string;
  /** The context bound as additional data, as the module that writes it passes it. */
  context: string;
  /** Written through SensitiveColumns, so plaintext is legitimate when DB_FIELD_ENCRYPTION=0. */
  followsSwitch: boolean;
}

/** A blind index column and the encrypted column whose plaintext it is made of. */
interface IndexColumn {
  column: string;
  of: string;
  /** The normalised value indexed (UserStore writes the index of exactly this). */
  value: (plain: string) => string;
  /** Case-sensitive: indexed as it is (`BlindIndex.ofExact`), not trimmed and lowered. */
  exact?: boolean;
}

interface EncryptedTable {
  table: string;
  pk: string;
  columns: EncryptedColumn[];
  /** Blind indexes recomputed from their column (users: `email_bidx`, `phone_bidx`). */
  indexes?: readonly IndexColumn[];
}

/** Every encrypted column of the database. A new encrypted column must be added here. */
export const ENCRYPTED_TABLES: readonly EncryptedTable[] = [
  {
    table: 'users', pk: 'id', columns: [
      { column: 'email', ...ENCRYPTED_COLUMNS.usersEmail, followsSwitch: true },
      { column: 'phone', ...ENCRYPTED_COLUMNS.usersPhone, followsSwitch: true },
      { column: 'date_of_birth', ...ENCRYPTED_COLUMNS.usersDateOfBirth, followsSwitch: true },
    ],
    indexes: [
      { column: 'email_bidx', of: 'email', value: (v) => v },
      { column: 'phone_bidx', of: 'phone', value: phoneIndexValue },
    ],
  },
  { table: 'credentials', pk: 'id', columns: [{ column: 'password_enc', ...ENCRYPTED_COLUMNS.passwordCopy, followsSwitch: false }] },
  { table: 'sessions', pk: 'session_id', columns: [{ column: 'aes_key', ...ENCRYPTED_COLUMNS.sessionKey, followsSwitch: true }] },
  { table: 'jwt_signing_keys', pk: 'kid', columns: [{ column: 'secret_enc', ...ENCRYPTED_COLUMNS.jwtSecret, followsSwitch: false }] },
  { table: 'transport_keys', pk: 'key_id', columns: [{ column: 'private_pem_enc', ...ENCRYPTED_COLUMNS.transportKey, followsSwitch: false }] },
  { table: 'mfa_factors', pk: 'user_id', columns: [{ column: 'secret_enc', ...ENCRYPTED_COLUMNS.totpSecret, followsSwitch: false }] },
  { table: 'ldap_config', pk: 'singleton_key', columns: [{ column: 'bind_password_enc', ...ENCRYPTED_COLUMNS.ldapBindPassword, followsSwitch: false }] },
  { table: 'saml_sp_keys', pk: 'key_id', columns: [{ column: 'private_key_enc', ...ENCRYPTED_COLUMNS.samlSpKey, followsSwitch: false }] },
  { table: 'profile_contact_changes', pk: 'id', columns: [{ column: 'new_value', ...ENCRYPTED_COLUMNS.contactChangeValue, followsSwitch: true }] },
  {
    table: 'device_tokens', pk: 'id', columns: [{ column: 'push_token', ...ENCRYPTED_COLUMNS.devicePushToken, followsSwitch: true }],
    indexes: [{ column: 'push_token_bidx', of: 'push_token', value: (v) => v, exact: true }],
  },
];

export const BLIND_INDEX_PURPOSE = 'blind-index';

/** A value that cannot be re-encrypted: its key is not configured, or a unique index refuses it. */
export class ReencryptionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReencryptionError';
  }
}

export interface BatchDone {
  table: string;
  /** Batch number within the table, from 1. */
  batch: number;
  /** Rows rewritten by this batch, and in this table so far (this run). */
  rows: number;
  tableRows: number;
  /** Rows of this table that needed work when the run reached it. */
  tablePending: number;
  /** Batches committed by this run, over every table. */
  batchesDone: number;
}

export interface TableReport {
  table: string;
  batches: number;
  /** Rows rewritten. */
  rows: number;
  /** Values rewritten per column (`email_bidx`, `phone_bidx` for recomputed indexes). */
  values: Record<string, number>;
  /** Rows a server rewrote between this pass's read and its write: already current, left alone. */
  skipped: number;
}

export interface Remaining {
  table: string;
  column: string;
  /** Values (or indexes) still under a key other than the current one. */
  oldKey: number;
  /** Values in clear that DB_FIELD_ENCRYPTION=1 wants encrypted, or values with no index. */
  unprotected: number;
}

export interface ReencryptOptions {
  /** Rows per batch (and per transaction). Default 200. */
  batchSize?: number;
  /** Progress, after each committed batch. */
  onBatch?: (p: BatchDone) => void;
  /** Called after each committed batch, after `onBatch`: tests throw here to simulate a crash. */
  afterBatch?: (p: BatchDone) => void | Promise<void>;
  /** Called when a table is done. */
  onTable?: (r: TableReport) => void;
}

type Row = Record<string, string | number | null>;

/** A short public fingerprint of a master key, to tell keys apart in output (never the key). */
export function keyFingerprint(master: Buffer): string {
  return createHash('sha256').update(deriveKey(master, 'fingerprint')).digest('hex').slice(0, 8);
}

export class FieldReencryption {
  private readonly ciphers = new Map<string, FieldCipher>();
  private readonly index: BlindIndex;

  /**
   * @param deps.masters the current master key first, then every previous one still in use.
   * @param deps.encryptColumns DB_FIELD_ENCRYPTION.
   */
  constructor(private readonly deps: { db: Db; masters: Buffer[]; encryptColumns: boolean }) {
    for (const t of ENCRYPTED_TABLES) for (const c of t.columns) if (!this.ciphers.has(c.purpose)) this.ciphers.set(c.purpose, new FieldCipher(deps.masters, c.purpose));
    this.index = new BlindIndex(deps.masters, BLIND_INDEX_PURPOSE);
  }

  /** Rewrites every value not under the current key; returns what it did per table. */
  async run(opts: ReencryptOptions = {}): Promise<TableReport[]> {
    const batchSize = opts.batchSize ?? 200;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a positive integer');
    const reports: TableReport[] = [];
    let batchesDone = 0;
    for (const t of ENCRYPTED_TABLES) {
      const report: TableReport = { table: t.table, batches: 0, rows: 0, values: {}, skipped: 0 };
      reports.push(report);
      const tablePending = await this.count(t, this.pending(t));
      let cursor: string | number | undefined;
      for (;;) {
        const { rows, last, done } = await this.deps.db.transaction().execute(async (trx) => {
          const rows = await sql<Row>`
            SELECT ${sql.join(this.selected(t).map((c) => sql.ref(c)))} FROM ${sql.table(t.table)}
            WHERE (${this.pending(t)}) ${cursor === undefined ? sql`` : sql`AND ${sql.ref(t.pk)} > ${cursor}`}
            ORDER BY ${sql.ref(t.pk)} LIMIT ${batchSize}`.execute(trx);
          let done = 0;
          for (const row of rows.rows) if (await this.rewrite(trx, t, row, report)) done++;
          return { rows: rows.rows.length, last: rows.rows.at(-1)?.[t.pk] ?? undefined, done };
        });
        if (rows === 0) break;
        cursor = last!;
        report.batches++;
        report.rows += done;
        batchesDone++;
        const p: BatchDone = { table: t.table, batch: report.batches, rows: done, tableRows: report.rows, tablePending, batchesDone };
        opts.onBatch?.(p);
        await opts.afterBatch?.(p);
        if (rows < batchSize) break;
      }
      opts.onTable?.(report);
    }
    return reports;
  }

  /** What is left under an old key or unprotected, per column; all zero after a complete run. */
  async remaining(): Promise<Remaining[]> {
    const out: Remaining[] = [];
    for (const t of ENCRYPTED_TABLES) {
      for (const c of t.columns) {
        const ref = sql.ref(c.column);
        const old = sql<boolean>`${ref} LIKE 'fe1:%' AND ${ref} !~ ${this.cipher(c).currentKeyPattern()}`;
        const clear = c.followsSwitch && !this.deps.encryptColumns ? sql<boolean>`false` : sql<boolean>`${ref} IS NOT NULL AND ${ref} NOT LIKE 'fe1:%'`;
        out.push({ table: t.table, column: c.column, oldKey: await this.count(t, old), unprotected: await this.count(t, clear) });
      }
      for (const i of t.indexes ?? []) {
        const ref = sql.ref(i.column);
        out.push({
          table: t.table, column: i.column,
          oldKey: await this.count(t, sql`${ref} IS NOT NULL AND ${ref} NOT LIKE ${`${this.index.currentKeyId}:%`}`),
          unprotected: await this.count(t, sql`${sql.ref(i.of)} IS NOT NULL AND ${ref} IS NULL`),
        });
      }
    }
    return out;
  }

  private cipher(c: EncryptedColumn): FieldCipher {
    return this.ciphers.get(c.purpose)!;
  }

  private selected(t: EncryptedTable): string[] {
    return [t.pk, ...t.columns.map((c) => c.column), ...(t.indexes ?? []).map((i) => i.column)];
  }

  /** SQL: this row holds a value this pass must rewrite. */
  private pending(t: EncryptedTable): RawBuilder<boolean> {
    const conditions = t.columns.map((c) => {
      const ref = sql.ref(c.column);
      const stored = c.followsSwitch && !this.deps.encryptColumns ? sql`${ref} LIKE 'fe1:%'` : sql`${ref} IS NOT NULL`;
      return sql`(${stored} AND ${ref} !~ ${this.cipher(c).currentKeyPattern()})`;
    });
    for (const i of t.indexes ?? []) {
      const ref = sql.ref(i.column);
      conditions.push(sql`(${sql.ref(i.of)} IS NOT NULL AND (${ref} IS NULL OR ${ref} NOT LIKE ${`${this.index.currentKeyId}:%`}))`);
    }
    return sql<boolean>`${sql.join(conditions, sql` OR `)}`;
  }

  private async count(t: EncryptedTable, where: RawBuilder<unknown>): Promise<number> {
    const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(t.table)} WHERE ${where}`.execute(this.deps.db);
    return r.rows[0]?.n ?? 0;
  }

  /** Re-encrypts one row's values (and its index) if needed; false if a server changed it first. */
  private async rewrite(trx: Db, t: EncryptedTable, row: Row, report: TableReport): Promise<boolean> {
    const next: Record<string, string> = {};
    const plain: Record<string, string> = {};
    for (const c of t.columns) {
      const stored = row[c.column];
      if (typeof stored !== 'string') continue;
      const cipher = this.cipher(c);
      if (!cipher.isEncrypted(stored)) {
        plain[c.column] = stored;
        if (!c.followsSwitch || this.deps.encryptColumns) next[c.column] = cipher.encrypt(stored, c.context);
        continue;
      }
      const value = this.open(cipher, stored, c, t, row);
      plain[c.column] = value;
      if (cipher.keyIdOf(stored) !== cipher.currentKeyId) next[c.column] = cipher.encrypt(value, c.context);
    }
    for (const i of t.indexes ?? []) {
      const value = plain[i.of];
      if (value === undefined) continue;
      const idx = i.exact ? this.index.ofExact(i.value(value)) : this.index.of(i.value(value));
      if (row[i.column] !== idx) next[i.column] = idx;
    }
    if (Object.keys(next).length === 0) return false;

    const sets = Object.entries(next).map(([col, v]) => sql`${sql.ref(col)} = ${v}`);
    const unchanged = t.columns.map((c) => sql`${sql.ref(c.column)} IS NOT DISTINCT FROM ${row[c.column]}`);
    let updated: number;
    try {
      const r = await sql`UPDATE ${sql.table(t.table)} SET ${sql.join(sets)} WHERE ${sql.ref(t.pk)} = ${row[t.pk]} AND ${sql.join(unchanged, sql` AND `)} RETURNING 1`.execute(trx);
      updated = r.rows.length;
    } catch (err) {
      if ((err as { code?: string }).code === '23505') {
        const phone = String((err as { constraint?: string }).constraint ?? (err as Error).message).includes('phone');
        throw new ReencryptionError(phone
          ? `${t.table} ${t.pk} ${String(row[t.pk])}: its phone number equals another user's once separators are removed, so the unique phone index refuses it. Give one of the two users another phone number, then run again.`
          : `${t.table} ${t.pk} ${String(row[t.pk])}: its email equals another user's once trimmed and lower-cased, so the unique email index refuses it. Give one of the two users another email, then run again.`, { cause: err });
      }
      throw err;
    }
    if (updated === 0) {
      report.skipped++;
      return false;
    }
    for (const col of Object.keys(next)) report.values[col] = (report.values[col] ?? 0) + 1;
    return true;
  }

  private open(cipher: FieldCipher, stored: string, c: EncryptedColumn, t: EncryptedTable, row: Row): string {
    try {
      return cipher.decrypt(stored, c.context);
    } catch (err) {
      if (!(err instanceof FieldCipherError)) throw err;
      const kid = cipher.keyIdOf(stored);
      throw new ReencryptionError(
        `${t.table}.${c.column} of ${t.pk} ${String(row[t.pk])} cannot be decrypted with the current key or any key of FIELD_ENCRYPTION_KEYS_PREVIOUS` +
        ` (it was written under ${kid ? `key id ${kid} of purpose "${c.purpose}"` : 'no known format'}). Add the key that wrote it to FIELD_ENCRYPTION_KEYS_PREVIOUS and run again.`,
        { cause: err },
      );
    }
  }
}
