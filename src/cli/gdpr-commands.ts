/**
 * What `strongroom gdpr ledger export|reapply` does (the rest of the CLI: commands.ts): the
 * erasure ledger written as JSON lines on stdout, and read back onto a database restored from a
 * backup (src/gdpr/erasure/ledger.ts).
 */
import { readFile } from 'node:fs/promises';
import type { Registry } from '../app.js';
import { LedgerLineError, parseLedger, type LedgerEntry } from '../gdpr/erasure/ledger.js';
import type { GdprCommand } from './gdpr-args.js';
import { CommandFailed, type Print } from './usage.js';

async function readInput(file: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new CommandFailed(`cannot read the ledger ${file} (${(err as { code?: string }).code ?? (err as Error).message}).`);
  }
}

/**
 * Reads and checks the whole ledger before the database is even opened, so that a malformed
 * line (named by its number) refuses the run with nothing changed.
 */
export async function readLedger(file: string): Promise<LedgerEntry[]> {
  const name = file === '-' ? 'standard input' : file;
  try {
    return parseLedger(await readInput(file));
  } catch (err) {
    if (err instanceof LedgerLineError) throw new CommandFailed(`the ledger (${name}) is malformed at line ${err.line}: ${err.reason}. Nothing was changed.`);
    throw err;
  }
}

async function exportLedger(s: Registry, since: Date | null, print: Print): Promise<void> {
  for await (const e of s.erasureLedger.entries(since)) print(JSON.stringify(e));
}

async function reapply(s: Registry, file: string, ledger: LedgerEntry[], print: Print, operator: string): Promise<void> {
  const r = await s.erasureLedger.reapply(ledger, operator);
  print(`Re-applied the erasure ledger (${file === '-' ? 'standard input' : file}: ${ledger.length} entries, ${r.accounts} accounts) to ${s.database.location}:`);
  print(`  erased now:      ${r.erased.length}`);
  for (const id of r.erased) print(`    ${id}${r.heldInBackup.includes(id) ? '  (its request was under a legal hold in the restored database, released before the erasure)' : ''}`);
  print(`  already erased:  ${r.alreadyErased}`);
  print(`  unknown uuid:    ${r.unknown.length}${r.unknown.length > 0 ? '  (not in this database: created after the backup was taken, or from another database\'s ledger)' : ''}`);
  for (const id of r.unknown) print(`    ${id}`);
  if (r.accounts > 0 && r.unknown.length === r.accounts) {
    process.stderr.write('Warning: none of the ledger\'s accounts is in this database. Check that DATABASE_URL names the restored database and that the ledger is its own.\n');
  }
}

/** Runs one gdpr command; `ledger` is what `readLedger` read for `reapply`. */
export async function runGdpr(s: Registry, cmd: GdprCommand, print: Print, operator: string, ledger: LedgerEntry[] = []): Promise<void> {
  switch (cmd.name) {
    case 'gdpr ledger export':
      return exportLedger(s, cmd.since, print);
    case 'gdpr ledger reapply':
      return reapply(s, cmd.file, ledger, print, operator);
  }
}
