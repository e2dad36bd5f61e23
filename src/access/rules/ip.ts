/**
 * IP rules: lists of CIDR blocks, compiled once, matched on every token validation.
 *
 * Syntax: IPv4 is exactly four decimal octets without leading zeros (`010.0.0.1` is refused, as
 * some parsers read it as octal); IPv6 is RFC 4291 text (`::`, hex in either case, an optional
 * trailing dotted quad). A block is `address/prefix` with a decimal prefix of 0–32 (IPv4) or
 * 0–128 (IPv6); an address without a prefix is a single address (/32 or /128). Nothing is
 * trimmed, and brackets, ports and zone ids (`fe80::1%eth0`) are refused in rules.
 * Host bits set (`10.1.2.3/8`) are accepted and cleared (`10.0.0.0/8`); `CidrSet.blocks` shows
 * the normalised blocks (IPv6 in RFC 5952 form), without duplicates. An empty list compiles to
 * an empty set.
 *
 * IPv4-mapped IPv6 (`::ffff:10.1.2.3`, as Node reports IPv4 peers on a dual-stack socket, also
 * `::ffff:a01:203`) is IPv4, in client addresses and in rules: `::ffff:10.0.0.0/104` is the
 * rule `10.0.0.0/8` (a block written mapped needs a prefix of 96–128). The families never mix:
 * an IPv4 client is matched against IPv4 rules only, so `0.0.0.0/0` matches every IPv4 client
 * and no IPv6 one, and `::/0` (or any IPv6 block covering `::ffff:0:0/96`) no IPv4 client.
 * Other embeddings (IPv4-compatible `::10.1.2.3`, NAT64 `64:ff9b::/96`, 6to4) are plain IPv6.
 *
 * Client addresses: a zone id is stripped (`fe80::1%eth0` is `fe80::1`: the zone names our
 * interface, not the peer); an empty zone (`fe80::1%`) or a zone on IPv4 is invalid. An invalid
 * client address matches nothing and `ipAllowed` refuses it (fail closed), rules or not.
 *
 * `ipAllowed`: deny wins; then, when the allow list is present and non-empty, the address must
 * be in it; an absent or empty allow list does not restrict.
 *
 * Speed: a hand-written parser (no regex) writes into module-level scratch variables, so a check
 * allocates nothing (evaluation is synchronous, so the scratch cannot be shared by two calls);
 * blocks sit in flat Int32Arrays as (network, mask) words and are scanned linearly.
 */
import { InvalidRuleError, quoteValue } from './errors.js';

/** A compiled list of CIDR blocks. */
export interface CidrSet {
  /** The number of distinct blocks. */
  readonly size: number;
  /** The blocks, normalised (host bits cleared, IPv4-mapped written as IPv4, IPv6 per RFC 5952). */
  readonly blocks: readonly string[];
  /** Whether the address is in one of the blocks; false for an invalid address. */
  has(ip: string): boolean;
}

/** v4: (network, mask) pairs; v6: (4 network words, 4 mask words) octets. All int32. */
interface Tables {
  readonly v4: Int32Array;
  readonly v6: Int32Array;
}

const TABLES = Symbol('cidr tables');
interface CompiledCidrSet extends CidrSet {
  readonly [TABLES]: Tables;
}

const INVALID = 0;
const V4 = 4;
const V6 = 6;
type Family = typeof INVALID | typeof V4 | typeof V6;

/** Longest client address we look at: a full IPv6 with a dotted quad is 45 characters, plus a zone. */
const MAX_CLIENT_LENGTH = 100;

// Scratch of the last parse. V4 leaves the address in `v4`; V6 leaves it in `groups`/`words`.
const groups = new Uint16Array(8);
const words = new Int32Array(4);
let v4 = 0;

/** Parses s[start, end) as dotted-quad IPv4 into `v4`. */
function parseV4(s: string, start: number, end: number): boolean {
  let value = 0;
  let octets = 0;
  let i = start;
  for (;;) {
    const first = i;
    let n = 0;
    while (i < end) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
      if (++i - first > 3) return false;
    }
    if (i === first || n > 255 || (i - first > 1 && s.charCodeAt(first) === 48)) return false;
    value = value * 256 + n;
    octets++;
    if (i === end) break;
    if (octets === 4 || s.charCodeAt(i) !== 46) return false;
    i++;
  }
  if (octets !== 4) return false;
  v4 = value | 0;
  return true;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** Parses s[start, end) as IPv6 text into `groups` and `words`. */
