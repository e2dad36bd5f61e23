/**
 * The breached-password filter file (what `strongroom passwords import-breached` writes and
 * BREACHED_PASSWORDS_FILTER names), format version 1: a 128-byte header, then the filter's
 * bits (`blocks` x 64 bytes, src/credentials/breached/filter.ts). Numbers are little-endian.
 *
 *   offset size  field
 *        0    8  magic "SRBREACH"
 *        8    2  format version (1); stays at this offset in every version
 *       10    2  header length (128)
 *       12    1  hash: 1 = SHA-1 of the password's UTF-8 bytes
 *       13    1  log2 of the block size in bytes (6: 64-byte blocks)
 *       14    1  probes per entry (1 to 12)
 *       15    1  reserved (0)
 *       16    8  entries imported
 *       24    8  blocks
 *       32    8  the --min-count the import used
 *       40    8  expected false-positive rate (float64)
 *       48    8  bits per entry (float64)
 *       56    8  created at, milliseconds since 1970 (UTC)
 *       64    8  length of the bits that follow, in bytes
 *       72    4  CRC-32 of those bits
 *       76   48  reserved (0)
 *      124    4  CRC-32 of bytes 0 to 123
 *
 * The checksums catch a truncated or damaged copy (a failed transfer to a node), not tampering:
 * whoever can write the file can write any filter, so it is protected like the binary itself.
 */
import { crc32 } from 'node:zlib';
import { BLOCK_BYTES, MAX_PROBES } from './filter.js';

export const FILTER_MAGIC = 'SRBREACH';
export const FILTER_VERSION = 1;
export const HEADER_BYTES = 128;
const HASH_SHA1 = 1;
const BLOCK_LOG2 = Math.log2(BLOCK_BYTES);

export interface FilterHeader {
  probes: number;
  entries: number;
  blocks: number;
  minCount: number;
  falsePositiveRate: number;
  bitsPerEntry: number;
  createdAt: Date;
  /** `blocks` x 64. */
  bodyBytes: number;
  bodyCrc32: number;
}

/** Why a file is not a usable filter; `reason` completes "<path> ...". */
export class FilterFormatError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'FilterFormatError';
  }
}

export function encodeHeader(h: FilterHeader): Buffer {
  const b = Buffer.alloc(HEADER_BYTES);
  b.write(FILTER_MAGIC, 0, 'latin1');
  b.writeUInt16LE(FILTER_VERSION, 8);
  b.writeUInt16LE(HEADER_BYTES, 10);
  b.writeUInt8(HASH_SHA1, 12);
  b.writeUInt8(BLOCK_LOG2, 13);
  b.writeUInt8(h.probes, 14);
  b.writeBigUInt64LE(BigInt(h.entries), 16);
  b.writeBigUInt64LE(BigInt(h.blocks), 24);
  b.writeBigUInt64LE(BigInt(h.minCount), 32);
  b.writeDoubleLE(h.falsePositiveRate, 40);
  b.writeDoubleLE(h.bitsPerEntry, 48);
  b.writeBigUInt64LE(BigInt(h.createdAt.getTime()), 56);
  b.writeBigUInt64LE(BigInt(h.bodyBytes), 64);
  b.writeUInt32LE(h.bodyCrc32, 72);
  b.writeUInt32LE(crc32(b.subarray(0, 124)), 124);
  return b;
}

const IMPORT_AGAIN = 'import the Pwned Passwords file again with `strongroom passwords import-breached`';

/** The start of a Pwned Passwords text file: someone pointed the setting at the download itself. */
const looksLikePwnedText = (head: Buffer): boolean => /^[0-9A-Fa-f]{32,40}:/.test(head.toString('latin1', 0, Math.min(head.length, 48)));

/**
 * The header of a filter file of `fileSize` bytes whose first bytes are `head` (at least the
 * first 128 when the file has them), checked: the magic, the version, the header's checksum,
 * its parameters, and that the file holds exactly the bits it announces. Throws a
 * FilterFormatError saying what is wrong and what to do.
 */
export function decodeHeader(head: Buffer, fileSize: number): FilterHeader {
  if (head.length < FILTER_MAGIC.length || head.toString('latin1', 0, FILTER_MAGIC.length) !== FILTER_MAGIC) {
    if (looksLikePwnedText(head)) throw new FilterFormatError(`is a Pwned Passwords text file, not a filter: ${IMPORT_AGAIN} --file <it> and point the setting at the filter it writes`);
    throw new FilterFormatError(`is not a breached-password filter (it does not start with ${FILTER_MAGIC}): ${IMPORT_AGAIN}`);
  }
  if (head.length < 10) throw new FilterFormatError(`is truncated (${fileSize} bytes, less than its ${HEADER_BYTES}-byte header): copy it again, or ${IMPORT_AGAIN}`);
  const version = head.readUInt16LE(8);
  if (version !== FILTER_VERSION) {
    throw new FilterFormatError(`is filter format version ${version}; this Strongroom reads version ${FILTER_VERSION}: ${IMPORT_AGAIN} of this release (or run the release that wrote it)`);
  }
  if (head.length < HEADER_BYTES) throw new FilterFormatError(`is truncated (${fileSize} bytes, less than its ${HEADER_BYTES}-byte header): copy it again, or ${IMPORT_AGAIN}`);
  if (crc32(head.subarray(0, 124)) !== head.readUInt32LE(124)) throw new FilterFormatError(`has a damaged header (its checksum does not match): copy it again, or ${IMPORT_AGAIN}`);
  const blocks = Number(head.readBigUInt64LE(24));
  const h: FilterHeader = {
    probes: head.readUInt8(14), entries: Number(head.readBigUInt64LE(16)), blocks, minCount: Number(head.readBigUInt64LE(32)),
    falsePositiveRate: head.readDoubleLE(40), bitsPerEntry: head.readDoubleLE(48), createdAt: new Date(Number(head.readBigUInt64LE(56))),
    bodyBytes: Number(head.readBigUInt64LE(64)), bodyCrc32: head.readUInt32LE(72),
  };
  const sane = head.readUInt16LE(10) === HEADER_BYTES && head.readUInt8(12) === HASH_SHA1 && head.readUInt8(13) === BLOCK_LOG2
    && h.probes >= 1 && h.probes <= MAX_PROBES && blocks >= 1 && Number.isSafeInteger(blocks) && h.bodyBytes === blocks * BLOCK_BYTES;
  if (!sane) throw new FilterFormatError(`has a header this release does not understand (hash, block size, probes or length): ${IMPORT_AGAIN}`);
  const expected = HEADER_BYTES + h.bodyBytes;
  if (fileSize < expected) throw new FilterFormatError(`is truncated (${fileSize} bytes of ${expected}): copy it again, or ${IMPORT_AGAIN}`);
  if (fileSize > expected) throw new FilterFormatError(`has ${fileSize - expected} bytes more than its header announces (${expected}): copy it again, or ${IMPORT_AGAIN}`);
  return h;
}
