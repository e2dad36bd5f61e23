/**
 * A small MaxMind DB writer (the MMDB binary format, version 2.0) for tests: networks chosen by
 * the test, records of any shape (a GeoLite2 or DB-IP city, country or ASN record, or the flat
 * `{country_code}` of the bundled development database), a chosen build date, and a chosen
 * record size (24, 28 or 32 bits), so that the service's reader is tested on every layout the
 * format allows without shipping anyone's database.
 *
 * The file is, in order: the search tree (one node per bit of the address, two records a node),
 * 16 zero bytes, the data section (each distinct record once), then the marker
 * "\xab\xcd\xefMaxMind.com" and the metadata map. A record's value below the node count is
 * another node, equal to it means "no data", above it points into the data section.
 */
import { writeFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import path from 'node:path';

/** A value as the data section stores it. Whole numbers are written as unsigned (or signed 32-bit) integers; use `double()` to force a double. */
export type MmdbValue = string | number | boolean | bigint | Double | MmdbValue[] | { [key: string]: MmdbValue };

/** A number written as a double even when it is whole (latitude 36 is still a coordinate). */
export class Double {
  constructor(readonly value: number) {}
}
export const double = (value: number): Double => new Double(value);

export interface MmdbNetwork {
  /** A CIDR: `41.90.0.0/16` or `2001:db8::/32`. IPv4 networks live at `::a.b.c.d/(96+n)` of the IPv6 tree. */
  cidr: string;
  data: MmdbValue;
}

export interface MmdbOptions {
  /** `database_type` of the metadata, e.g. `GeoLite2-City`. */
  databaseType?: string;
  /** When the database was built (the metadata's `build_epoch`); now by default. */
  builtAt?: Date;
  /** 24, 28 or 32; the smallest that fits by default. */
  recordSize?: 24 | 28 | 32;
  /** 6 (the default: an IPv6 tree holding IPv4 too) or 4 (IPv4 networks only). */
  ipVersion?: 4 | 6;
  description?: string;
}

const MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');

// Data section types (the spec's numbers): 1 pointer, 2 string, 3 double, 4 bytes, 5 uint16,
// 6 uint32, 7 map; extended: 8 int32, 9 uint64, 10 uint128, 11 array, 14 boolean, 15 float.
const T = { string: 2, double: 3, uint16: 5, uint32: 6, map: 7, int32: 8, uint64: 9, array: 11, boolean: 14 } as const;

function control(type: number, size: number): Buffer {
  let bits: number;
  let extra: number[];
  if (size < 29) [bits, extra] = [size, []];
  else if (size < 29 + 256) [bits, extra] = [29, [size - 29]];
  else if (size < 285 + 65_536) [bits, extra] = [30, [(size - 285) >> 8, (size - 285) & 0xff]];
  else [bits, extra] = [31, [(size - 65_821) >> 16, ((size - 65_821) >> 8) & 0xff, (size - 65_821) & 0xff]];
  // An extended type's control byte says 0; the next byte is its number less 7; the size bytes follow.
  return Buffer.from(type <= 7 ? [(type << 5) | bits, ...extra] : [bits, type - 7, ...extra]);
}

/** The fewest big-endian bytes that hold `n` (none for zero). */
function unsignedBytes(n: bigint): Buffer {
  const out: number[] = [];
  for (let v = n; v > 0n; v >>= 8n) out.unshift(Number(v & 0xffn));
  return Buffer.from(out);
}

export function encodeValue(v: MmdbValue): Buffer {
  if (typeof v === 'string') {
    const bytes = Buffer.from(v, 'utf8');
    return Buffer.concat([control(T.string, bytes.length), bytes]);
  }
  if (typeof v === 'boolean') return control(T.boolean, v ? 1 : 0);
  if (v instanceof Double || (typeof v === 'number' && !Number.isInteger(v))) {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(v instanceof Double ? v.value : v);
    return Buffer.concat([control(T.double, 8), b]);
  }
  if (typeof v === 'number' && v < 0) {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    return Buffer.concat([control(T.int32, 4), b]);
  }
  if (typeof v === 'number' || typeof v === 'bigint') {
    const n = BigInt(v);
    const bytes = unsignedBytes(n);
    const type = typeof v === 'bigint' || n >= 2n ** 32n ? T.uint64 : T.uint32;
    return Buffer.concat([control(type, bytes.length), bytes]);
  }
  if (Array.isArray(v)) return Buffer.concat([control(T.array, v.length), ...v.map(encodeValue)]);
  const entries = Object.entries(v);
  return Buffer.concat([control(T.map, entries.length), ...entries.flatMap(([k, x]) => [encodeValue(k), encodeValue(x)])]);
}

/** The bits of a network, 128 of them for IPv6 (IPv4 networks under `::/96`) or 32 in an IPv4 tree. */
function networkBits(cidr: string, ipVersion: 4 | 6): number[] {
  const [address = '', prefixText] = cidr.split('/');
  const prefix = Number(prefixText);
  let bytes: number[];
  if (isIPv4(address)) bytes = [...(ipVersion === 6 ? new Array<number>(12).fill(0) : []), ...address.split('.').map(Number)];
  else if (isIPv6(address) && ipVersion === 6) {
    const [head = '', tail] = address.split('::');
    const words = (s: string) => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
    const left = words(head);
    const right = tail === undefined ? [] : words(tail);
    const all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
    bytes = all.flatMap((w) => [w >> 8, w & 0xff]);
  } else throw new Error(`not a network this tree holds: ${cidr}`);
  const length = (isIPv4(address) && ipVersion === 6 ? 96 : 0) + prefix;
  if (!Number.isInteger(prefix) || length > bytes.length * 8) throw new Error(`bad prefix: ${cidr}`);
  return Array.from({ length }, (_, i) => (bytes[i >> 3]! >> (7 - (i & 7))) & 1);
}

interface Node { children: [Child, Child] }
type Child = Node | { data: number } | null;

/** The whole file: tree, separator, data section, marker, metadata. */
export function buildMmdb(networks: readonly MmdbNetwork[], opts: MmdbOptions = {}): Buffer {
  const ipVersion = opts.ipVersion ?? 6;
  // The data section: each distinct record once, networks with the same record share it.
  const chunks: Buffer[] = [];
  const offsets = new Map<string, number>();
  let dataSize = 0;
  const dataOf = (value: MmdbValue): number => {
    const encoded = encodeValue(value);
    const key = encoded.toString('hex');
    let offset = offsets.get(key);
    if (offset === undefined) {
      offset = dataSize;
      offsets.set(key, offset);
      chunks.push(encoded);
      dataSize += encoded.length;
    }
    return offset;
  };

  // The tree: a more specific network inside a broader one splits the broader one's leaf, so
  // the broader networks go in first, whatever order the test lists them in.
  const root: Node = { children: [null, null] };
  const byPrefix = networks.map((n) => ({ bits: networkBits(n.cidr, ipVersion), data: n.data })).sort((a, b) => a.bits.length - b.bits.length);
  for (const { bits, data } of byPrefix) {
    if (bits.length === 0) throw new Error('a /0 network is not supported');
    let node = root;
    for (const [i, bit] of bits.entries()) {
      if (i === bits.length - 1) {
        node.children[bit as 0 | 1] = { data: dataOf(data) };
        break;
      }
      const child = node.children[bit as 0 | 1];
      if (child === null || !('children' in child)) {
        const next: Node = { children: [child, child] };
        node.children[bit as 0 | 1] = next;
        node = next;
      } else node = child;
    }
  }

  // Number the nodes breadth first from the root (node 0).
  const nodes: Node[] = [root];
  for (let i = 0; i < nodes.length; i++) for (const c of nodes[i]!.children) if (c !== null && 'children' in c) nodes.push(c);
  const index = new Map(nodes.map((n, i) => [n, i]));
  const nodeCount = nodes.length;
  const largest = nodeCount + 16 + dataSize;
  const recordSize = opts.recordSize ?? (largest < 2 ** 24 ? 24 : largest < 2 ** 28 ? 28 : 32);
  if (largest >= 2 ** recordSize) throw new Error(`record size ${recordSize} cannot address ${largest}`);
  const value = (c: Child): number => (c === null ? nodeCount : 'children' in c ? index.get(c)! : nodeCount + 16 + c.data);

  const nodeBytes = recordSize / 4;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  for (const [i, n] of nodes.entries()) {
    const at = i * nodeBytes;
    const [left, right] = n.children.map(value) as [number, number];
    if (recordSize === 24) {
      tree.writeUIntBE(left, at, 3);
      tree.writeUIntBE(right, at + 3, 3);
    } else if (recordSize === 28) {
      // Three bytes of the left record, a byte whose high nibble is the left's top 4 bits and
      // whose low nibble is the right's, then three bytes of the right record.
      tree.writeUIntBE(left & 0xffffff, at, 3);
      tree[at + 3] = ((left >>> 24) << 4) | (right >>> 24);
      tree.writeUIntBE(right & 0xffffff, at + 4, 3);
    } else {
      tree.writeUInt32BE(left, at);
      tree.writeUInt32BE(right, at + 4);
    }
  }

  const metadata = encodeValue({
    node_count: nodeCount,
    record_size: recordSize,
    ip_version: ipVersion,
    database_type: opts.databaseType ?? 'Strongroom-Test',
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: BigInt(Math.floor((opts.builtAt ?? new Date()).getTime() / 1000)),
    description: { en: opts.description ?? 'A database written by the tests' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...chunks, MARKER, metadata]);
}

/** A GeoLite2-City-shaped record (the fields the service reads, and a few it does not). */
export function cityRecord(country: string, city: string, latitude: number, longitude: number, accuracyKm = 20): MmdbValue {
  return {
    city: { geoname_id: 1, names: { en: city } },
    continent: { code: 'XX', names: { en: 'Somewhere' } },
    country: { iso_code: country, names: { en: country } },
    location: { accuracy_radius: accuracyKm, latitude: double(latitude), longitude: double(longitude), time_zone: 'UTC' },
  };
}

/** A GeoLite2-ASN-shaped record. */
export function asnRecord(asn: number, organisation: string): MmdbValue {
  return { autonomous_system_number: asn, autonomous_system_organization: organisation };
}

/** A GeoLite2-Country-shaped record. */
export function countryRecord(country: string): MmdbValue {
  return { country: { iso_code: country, names: { en: country } } };
}

/**
 * The city and ASN databases of the risk suites, written into `dir`: 41.90.0.0/16 is Nairobi
 * (Kenya, Safaricom AS33771, 20 km accuracy), 85.138.0.0/16 Lisbon (Portugal, MEO AS3243, 50 km).
 */
export function writeNairobiLisbonDatabases(dir: string): { cityFile: string; asnFile: string } {
  const cityFile = path.join(dir, 'city.mmdb');
  const asnFile = path.join(dir, 'asn.mmdb');
  writeFileSync(cityFile, buildMmdb([
    { cidr: '41.90.0.0/16', data: cityRecord('KE', 'Nairobi', -1.2864, 36.8172, 20) },
    { cidr: '85.138.0.0/16', data: cityRecord('PT', 'Lisbon', 38.7223, -9.1393, 50) },
  ], { databaseType: 'GeoLite2-City' }));
  writeFileSync(asnFile, buildMmdb([
    { cidr: '41.90.0.0/16', data: asnRecord(33771, 'Safaricom Limited') },
    { cidr: '85.138.0.0/16', data: asnRecord(3243, 'MEO') },
  ], { databaseType: 'GeoLite2-ASN' }));
  return { cityFile, asnFile };
}