function parseV6(s: string, start: number, end: number): boolean {
  if (end - start < 2) return false;
  let i = start;
  let n = 0;
  let gap = -1;
  if (s.charCodeAt(i) === 58) {
    if (s.charCodeAt(i + 1) !== 58) return false;
    gap = 0;
    i += 2;
  }
  while (i < end) {
    const first = i;
    let value = 0;
    while (i < end) {
      const h = hexDigit(s.charCodeAt(i));
      if (h < 0) break;
      value = (value << 4) | h;
      if (++i - first > 4) return false;
    }
    if (i < end && s.charCodeAt(i) === 46) {
      if (n > 6 || !parseV4(s, first, end)) return false;
      groups[n++] = v4 >>> 16;
      groups[n++] = v4 & 0xffff;
      break;
    }
    if (i === first || n === 8) return false;
    groups[n++] = value;
    if (i === end) break;
    if (s.charCodeAt(i) !== 58) return false;
    i++;
    if (i === end) return false;
    if (s.charCodeAt(i) === 58) {
      if (gap >= 0) return false;
      gap = n;
      i++;
    }
  }
  if (gap < 0) {
    if (n !== 8) return false;
  } else {
    if (n > 7) return false; // `::` stands for one group at least
    const tail = n - gap;
    for (let k = tail - 1; k >= 0; k--) groups[8 - tail + k] = groups[gap + k]!;
    for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  }
  for (let k = 0; k < 4; k++) words[k] = (groups[2 * k]! << 16) | groups[2 * k + 1]!;
  return true;
}

function isMapped(): boolean {
  return words[0] === 0 && words[1] === 0 && words[2] === 0xffff;
}

/** Whether s[0, end) looks like IPv6 (a ':' or a hex letter before any '.') rather than IPv4. */
function looksV6(s: string, end: number): boolean {
  for (let i = 0; i < end && i < 5; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) return false;
    if (c < 48 || c > 57) return true;
  }
  return false;
}

/** Parses s[0, end) as IPv4 or IPv6 (no zone); an IPv4-mapped address is reported as V4. */
function parseAddress(s: string, end: number): Family {
  if (!looksV6(s, end)) return parseV4(s, 0, end) ? V4 : INVALID;
  if (!parseV6(s, 0, end)) return INVALID;
  if (isMapped()) {
    v4 = words[3]!;
    return V4;
  }
  return V6;
}

/** A client address: IPv4 or IPv6, a zone id on IPv6 ignored. */
function parseClient(ip: unknown): Family {
  if (typeof ip !== 'string' || ip.length > MAX_CLIENT_LENGTH) return INVALID;
  if (!looksV6(ip, ip.length)) return parseV4(ip, 0, ip.length) ? V4 : INVALID;
  const zone = ip.indexOf('%');
  if (zone === ip.length - 1 || !parseV6(ip, 0, zone < 0 ? ip.length : zone)) return INVALID;
  if (isMapped()) {
    v4 = words[3]!;
    return V4;
  }
  return V6;
}

function matchV4(table: Int32Array): boolean {
  for (let i = 0; i < table.length; i += 2) {
    if ((v4 & table[i + 1]!) === table[i]) return true;
  }
  return false;
}

function matchV6(table: Int32Array): boolean {
  const w0 = words[0]!;
  const w1 = words[1]!;
  const w2 = words[2]!;
  const w3 = words[3]!;
  for (let i = 0; i < table.length; i += 8) {
    if (
      (w0 & table[i + 4]!) === table[i] &&
      (w1 & table[i + 5]!) === table[i + 1] &&
      (w2 & table[i + 6]!) === table[i + 2] &&
      (w3 & table[i + 7]!) === table[i + 3]
    ) {
      return true;
    }
  }
  return false;
}

/** The int32 mask of `bits` leading ones (0–32). */
function mask32(bits: number): number {
  return bits <= 0 ? 0 : bits >= 32 ? -1 : -1 << (32 - bits);
}

function formatV4(address: number, prefix: number): string {
  return `${address >>> 24}.${(address >>> 16) & 255}.${(address >>> 8) & 255}.${address & 255}/${prefix}`;
}

