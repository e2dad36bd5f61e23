/**
 * The breached-password filter: a blocked Bloom filter over the SHA-1 of each password.
 *
 * Why a Bloom filter: it is built in one pass with a fixed amount of memory from a file of any
 * size, in any order, duplicates included, and answers "certainly not in the corpus" or
 * "probably in it" with a false-positive rate chosen at import. A false positive only makes a
 * user choose another password; a false negative never happens.
 *
 * Why blocked: each password's probes all fall in one 64-byte block (one CPU cache line), so a
 * lookup costs one memory access however large the filter is, instead of one per probe. The
 * price is about 8% more bits per entry than a classic Bloom filter for the same rate.
 *
 * No hashing beyond the SHA-1 itself: the corpus is SHA-1 hashes, already uniformly spread, so
 * the probes are slices of the 160-bit digest. Bits 0 to 47 pick the block (modulo the block
 * count); bits 48 onwards give up to 12 probes of 9 bits each, a position in the block's 512.
 */
import { hash } from 'node:crypto';

export const BLOCK_BYTES = 64;
export const BLOCK_BITS = BLOCK_BYTES * 8;
/** 48 + 12 x 9 = 156 of SHA-1's 160 bits. */
export const MAX_PROBES = 12;
export const SHA1_BYTES = 20;

/**
 * The SHA-1 of the password's UTF-8 bytes: what a Pwned Passwords line holds (in hex). The
 * one-shot `crypto.hash` costs half of `createHash` for a short input (docs/benchmarks.md).
 */
export function sha1Of(password: string): Buffer {
  return hash('sha1', password, 'buffer');
}

/**
 * The expected false-positive rate of a blocked Bloom filter holding `entries` in `blocks`
 * blocks with `probes` probes each. A block's load is Poisson-distributed around the mean, and
 * a non-member is a false positive when its block has all its probed bits set:
 * sum over j of P(load = j) * (1 - (1 - 1/512)^(probes * j))^probes.
 */
export function falsePositiveRate(entries: number, blocks: number, probes: number): number {
  if (entries === 0) return 0;
  const mean = entries / blocks;
  const last = Math.ceil(mean + 12 * Math.sqrt(mean) + 50);
  let pj = Math.exp(-mean);
  let sum = 0;
  for (let j = 0; j <= last; j++) {
    if (j > 0) pj *= mean / j;
    sum += pj * Math.pow(1 - Math.pow(1 - 1 / BLOCK_BITS, probes * j), probes);
  }
  return sum;
}

/** The probe count with the lowest false-positive rate for this load. */
function bestProbes(entries: number, blocks: number): { probes: number; rate: number } {
  let best = { probes: 1, rate: falsePositiveRate(entries, blocks, 1) };
  for (let k = 2; k <= MAX_PROBES; k++) {
    const rate = falsePositiveRate(entries, blocks, k);
    if (rate < best.rate) best = { probes: k, rate };
  }
  return best;
}

export interface FilterSize {
  blocks: number;
  probes: number;
  /** The expected rate for these entries in this size (at most the target). */
  falsePositiveRate: number;
  bitsPerEntry: number;
}

/** The lowest accepted target rate: 12 probes need about 24 bits per entry for 1 in 20,000. */
export const MIN_TARGET_RATE = 0.0001;
export const MAX_TARGET_RATE = 0.05;

/** The smallest filter whose expected false-positive rate for `entries` is at most `target`. */
export function sizeFilter(entries: number, target: number): FilterSize {
  if (!(target >= MIN_TARGET_RATE && target <= MAX_TARGET_RATE)) throw new RangeError(`false-positive rate ${target} is outside ${MIN_TARGET_RATE} to ${MAX_TARGET_RATE}`);
  if (entries === 0) return { blocks: 1, probes: bestProbes(1, 1).probes, falsePositiveRate: 0, bitsPerEntry: 0 };
  // Bits per entry, in steps of 1/20 of a bit: the first load that meets the target.
  let bits = 4;
  while (bestProbes(BLOCK_BITS / bits, 1).rate > target) bits += 0.05;
  let blocks = Math.max(1, Math.ceil((entries * bits) / BLOCK_BITS));
  // Rounding to whole blocks can only lower the load, but a tiny filter's Poisson tail may need one more.
  let best = bestProbes(entries, blocks);
  while (best.rate > target) best = bestProbes(entries, ++blocks);
  return { blocks, probes: best.probes, falsePositiveRate: best.rate, bitsPerEntry: (blocks * BLOCK_BITS) / entries };
}

/** A blocked Bloom filter over SHA-1 digests, on a byte array of `blocks` x 64 bytes. */
export class BlockedBloomFilter {
  constructor(
    /** The filter's bits: `blocks` x 64 bytes, bit `p` of a block at byte p >> 3, mask 1 << (p & 7). */
    readonly bits: Uint8Array,
    readonly blocks: number,
    readonly probes: number,
  ) {
    if (bits.length !== blocks * BLOCK_BYTES) throw new RangeError(`a filter of ${blocks} blocks has ${blocks * BLOCK_BYTES} bytes, not ${bits.length}`);
    if (!Number.isInteger(probes) || probes < 1 || probes > MAX_PROBES) throw new RangeError(`probes must be 1 to ${MAX_PROBES}`);
  }

  static empty(size: Pick<FilterSize, 'blocks' | 'probes'>): BlockedBloomFilter {
    return new BlockedBloomFilter(Buffer.alloc(size.blocks * BLOCK_BYTES), size.blocks, size.probes);
  }

  /** Adds the SHA-1 digest at `d[at .. at + 20)`. */
  add(d: Uint8Array, at = 0): void {
    const bits = this.bits;
    const base = this.blockOf(d, at);
    for (let i = 0, off = 48; i < this.probes; i++, off += 9) {
      const p = probe(d, at, off);
      bits[base + (p >>> 3)]! |= 1 << (p & 7);
    }
  }

  /** Whether the digest at `d[at .. at + 20)` may be in the set (false: certainly not). */
  has(d: Uint8Array, at = 0): boolean {
    const bits = this.bits;
    const base = this.blockOf(d, at);
    for (let i = 0, off = 48; i < this.probes; i++, off += 9) {
      const p = probe(d, at, off);
      if ((bits[base + (p >>> 3)]! & (1 << (p & 7))) === 0) return false;
    }
    return true;
  }

  /** The block's first byte: the digest's first 48 bits (exact in a double) modulo the block count. */
  private blockOf(d: Uint8Array, at: number): number {
    const low = ((d[at + 2]! << 24) | (d[at + 3]! << 16) | (d[at + 4]! << 8) | d[at + 5]!) >>> 0;
    return ((d[at]! * 0x10000000000 + d[at + 1]! * 0x100000000 + low) % this.blocks) * BLOCK_BYTES;
  }
}

/** The 9 bits of the digest starting at bit `off` (big-endian), read from the 16 bits around them. */
function probe(d: Uint8Array, at: number, off: number): number {
  const b = at + (off >>> 3);
  return (((d[b]! << 8) | d[b + 1]!) >>> (7 - (off & 7))) & 0x1ff;
}
