import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { zip } from './zip.js';

/** Reads the archive back by its central directory, as an unzip tool does. */
function entries(buf: Buffer): Array<{ name: string; data: Buffer; dosDate: number }> {
  const end = buf.length - 22;
  expect(buf.readUInt32LE(end)).toBe(0x06054b50);
  const out = [];
  let p = buf.readUInt32LE(end + 16);
  for (let i = 0; i < buf.readUInt16LE(end + 10); i++) {
    expect(buf.readUInt32LE(p)).toBe(0x02014b50);
    const nameLength = buf.readUInt16LE(p + 28);
    const local = buf.readUInt32LE(p + 42);
    expect(buf.readUInt32LE(local)).toBe(0x04034b50);
    const start = local + 30 + buf.readUInt16LE(local + 26);
    const data = inflateRawSync(buf.subarray(start, start + buf.readUInt32LE(p + 20)));
    expect(data.length).toBe(buf.readUInt32LE(p + 24));
    out.push({ name: buf.subarray(p + 46, p + 46 + nameLength).toString('utf8'), data, dosDate: buf.readUInt16LE(p + 14) });
    p += 46 + nameLength;
  }
  return out;
}

describe('zip', () => {
  it('writes entries an unzip reads back byte for byte, UTF-8 names, dated', () => {
    const big = Buffer.from('x,y\r\n'.repeat(10_000));
    const archive = zip([{ name: 'README.txt', data: Buffer.from('hello') }, { name: 'sessões.csv', data: big }, { name: 'empty.csv', data: Buffer.alloc(0) }], new Date('2026-11-28T04:15:51Z'));
    const read = entries(archive);
    expect(read.map((e) => e.name)).toEqual(['README.txt', 'sessões.csv', 'empty.csv']);
    expect(read[0]!.data.toString()).toBe('hello');
    expect(read[1]!.data.equals(big)).toBe(true);
    expect(read[2]!.data.length).toBe(0);
    expect(read[0]!.dosDate).toBe(((2026 - 1980) << 9) | (11 << 5) | 28);
    expect(archive.length).toBeLessThan(big.length / 10); // deflated
  });
});
