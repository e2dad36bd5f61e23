/**
 * The breach corpus (src/credentials/breached): BREACHED_PASSWORDS_FILTER names the filter file
 * that `strongroom passwords import-breached` wrote from a Pwned Passwords download. Unset, new
 * passwords are not checked against a breach corpus (start-up says so, once). Set, the file's
 * header is checked here (it exists, it is a filter in a format version this release reads,
 * its size is what the header announces) so that a wrong path or a wrong file stops start-up
 * naming the setting, with every other problem of the configuration. The checksum of its bits
 * is checked when it is loaded, before the first request. Read by config.ts, the only module
 * that reads the environment.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { decodeHeader, FilterFormatError, HEADER_BYTES } from '../credentials/breached/format.js';

export const BREACHED_SETTING = 'BREACHED_PASSWORDS_FILTER';

export interface BreachedConfig {
  /** Absolute path of the filter file; undefined: the check is off. */
  filter: string | undefined;
}

/** The file's first 128 bytes and its size (errors as thrown by node:fs). */
export function readFilterHead(file: string): { head: Buffer; size: number } {
  const fd = openSync(file, 'r');
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
    const head = Buffer.alloc(Math.min(HEADER_BYTES, stat.size));
    readSync(fd, head, 0, head.length, 0);
    return { head, size: stat.size };
  } finally {
    closeSync(fd);
  }
}

const WHY: Record<string, string> = {
  ENOENT: 'does not exist', EACCES: 'cannot be read by this process (permissions)', EPERM: 'cannot be read by this process (permissions)', EISDIR: 'is a directory, not a file',
};

export function readBreachedEnv(opt: (name: string) => string | undefined, problems: string[], readHead: (file: string) => { head: Buffer; size: number } = readFilterHead): BreachedConfig {
  const raw = opt(BREACHED_SETTING);
  if (raw === undefined) return { filter: undefined };
  const file = path.resolve(raw);
  try {
    const { head, size } = readHead(file);
    decodeHeader(head, size);
  } catch (err) {
    // A wrong file says what to do about it; a wrong path needs the pointer to the command.
    const why = err instanceof FilterFormatError ? err.reason
      : `${WHY[(err as NodeJS.ErrnoException).code ?? ''] ?? `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`}: point it at the filter \`strongroom passwords import-breached\` wrote`;
    problems.push(`${BREACHED_SETTING}: ${file} ${why}; or unset it to turn the check off`);
  }
  return Object.freeze({ filter: file });
}
