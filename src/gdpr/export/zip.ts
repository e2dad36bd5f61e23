/**
 * A small ZIP writer (PKWARE APPNOTE 6.3: local headers, central directory, end record), each
 * entry deflated with node:zlib: enough for an export of a few CSV files, with no dependency.
 * No ZIP64 (an export stays far below 4 GiB), no encryption (the transport key protects the
 * bytes in flight), names in UTF-8 (general-purpose flag bit 11), times in UTC.
 */
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  data: Buffer;
}

const UTF8_NAMES = 0x0800;
const DEFLATE = 8;
const VERSION = 20;

/** MS-DOS date and time of `at` (UTC; two-second resolution). */
function dosTime(at: Date): { time: number; date: number } {
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
    date: ((Math.max(at.getUTCFullYear(), 1980) - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  };
}

function localHeader(name: Buffer, crc: number, compressed: number, size: number, t: { time: number; date: number }): Buffer {
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(VERSION, 4);
  h.writeUInt16LE(UTF8_NAMES, 6);
  h.writeUInt16LE(DEFLATE, 8);
  h.writeUInt16LE(t.time, 10);
  h.writeUInt16LE(t.date, 12);
  h.writeUInt32LE(crc, 14);
  h.writeUInt32LE(compressed, 18);
  h.writeUInt32LE(size, 22);
  h.writeUInt16LE(name.length, 26);
  h.writeUInt16LE(0, 28);
  return Buffer.concat([h, name]);
}

function centralHeader(name: Buffer, crc: number, compressed: number, size: number, t: { time: number; date: number }, offset: number): Buffer {
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE(VERSION, 4);
  h.writeUInt16LE(VERSION, 6);
  h.writeUInt16LE(UTF8_NAMES, 8);
  h.writeUInt16LE(DEFLATE, 10);
  h.writeUInt16LE(t.time, 12);
  h.writeUInt16LE(t.date, 14);
  h.writeUInt32LE(crc, 16);
  h.writeUInt32LE(compressed, 20);
  h.writeUInt32LE(size, 24);
  h.writeUInt16LE(name.length, 28);
  // extra, comment, disk, internal attributes, external attributes: 0
  h.writeUInt32LE(offset, 42);
  return Buffer.concat([h, name]);
}

/** The ZIP archive of `entries`, in order. */
export function zip(entries: readonly ZipEntry[], at: Date): Buffer {
  const t = dosTime(at);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const body = deflateRawSync(e.data);
    const crc = crc32(e.data) >>> 0;
    const local = Buffer.concat([localHeader(name, crc, body.length, e.data.length, t), body]);
    centrals.push(centralHeader(name, crc, body.length, e.data.length, t, offset));
    locals.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
