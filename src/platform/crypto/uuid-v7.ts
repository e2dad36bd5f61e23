/**
 * UUID version 7 (RFC 9562 section 5.7): 48 bits of Unix time in milliseconds, then 74 random
 * bits. Ids made one after another sort by time, so a B-tree index on them grows at its right
 * edge: an insert writes the index's last page instead of a random one among millions, which at
 * scale is a page already in memory and, after a checkpoint, one full-page image in the WAL
 * instead of one per insert (docs/benchmarks.md, "Scale"). For ids that are not secrets (audit
 * entries, token ids inside signed tokens): the time they carry is public anyway.
 */
import { randomFillSync } from 'node:crypto';

export function uuidV7(ms: number = Date.now()): string {
  const b = Buffer.alloc(16);
  randomFillSync(b, 6, 10);
  b.writeUIntBE(Math.max(0, Math.floor(ms)) % 2 ** 48, 0, 6);
  b[6] = 0x70 | (b[6]! & 0x0f); // version 7
  b[8] = 0x80 | (b[8]! & 0x3f); // variant 10
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
