/**
 * `strongroom rotate-field-key` (alias `reencrypt`): re-encrypts every encrypted column under
 * the current FIELD_ENCRYPTION_KEY (src/platform/crypto/reencrypt.ts), printing progress per
 * table, a summary, and whether the previous keys can now be dropped.
 *
 * It opens only the database, not the services: loading the JWT and transport keyrings would
 * fail on a value whose key is missing, before this command could say which key that is.
 */
import type { Logger } from 'pino';
import type { Config } from '../platform/config.js';
import { FieldReencryption, keyFingerprint, ReencryptionError, type Remaining, type TableReport } from '../platform/crypto/reencrypt.js';
import { fieldMasters, resolveSecrets } from '../platform/crypto/secrets.js';
import { openDatabase } from '../platform/db/database.js';
import { databaseTarget } from '../runtime.js';
import type { Command } from './args.js';
import { CommandFailed, type Print } from './usage.js';

type FieldKeyCommand = Extract<Command, { name: 'rotate-field-key' }>;

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function describeValues(values: Record<string, number>): string {
  const parts = Object.entries(values).map(([col, n]) => `${col} ${n}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** How the count of rows a blind index does not cover yet is said. */
const NOT_INDEXED: Record<string, string> = { email_bidx: 'emails not indexed', phone_bidx: 'phone numbers not indexed' };

function printRemaining(print: Print, remaining: Remaining[]): void {
  for (const r of remaining) {
    if (r.oldKey === 0 && r.unprotected === 0) continue;
    const what = [
      r.oldKey > 0 ? `${r.oldKey} under an old key` : '',
      r.unprotected > 0 ? `${r.unprotected} ${NOT_INDEXED[r.column] ?? 'in clear'}` : '',
    ].filter(Boolean).join(', ');
    print(`  ${r.table}.${r.column}: ${what}`);
  }
}

/** Runs the pass (or only the check) on the database the config names. */
export async function rotateFieldKey(config: Config, cmd: FieldKeyCommand, log: Logger, print: Print): Promise<void> {
  const secrets = resolveSecrets(config);
  if (secrets.generated.length > 0) {
    process.stderr.write(`Note: generated development secrets in ${config.dataDir}/secrets (${secrets.generated.join(', ')}).\n`);
  }
  const masters = fieldMasters(secrets);
  const previous = masters.slice(1).map(keyFingerprint);
  const database = await openDatabase(databaseTarget(config), log);
  try {
    await database.migrate();
    const pass = new FieldReencryption({ db: database.db, masters, encryptColumns: config.dbFieldEncryption });
    print(`${database.location}: field key ${keyFingerprint(masters[0]!)} (FIELD_ENCRYPTION_KEY) is current; ${previous.length === 0 ? 'no previous key is configured' : `previous ${previous.length === 1 ? 'key' : 'keys'} still read: ${previous.join(', ')}`}.`);
    if (!cmd.checkOnly) await reencrypt(pass, cmd, config, print);
    const remaining = await pass.remaining();
    const old = remaining.reduce((n, r) => n + r.oldKey, 0);
    const unprotected = remaining.reduce((n, r) => n + r.unprotected, 0);
    if (old > 0) {
      print(`Check: ${plural(old, 'value')} still under an old key:`);
      printRemaining(print, remaining);
      throw new CommandFailed(cmd.checkOnly
        ? 'Values remain under an old key: run strongroom rotate-field-key (without --check) before removing FIELD_ENCRYPTION_KEYS_PREVIOUS.'
        : 'Values remain under an old key after a complete pass: a server still writes with the old key as FIELD_ENCRYPTION_KEY. Give every server the new key, restart them, and run this command again. Keep FIELD_ENCRYPTION_KEYS_PREVIOUS until then.');
    }
    print('Check: no value remains under an old key, and every email and phone index is under the current key.');
    if (unprotected > 0) {
      print(`Note: ${plural(unprotected, 'value')} still in clear or not indexed (DB_FIELD_ENCRYPTION=1${cmd.checkOnly ? '; run without --check to encrypt them' : '; written while this ran by a server with DB_FIELD_ENCRYPTION=0?'}):`);
      printRemaining(print, remaining);
    }
    print(previous.length === 0
      ? 'No FIELD_ENCRYPTION_KEYS_PREVIOUS is configured: there is no old key to drop.'
      : `It is now safe to drop the old ${previous.length === 1 ? 'key' : 'keys'} (${previous.join(', ')}): remove FIELD_ENCRYPTION_KEYS_PREVIOUS from every server and restart them.`);
  } catch (err) {
    if (err instanceof ReencryptionError) throw new CommandFailed(`${err.message}\nWhat was re-encrypted before this stays re-encrypted; running the command again continues from there.`);
    throw err;
  } finally {
    await database.close();
  }
}

async function reencrypt(pass: FieldReencryption, cmd: FieldKeyCommand, config: Config, print: Print): Promise<void> {
  print(config.dbFieldEncryption
    ? 'DB_FIELD_ENCRYPTION=1: values of personal data and session keys still in clear are encrypted too.'
    : 'DB_FIELD_ENCRYPTION=0: values in clear stay in clear; encrypted ones move to the current key.');
  print(`Re-encrypting in batches of ${plural(cmd.batchSize, 'row')}, each committed on its own:`);
  const reports: TableReport[] = await pass.run({
    batchSize: cmd.batchSize,
    onBatch: (p) => print(`  ${p.table}: batch ${p.batch}, ${p.tableRows} of ${p.tablePending} rows`),
    onTable: (r) => print(r.rows === 0 && r.skipped === 0
      ? `  ${r.table}: nothing to do`
      : `  ${r.table}: done, ${plural(r.rows, 'row')} re-encrypted in ${plural(r.batches, 'batch', 'batches')}${describeValues(r.values)}${r.skipped > 0 ? `; ${r.skipped} changed by a server meanwhile, left as written` : ''}`),
  });
  const rows = reports.reduce((n, r) => n + r.rows, 0);
  const batches = reports.reduce((n, r) => n + r.batches, 0);
  print(`Re-encrypted ${plural(rows, 'row')} in ${plural(batches, 'batch', 'batches')} over ${reports.length} tables.`);
}
