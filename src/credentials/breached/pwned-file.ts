/**
 * A Pwned Passwords file, read as a stream: one `SHA1HEX:COUNT` per line (40 hexadecimal
 * characters, a colon, how many times the password was seen), LF or CRLF line ends, as the
 * official `haveibeenpwned-downloader` writes it. The whole set is tens of gigabytes, so it is
 * read in fixed chunks and parsed byte by byte, never as strings or lines in memory.
 *
 * Blank lines are passed over. A malformed line stops the read, naming its number and what is wrong with it. A file that
 * does not parse is most likely the wrong file (the NTLM download, a truncated copy, something
 * else): a filter built from the lines that do parse would hold less than the operator thinks,
 * silently, so nothing is built.
 */
import { open } from 'node:fs/promises';
import { SHA1_BYTES } from './filter.js';

/** A line that is not `SHA1HEX:COUNT`: `line` counts from 1. */
export class PwnedFormatError extends Error {
  constructor(readonly line: number, readonly reason: string) {
    super(`line ${line}: ${reason}`);
    this.name = 'PwnedFormatError';
  }
}

export interface PwnedScan {
  /** Lines read (the last one counts even without a line end). */
  lines: number;
  /** Lines whose count is at least `minCount`: what `onEntry` received. */
  entries: number;
  /** Lines below `minCount`. */
  skipped: number;
  /** The file's size. */
  bytes: number;
}

export interface ScanOptions {
  /** Lines seen fewer times than this are skipped (1: every real entry; count-0 padding lines never count). */
  minCount: number;
  /** Receives each entry's SHA-1 digest in a buffer reused for the next line: copy it to keep it. */
  onEntry?: (digest: Uint8Array) => void;
  /** After each chunk: bytes read so far, of `total`, and entries so far. */
  onProgress?: (read: number, total: number, entries: number) => void;
  /** Bytes read at a time (tests use small ones to cross lines over chunk edges). */
  chunkBytes?: number;
}

const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[0x30 + i] = i;
for (let i = 0; i < 6; i++) HEX[0x41 + i] = HEX[0x61 + i] = 10 + i;
const COLON = 0x3a;
const CR = 0x0d;
const LF = 0x0a;
/** 40 + 1 + 15 digits + CR: anything longer is not a Pwned line. */
const MAX_LINE = 64;
/** Above 15 digits a count is not exact in a double; no password has been seen 10^15 times. */
const MAX_COUNT_DIGITS = 15;

/** Why `b[start, end)` (without its line end) has no 40-character hash before its colon. */
function hashProblem(b: Uint8Array, start: number, end: number): string {
  let n = 0;
  while (start + n < end && HEX[b[start + n]!]! >= 0) n++;
  const colon = b.subarray(start, end).indexOf(COLON);
  if (colon === -1) return n === end - start && (n === 40 || n === 32) ? 'has a hash and no ":COUNT"' : 'is not SHA1HEX:COUNT (40 hexadecimal characters, a colon, a count)';
  if (n < colon) return `has a character that is not hexadecimal at position ${n + 1}`;
  if (n === 40) return 'has no count after the colon';
  if (n === 32) return 'has a 32-character hash: this is the NTLM file; download the SHA-1 one (haveibeenpwned-downloader without -n)';
  if (n === 35) return 'has a 35-character hash: this looks like range-API answers (hash suffixes); use the downloader\'s single file of whole hashes';
  return `has ${n} hexadecimal characters before the colon, not 40 (a SHA-1 hash)`;
}

/** Parses one line into `digest`; its count, or throws a PwnedFormatError. */
function parseLine(b: Uint8Array, start: number, end: number, line: number, digest: Uint8Array): number {
  if (end > start && b[end - 1] === CR) end--; // CRLF
  if (end - start < 42 || b[start + 40] !== COLON) throw new PwnedFormatError(line, hashProblem(b, start, end));
  for (let i = 0; i < SHA1_BYTES; i++) {
    const hi = HEX[b[start + 2 * i]!]!;
    const lo = HEX[b[start + 2 * i + 1]!]!;
    if ((hi | lo) < 0) throw new PwnedFormatError(line, hashProblem(b, start, end));
    digest[i] = (hi << 4) | lo;
  }
  if (end - start - 41 > MAX_COUNT_DIGITS) throw new PwnedFormatError(line, `has a count of more than ${MAX_COUNT_DIGITS} digits`);
  let count = 0;
  for (let i = start + 41; i < end; i++) {
    const c = b[i]! - 0x30;
    if (c < 0 || c > 9) throw new PwnedFormatError(line, b[i] === CR ? 'has a carriage return inside it' : 'has a count that is not a whole number');
    count = count * 10 + c;
  }
  return count;
}

/** Reads the file once from start to end, parsing every line. */
export async function scanPwnedFile(file: string, o: ScanOptions): Promise<PwnedScan> {
  const handle = await open(file, 'r');
  try {
    const total = (await handle.stat()).size;
    const buf = Buffer.allocUnsafe(Math.max(MAX_LINE * 2, o.chunkBytes ?? 4 * 1024 * 1024));
    const digest = new Uint8Array(SHA1_BYTES);
    const scan: PwnedScan = { lines: 0, entries: 0, skipped: 0, bytes: total };
    const take = (start: number, end: number): void => {
      scan.lines++;
      if (end === start || (end === start + 1 && buf[start] === CR)) return; // a blank line: harmless, nothing in it
      if (end - start > MAX_LINE) throw new PwnedFormatError(scan.lines, `is ${end - start} bytes long: a Pwned Passwords line has at most ${MAX_LINE}`);
      if (parseLine(buf, start, end, scan.lines, digest) >= o.minCount) {
        scan.entries++;
        o.onEntry?.(digest);
      } else scan.skipped++;
    };
    let carry = 0; // bytes of an unfinished line at the start of buf
    let read = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, carry, buf.length - carry, read);
      if (bytesRead === 0) break;
      read += bytesRead;
      const end = carry + bytesRead;
      let start = 0;
      for (let i = buf.indexOf(LF, 0); i !== -1 && i < end; i = buf.indexOf(LF, i + 1)) {
        take(start, i);
        start = i + 1;
      }
      carry = end - start;
      if (carry > MAX_LINE) throw new PwnedFormatError(scan.lines + 1, `is more than ${MAX_LINE} bytes long without a line end: this is not a Pwned Passwords text file`);
      buf.copyWithin(0, start, end);
      o.onProgress?.(read, total, scan.entries);
    }
    if (carry > 0) take(0, carry); // the last line, without a line end
    return scan;
  } finally {
    await handle.close();
  }
}
