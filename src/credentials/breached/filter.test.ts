import { describe, expect, it } from 'vitest';
import { seededHashes } from '../../../test/harness/pwned.js';
import { BLOCK_BITS, BlockedBloomFilter, falsePositiveRate, sha1Of, sizeFilter } from './filter.js';

const N = 100_000;
const digests = (hex: string[]): Buffer[] => hex.map((h) => Buffer.from(h, 'hex'));

describe('the blocked Bloom filter', () => {
  it('is sized at about 15.6 bits per entry for the default 1 in 1,000, and states its expected rate', () => {
    const s = sizeFilter(1_000_000_000, 0.001);
    expect(s.falsePositiveRate).toBeLessThanOrEqual(0.001);
    expect(s.falsePositiveRate).toBeGreaterThan(0.0009);
    expect(s.bitsPerEntry).toBeGreaterThan(15.4);
    expect(s.bitsPerEntry).toBeLessThan(15.8);
    expect(s.probes).toBe(9);
    // The whole Pwned Passwords set (about a billion entries): under 2 GB.
    expect(s.blocks * 64).toBeLessThan(2_000_000_000);
    // A looser rate is smaller; a stricter one larger.
    expect(sizeFilter(1000, 0.01).bitsPerEntry).toBeLessThan(11);
    expect(sizeFilter(1000, 0.0001).bitsPerEntry).toBeGreaterThan(20);
    expect(() => sizeFilter(10, 0.5)).toThrow(RangeError);
  });

  it('an empty corpus is one empty block that holds nothing', () => {
    const s = sizeFilter(0, 0.001);
    expect(s).toMatchObject({ blocks: 1, falsePositiveRate: 0 });
    expect(BlockedBloomFilter.empty(s).has(sha1Of('password'))).toBe(false);
  });

  it('has no false negatives over 100,000 inserted hashes, and a measured false-positive rate within the stated one', () => {
    const inserted = digests(seededHashes('inserted', N));
    const size = sizeFilter(N, 0.001);
    const filter = BlockedBloomFilter.empty(size);
    for (const d of inserted) filter.add(d);
    expect(inserted.every((d) => filter.has(d))).toBe(true);

    const others = digests(seededHashes('others', N));
    const hits = others.filter((d) => filter.has(d)).length;
    const rate = hits / N;
    // Binomial spread of 100,000 trials: three standard deviations either side of the stated rate.
    const sigma = Math.sqrt(size.falsePositiveRate / N);
    expect(rate).toBeLessThanOrEqual(size.falsePositiveRate + 3 * sigma);
    expect(rate).toBeGreaterThanOrEqual(size.falsePositiveRate - 3 * sigma);
    expect(rate).toBeLessThanOrEqual(0.0013);
  });

  it('finds a password by the SHA-1 of its UTF-8 bytes, as Pwned Passwords lists it', () => {
    const filter = BlockedBloomFilter.empty(sizeFilter(10, 0.001));
    // SHA-1("P@ssw0rd"), as in the Pwned Passwords range answer for prefix 21BD1.
    filter.add(Buffer.from('21BD12DC183F740EE76F27B78EB39C8AD972A757', 'hex'));
    expect(filter.has(sha1Of('P@ssw0rd'))).toBe(true);
    expect(filter.has(sha1Of('p@ssw0rd'))).toBe(false);
    filter.add(sha1Of('Jürgen#2024'));
    expect(filter.has(Buffer.from(sha1Of('Jürgen#2024')))).toBe(true);
  });

  it('puts all of an entry\'s probes in one 64-byte block chosen by the first 48 bits of the hash', () => {
    const filter = BlockedBloomFilter.empty({ blocks: 1000, probes: 9 });
    const d = sha1Of('one block');
    filter.add(d);
    const set = [...filter.bits.entries()].filter(([, b]) => b !== 0).map(([i]) => Math.floor(i / 64));
    expect(new Set(set).size).toBe(1);
    expect(set[0]).toBe(Number(d.readUIntBE(0, 6) % 1000));
  });

  it('computes the Poisson rate of a blocked filter: above a classic Bloom filter\'s at the same size', () => {
    const bits = 16;
    const classic = Math.pow(1 - Math.exp(-11 / bits), 11);
    const blocked = falsePositiveRate(BLOCK_BITS / bits, 1, 10);
    expect(blocked).toBeGreaterThan(classic);
    expect(blocked).toBeLessThan(2 * classic);
  });
});
