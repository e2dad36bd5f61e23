import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pwnedFile } from '../../../test/harness/pwned.js';
import { BreachedFilterError, loadFilterFile } from './corpus.js';
import { decodeHeader, encodeHeader, FILTER_MAGIC, HEADER_BYTES, type FilterHeader } from './format.js';
import { importBreached } from './import.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'strongroom-filter-format-'));
let good: string;
let bytes: Buffer;
beforeAll(async () => {
  writeFileSync(path.join(dir, 'pwned.txt'), pwnedFile(['Summer2024!', 'P@ssw0rd'], { random: 500 }));
  good = path.join(dir, 'good.filter');
  await importBreached({ file: path.join(dir, 'pwned.txt'), output: good, minCount: 1, falsePositiveRate: 0.001, now: () => Date.UTC(2026, 11, 6) });
  bytes = readFileSync(good);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER: FilterHeader = {
  probes: 9, entries: 1_000_000, blocks: 30_274, minCount: 2, falsePositiveRate: 0.000995, bitsPerEntry: 15.5, createdAt: new Date(Date.UTC(2026, 11, 6)), bodyBytes: 30_274 * 64, bodyCrc32: 0xdeadbeef,
};

/** A copy of the good filter changed by `edit`, written to its own file. */
function variant(name: string, edit: (b: Buffer) => Buffer): string {
  const f = path.join(dir, name);
  writeFileSync(f, edit(Buffer.from(bytes)));
  return f;
}

async function refusal(file: string): Promise<string> {
  const err = await loadFilterFile(file).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BreachedFilterError);
  expect((err as Error).message.startsWith(`BREACHED_PASSWORDS_FILTER: ${file} `)).toBe(true);
  return (err as BreachedFilterError).reason;
}

describe('the filter file format, version 1', () => {
  it('round-trips its header: magic, version, parameters, checksums', () => {
    const b = encodeHeader(HEADER);
    expect(b.length).toBe(HEADER_BYTES);
    expect(b.toString('latin1', 0, 8)).toBe(FILTER_MAGIC);
    expect(b.readUInt16LE(8)).toBe(1);
    expect(b.readUInt32LE(124)).toBe(crc32(b.subarray(0, 124)));
    expect(decodeHeader(b, HEADER_BYTES + HEADER.bodyBytes)).toEqual(HEADER);
  });

  it('an imported file loads: its header states entries, size and rate, and its bits match their checksum', async () => {
    const loaded = await loadFilterFile(good);
    expect(loaded.header).toMatchObject({ entries: 502, minCount: 1, createdAt: new Date(Date.UTC(2026, 11, 6)) });
    expect(loaded.header.falsePositiveRate).toBeLessThanOrEqual(0.001);
    expect(bytes.length).toBe(HEADER_BYTES + loaded.header.bodyBytes);
    expect(loaded.header.bodyCrc32).toBe(crc32(bytes.subarray(HEADER_BYTES)));
  });

  it('refuses a truncated file, one with bytes added, and one whose header is cut short', async () => {
    const short = variant('short.filter', (b) => b.subarray(0, b.length - 1));
    expect(await refusal(short)).toBe(`is truncated (${bytes.length - 1} bytes of ${bytes.length}): copy it again, or import the Pwned Passwords file again with \`strongroom passwords import-breached\``);
    const long = variant('long.filter', (b) => Buffer.concat([b, Buffer.from([0])]));
    expect(await refusal(long)).toMatch(/^has 1 bytes more than its header announces/);
    const cut = variant('cut.filter', (b) => b);
    truncateSync(cut, 100);
    expect(await refusal(cut)).toMatch(/^is truncated \(100 bytes, less than its 128-byte header\)/);
  });

  it('refuses damaged bits (the checksum) and a damaged header (its own checksum)', async () => {
    const body = variant('body.filter', (b) => {
      b[HEADER_BYTES + 10]! ^= 0x01;
      return b;
    });
    expect(await refusal(body)).toMatch(/^is damaged \(the checksum of its bits does not match its header\)/);
    const header = variant('header.filter', (b) => {
      b[20]! ^= 0x01; // the entry count
      return b;
    });
    expect(await refusal(header)).toMatch(/^has a damaged header \(its checksum does not match\)/);
  });

  it('refuses another format version, saying which it reads', async () => {
    const v2 = variant('v2.filter', (b) => {
      b.writeUInt16LE(2, 8);
      b.writeUInt32LE(crc32(b.subarray(0, 124)), 124);
      return b;
    });
    expect(await refusal(v2)).toMatch(/^is filter format version 2; this Strongroom reads version 1: import the Pwned Passwords file again/);
  });

  it('refuses the Pwned Passwords text itself, another file, a directory and a missing file, each saying so', async () => {
    expect(await refusal(path.join(dir, 'pwned.txt'))).toMatch(/^is a Pwned Passwords text file, not a filter: import the Pwned Passwords file again with `strongroom passwords import-breached` --file <it>/);
    const other = variant('other.bin', () => Buffer.from('%PDF-1.7 not a filter at all'));
    expect(await refusal(other)).toMatch(/^is not a breached-password filter \(it does not start with SRBREACH\)/);
    expect(await refusal(dir)).toBe('is a directory, not a file');
    expect(await refusal(path.join(dir, 'nowhere.filter'))).toBe('does not exist');
  });
});
