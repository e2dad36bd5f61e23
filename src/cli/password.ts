/**
 * `--password-stdin`: the password comes from standard input, never from argv. Piped input is
 * read whole with one trailing newline removed (`printf '%s\n' "$PW" | ...`); on a terminal the
 * operator is prompted twice with echo off.
 */
import { UsageError } from './usage.js';

export class CancelledError extends Error {}

export async function readPasswordFromStdin(): Promise<string> {
  const stdin = process.stdin;
  let password: string;
  if (stdin.isTTY) {
    password = await promptHidden('Password for the new administrator: ');
    if ((await promptHidden('Repeat the password: ')) !== password) throw new UsageError('The two passwords differ.', 'create-admin');
  } else {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  if (password === '') throw new UsageError('--password-stdin was given but standard input held no password.', 'create-admin');
  return password;
}

/** Asks for a secret on the terminal with echo off (Ctrl-C cancels). */
export function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (err?: Error): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish(); // Enter or Ctrl-D
        if (ch === '\u0003') return finish(new CancelledError('Cancelled.')); // Ctrl-C (raw mode sends no SIGINT)
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
