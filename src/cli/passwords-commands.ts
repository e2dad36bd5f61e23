/**
 * What `strongroom passwords ...` does. These commands work on files only: no database, no
 * server configuration besides BREACHED_PASSWORDS_FILTER (the default filter path), so the
 * import can run on any machine with the memory for the filter, and be copied to the nodes.
 */
import path from 'node:path';
import { BreachedFilterError, describeFilter, loadFilterFile } from '../credentials/breached/corpus.js';
import { sha1Of } from '../credentials/breached/filter.js';
import { importBreached, ImportFailed, type ImportProgress } from '../credentials/breached/import.js';
import { PwnedFormatError } from '../credentials/breached/pwned-file.js';
import { BREACHED_SETTING } from '../platform/config-breached.js';
import { promptHidden } from './password.js';
import type { PasswordsCommand } from './passwords-args.js';
import { CommandFailed, EXIT, UsageError, type Print } from './usage.js';

const fmt = (n: number): string => n.toLocaleString('en-US');

export function humanBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${n.toFixed(1)} ${units[i]}`;
}

/** Progress on stderr: rewritten in place on a terminal, a line every 10% otherwise (a log). */
function progressReporter(out: NodeJS.WriteStream): { report: (p: ImportProgress) => void; done: () => void } {
  let last = '';
  let lastAt = 0;
  const line = (p: ImportProgress): string => {
    const pct = p.total === 0 ? 100 : Math.floor((100 * p.read) / p.total);
    return `pass ${p.pass} of 2 (${p.pass === 1 ? 'checking and counting' : 'adding to the filter'}): ${pct}% of ${humanBytes(p.total)}, ${fmt(p.entries)} entries`;
  };
  return {
    report(p) {
      if (out.isTTY) {
        const now = Date.now();
        if (now - lastAt < 250 && p.read < p.total) return;
        lastAt = now;
        out.write(`\r${line(p)}\x1b[K`);
        last = 'tty';
        return;
      }
      const step = `${p.pass}:${p.total === 0 ? 10 : Math.floor((10 * p.read) / p.total)}`;
      if (step === last) return;
      last = step;
      out.write(`${line(p)}\n`);
    },
    done() {
      if (last === 'tty') out.write('\n');
    },
  };
}

/** Why an input file cannot be opened, as a refusal (exit 1), not a configuration error. */
function unreadable(err: unknown, file: string): never {
  const code = (err as NodeJS.ErrnoException).code;
  throw new CommandFailed(`cannot read ${file}: ${code === 'ENOENT' ? 'it does not exist' : code === 'EISDIR' ? 'it is a directory' : code ?? String(err)}.`);
}

async function importCommand(cmd: Extract<PasswordsCommand, { name: 'passwords import-breached' }>, setting: string | undefined, print: Print): Promise<number> {
  if (cmd.output === null && setting === undefined) throw new UsageError(`--output is required when ${BREACHED_SETTING} is unset: where to write the filter.`, 'passwords');
  const output = path.resolve(cmd.output ?? setting!);
  const file = path.resolve(cmd.file);
  if (file === output) throw new UsageError('--file and --output name the same file: the filter is written beside the download, not over it.', 'passwords');
  const progress = progressReporter(process.stderr);
  let s;
  try {
    s = await importBreached({ file, output, minCount: cmd.minCount, falsePositiveRate: cmd.falsePositiveRate, onProgress: progress.report });
  } catch (err) {
    progress.done();
    if (err instanceof PwnedFormatError) throw new CommandFailed(`${file}: ${err.message}. Nothing was written (${output} is unchanged).`);
    if (err instanceof ImportFailed) throw new CommandFailed(`${err.message}. Nothing was written (${output} is unchanged).`);
    if ((err as NodeJS.ErrnoException).path === file) unreadable(err, file);
    throw err;
  }
  progress.done();
  print(`Imported ${fmt(s.entries)} entries from ${file} into ${output}.`);
  print(`  lines read:         ${fmt(s.lines)}${s.skipped > 0 ? ` (${fmt(s.skipped)} seen fewer than --min-count ${cmd.minCount} times, left out)` : ''}`);
  print(`  filter size:        ${humanBytes(s.fileBytes)} (${s.entries === 0 ? '-' : s.bitsPerEntry.toFixed(2)} bits per entry; a node holds it in memory)`);
  print(`  false positives:    ${s.falsePositiveRate === 0 ? 'none (empty)' : `1 in ${fmt(Math.round(1 / s.falsePositiveRate))} (${(100 * s.falsePositiveRate).toFixed(3)}%)`}: how often a password not in the corpus is refused all the same`);
  print(`  probes:             ${s.probes} per password, in one 64-byte block`);
  if (s.entries === 0) print(`Note: no entry was seen --min-count ${cmd.minCount} times or more: the filter refuses no password.`);
  print(`Copy it to every node and move it over the file ${BREACHED_SETTING} names there: each node reloads it within 5 seconds.`);
  return EXIT.OK;
}

/** The password to check: read whole from a pipe (one trailing newline removed), or typed at a hidden prompt. */
async function passwordFromStdin(): Promise<string> {
  let password: string;
  if (process.stdin.isTTY) password = await promptHidden('Password to check (not shown): ');
  else {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  if (password === '') throw new UsageError('Standard input held no password: pipe one in (printf \'%s\\n\' "$PW" | strongroom passwords check-breached) or type it at the prompt.', 'passwords');
  return password;
}

async function checkCommand(cmd: Extract<PasswordsCommand, { name: 'passwords check-breached' }>, setting: string | undefined, print: Print): Promise<number> {
  if (cmd.filter === null && setting === undefined) throw new UsageError(`--filter is required when ${BREACHED_SETTING} is unset: the filter to check against.`, 'passwords');
  const file = path.resolve(cmd.filter ?? setting!);
  let loaded;
  try {
    loaded = await loadFilterFile(file);
  } catch (err) {
    if (err instanceof BreachedFilterError) throw new CommandFailed(`${file} ${err.reason}.`);
    throw err;
  }
  const password = await passwordFromStdin();
  const found = loaded.filter.has(sha1Of(password));
  print(found
    ? 'Found in the breach corpus: the password rules refuse this password (rule "breached").'
    : 'Not in the breach corpus.');
  print(`Filter: ${file}, ${describeFilter(loaded.header)}.`);
  return found ? EXIT.FAILURE : EXIT.OK;
}

/** Runs a `passwords` command; its exit code (check-breached: 1 when the password is in the corpus). */
export async function runPasswords(cmd: PasswordsCommand, filterSetting: string | undefined, print: Print): Promise<number> {
  if (cmd.name === 'passwords import-breached') return importCommand(cmd, filterSetting, print);
  return checkCommand(cmd, filterSetting, print);
}
