/**
 * Import: a Pwned Passwords file in, a filter file out, in two passes over the input and with
 * memory for the filter alone (about 2 bytes per entry at 1 in 1,000).
 *
 * Pass 1 checks every line and counts the entries at or above `--min-count`: the filter's size
 * depends on that count, and a malformed line stops the import before anything is written.
 * Pass 2 adds each entry. The filter is written beside the output under a temporary name,
 * flushed to disk, then renamed over the output in one step: a node reloading the file (by
 * its changed identity) sees the old filter or the new one, never half of one.
 */
import { constants as bufferConstants } from 'node:buffer';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { BLOCK_BITS, BlockedBloomFilter, sizeFilter, type FilterSize } from './filter.js';
import { encodeHeader, HEADER_BYTES } from './format.js';
import { scanPwnedFile } from './pwned-file.js';

export interface ImportProgress {
  pass: 1 | 2;
  read: number;
  total: number;
  entries: number;
}

export interface ImportOptions {
  file: string;
  output: string;
  minCount: number;
  /** The target rate (default 0.001, 1 in 1,000). */
  falsePositiveRate: number;
  onProgress?: (p: ImportProgress) => void;
  now?: () => number;
}

export interface ImportSummary extends FilterSize {
  output: string;
  entries: number;
  lines: number;
  /** Lines below --min-count. */
  skipped: number;
  /** The filter file's size. */
  fileBytes: number;
  inputBytes: number;
}

/** An import that cannot finish; the message says why and what to do (the output is untouched). */
export class ImportFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportFailed';
  }
}

const WRITE_CHUNK = 64 * 1024 * 1024;

/**
 * The output, opened under a temporary name beside it before the input is read: an output
 * that cannot be written fails at once, not after two passes over tens of gigabytes.
 */
async function openOutput(output: string): Promise<{ commit(header: Buffer, bits: Uint8Array): Promise<void>; abandon(): Promise<void> }> {
  const tmp = path.join(path.dirname(output), `.${path.basename(output)}.${process.pid}.tmp`);
  const handle = await open(tmp, 'w', 0o644).catch((err: NodeJS.ErrnoException) => {
    throw new ImportFailed(`cannot write beside ${output} (${err.code ?? String(err)}): check that its directory exists and this account may write there`);
  });
  return {
    async commit(header, bits) {
      await handle.write(header, 0, header.length, 0);
      for (let at = 0; at < bits.length; at += WRITE_CHUNK) await handle.write(bits, at, Math.min(WRITE_CHUNK, bits.length - at), HEADER_BYTES + at);
      await handle.sync();
      await handle.close();
      await rename(tmp, output);
      // The rename itself reaches the disk with the directory's entry.
      const dir = await open(path.dirname(output), 'r').catch(() => undefined);
      await dir?.sync().catch(() => undefined);
      await dir?.close();
    },
    async abandon() {
      await handle.close().catch(() => undefined);
      await rm(tmp, { force: true });
    },
  };
}

/** CRC-32 of the bits, a chunk at a time (zlib takes at most 4 GiB, and a chunk keeps each call short). */
function checksum(bits: Uint8Array): number {
  let crc = 0;
  for (let at = 0; at < bits.length; at += WRITE_CHUNK) crc = crc32(bits.subarray(at, Math.min(bits.length, at + WRITE_CHUNK)), crc);
  return crc;
}

export async function importBreached(o: ImportOptions): Promise<ImportSummary> {
  const out = await openOutput(o.output);
  try {
    const r = await build(o);
    await out.commit(r.header, r.bits);
    return r.summary;
  } catch (err) {
    await out.abandon();
    throw err;
  }
}

async function build(o: ImportOptions): Promise<{ header: Buffer; bits: Uint8Array; summary: ImportSummary }> {
  const counted = await scanPwnedFile(o.file, { minCount: o.minCount, onProgress: (read, total, entries) => o.onProgress?.({ pass: 1, read, total, entries }) });
  const size = sizeFilter(counted.entries, o.falsePositiveRate);
  const bytes = size.blocks * (BLOCK_BITS / 8);
  if (bytes > bufferConstants.MAX_LENGTH) {
    throw new ImportFailed(`${counted.entries.toLocaleString('en-US')} entries at a false-positive rate of ${o.falsePositiveRate} need ${bytes.toLocaleString('en-US')} bytes, more than one filter can hold here (${bufferConstants.MAX_LENGTH.toLocaleString('en-US')}): raise --min-count or --false-positive-rate`);
  }
  const filter = BlockedBloomFilter.empty(size);
  const added = await scanPwnedFile(o.file, {
    minCount: o.minCount, onEntry: (d) => filter.add(d), onProgress: (read, total, entries) => o.onProgress?.({ pass: 2, read, total, entries }),
  });
  if (added.entries !== counted.entries || added.bytes !== counted.bytes) {
    throw new ImportFailed(`${o.file} changed while it was being read (${counted.entries} entries in the first pass, ${added.entries} in the second): import it again once it is complete`);
  }
  const header = encodeHeader({
    probes: size.probes, entries: counted.entries, blocks: size.blocks, minCount: o.minCount, falsePositiveRate: size.falsePositiveRate,
    bitsPerEntry: size.bitsPerEntry, createdAt: new Date(o.now?.() ?? Date.now()), bodyBytes: bytes, bodyCrc32: checksum(filter.bits),
  });
  const summary = { ...size, output: o.output, entries: counted.entries, lines: counted.lines, skipped: counted.skipped, fileBytes: HEADER_BYTES + bytes, inputBytes: counted.bytes };
  return { header, bits: filter.bits, summary };
}