/** RFC 5952: lower case, no leading zeros, the first longest run (2 groups or more) of zeros as `::`. */
function formatV6(w: ArrayLike<number>, prefix: number): string {
  const g: number[] = [];
  for (let k = 0; k < 4; k++) g.push(w[k]! >>> 16, w[k]! & 0xffff);
  let bestStart = -1;
  let bestLength = 1;
  for (let k = 0; k < 8; ) {
    if (g[k] !== 0) {
      k++;
      continue;
    }
    const start = k;
    while (k < 8 && g[k] === 0) k++;
    if (k - start > bestLength) {
      bestStart = start;
      bestLength = k - start;
    }
  }
  const hex = (from: number, to: number) => g.slice(from, to).map((x) => x.toString(16)).join(':');
  const text = bestStart < 0 ? hex(0, 8) : `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
  return `${text}/${prefix}`;
}

/** Parses the decimal prefix length s[start, end): no sign, no leading zeros; -1 when malformed or above max. */
function parsePrefix(s: string, start: number, max: number): number {
  const length = s.length - start;
  if (length < 1 || length > 3 || (length > 1 && s.charCodeAt(start) === 48)) return -1;
  let n = 0;
  for (let i = start; i < s.length; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n <= max ? n : -1;
}

/**
 * Compiles a list of CIDR blocks (see the file header for the accepted syntax).
 * @param field the list's path in the rule set, for error messages (`ip.allow`).
 * @throws InvalidRuleError naming the first unusable entry, e.g. `ip.allow[2]: "10.0.0.0/33" is not a CIDR block (...)`.
 */
export function compileCidrs(list: readonly string[], field = 'cidrs'): CidrSet {
  if (!Array.isArray(list)) throw new InvalidRuleError(field, `must be a list of CIDR blocks, not ${quoteValue(list)}`);
  const v4Table: number[] = [];
  const v6Table: number[] = [];
  const blocks: string[] = [];
  const seen = new Set<string>();
  list.forEach((entry: unknown, index) => {
    const at = `${field}[${index}]`;
    const fail = (why: string): never => {
      throw new InvalidRuleError(at, `${quoteValue(entry)} is not a CIDR block (${why})`);
    };
    if (typeof entry !== 'string') return fail('expected a string such as "10.0.0.0/8" or "2001:db8::/32"');
    if (entry.length === 0) return fail('empty');
    if (entry.includes('%')) return fail('zone ids such as %eth0 are not allowed in rules');
    const slash = entry.indexOf('/');
    const end = slash < 0 ? entry.length : slash;
    const family = parseAddress(entry, end);
    if (family === INVALID) return fail('not an IPv4 or IPv6 address');
    const mapped = family === V4 && looksV6(entry, end);
    const max = family === V4 && !mapped ? 32 : 128;
    const prefix = slash < 0 ? max : parsePrefix(entry, slash + 1, max);
    if (prefix < 0) return fail(`an ${max === 32 ? 'IPv4' : 'IPv6'} prefix length is 0–${max}`);
    if (mapped && prefix < 96) return fail('an IPv4-mapped block needs a prefix of 96–128: ::ffff:10.0.0.0/104 is 10.0.0.0/8');
    let block: string;
    let row: number[];
    if (family === V4) {
      const bits = mapped ? prefix - 96 : prefix;
      const mask = mask32(bits);
      row = [v4 & mask, mask];
      block = formatV4(v4 & mask, bits);
    } else {
      const masks = [mask32(prefix), mask32(prefix - 32), mask32(prefix - 64), mask32(prefix - 96)];
      const network = masks.map((m, k) => words[k]! & m);
      row = [...network, ...masks];
      block = formatV6(network, prefix);
    }
    if (seen.has(block)) return;
    seen.add(block);
    blocks.push(block);
    (family === V4 ? v4Table : v6Table).push(...row);
  });
  const tables: Tables = { v4: Int32Array.from(v4Table), v6: Int32Array.from(v6Table) };
  const set: CompiledCidrSet = {
    size: blocks.length,
    blocks: Object.freeze(blocks),
    has(ip: string): boolean {
      const family = parseClient(ip);
      return family === V4 ? matchV4(tables.v4) : family === V6 ? matchV6(tables.v6) : false;
    },
    [TABLES]: tables,
  };
  return Object.freeze(set);
}

/** Matches the address of the last `parseClient` (a set from elsewhere gets the string again). */
function inSet(set: CidrSet, family: Family, ip: string): boolean {
  const tables = (set as Partial<CompiledCidrSet>)[TABLES];
  if (!tables) return set.has(ip);
  return family === V4 ? matchV4(tables.v4) : matchV6(tables.v6);
}

/**
 * Whether a client address passes a channel's IP rules: never when it is in `deny` or is not a
 * valid address; otherwise only when it is in `allow`, if `allow` is given and non-empty.
 * The address is parsed once for both lists.
 */
export function ipAllowed(rules: { allow?: CidrSet; deny?: CidrSet }, ip: string): boolean {
  const family = parseClient(ip);
  if (family === INVALID) return false;
  const { allow, deny } = rules;
  if (deny && deny.size > 0 && inSet(deny, family, ip)) return false;
  if (allow && allow.size > 0) return inSet(allow, family, ip);
  return true;
}
