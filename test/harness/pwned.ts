/**
 * Pwned Passwords files for tests, in the official downloader's format: `SHA1HEX:COUNT` lines,
 * upper-case hex, CRLF line ends, ordered by hash. The "random" entries are SHA-1 hashes of
 * `<seed>-<i>`: the same seed gives the same file on every run.
 */
import { createHash } from 'node:crypto';

export const sha1Hex = (s: string): string => createHash('sha1').update(s, 'utf8').digest('hex').toUpperCase();

/** `count` distinct SHA-1 hashes (hex) made from `seed`. */
export function seededHashes(seed: string, count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => sha1Hex(`${seed}-${from + i}`));
}

/**
 * The text of a Pwned Passwords file holding `passwords` (each seen `count` times, or the
 * count given) and `random` seeded hashes (seen 1 to 50 times), sorted by hash, CRLF.
 */
export function pwnedFile(passwords: Array<string | [string, number]>, opts: { random?: number; seed?: string; eol?: string } = {}): string {
  const lines = passwords.map((p) => (typeof p === 'string' ? `${sha1Hex(p)}:${1000}` : `${sha1Hex(p[0])}:${p[1]}`));
  seededHashes(opts.seed ?? 'pwned', opts.random ?? 0).forEach((h, i) => lines.push(`${h}:${1 + (i % 50)}`));
  lines.sort();
  const eol = opts.eol ?? '\r\n';
  return lines.map((l) => l + eol).join('');
}
