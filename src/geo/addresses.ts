/**
 * Client addresses before a database is asked: which are "internal" (the bank's own networks,
 * a load balancer, a test on loopback: never a country, whatever a database might say), and the
 * form an address is looked up in (an IPv4-mapped IPv6 address, as a dual-stack socket reports
 * an IPv4 client, is looked up as the IPv4 address it carries: databases hold IPv4 networks
 * only under their IPv4 form).
 */
import { isIPv6 } from 'node:net';

/** `[first address as a 32-bit number, prefix length]` of each internal IPv4 range. */
const INTERNAL_V4: ReadonlyArray<readonly [number, number]> = [
  [0x00000000, 8], //   0.0.0.0/8      "this network" (RFC 1122): never a real client
  [0x0a000000, 8], //   10.0.0.0/8     private (RFC 1918)
  [0x64400000, 10], //  100.64.0.0/10  carrier-grade NAT (RFC 6598): a carrier's inside, not a place
  [0x7f000000, 8], //   127.0.0.0/8    loopback
  [0xa9fe0000, 16], //  169.254.0.0/16 link-local
  [0xac100000, 12], //  172.16.0.0/12  private
  [0xc0a80000, 16], //  192.168.0.0/16 private
];

/**
 * A dotted-quad IPv4 address as a 32-bit number, or -1 when the string is not one (no leading
 * zeros, as node:net's isIPv4). One pass over the characters: this runs on every lookup, and
 * a regular expression and a split cost most of a microsecond.
 */
export function ipv4Number(s: string): number {
  let n = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1; // a leading zero
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else if (c === 46 && digits > 0 && dots < 3) {
      n = n * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? n * 256 + part : -1;
}

function internalV4(n: number): boolean {
  for (const [net, prefix] of INTERNAL_V4) if ((n ^ net) >>> (32 - prefix) === 0) return true;
  return false;
}

/** The eight 16-bit words of a valid IPv6 address (a trailing dotted IPv4 part counts as two). */
function v6Words(ip: string): number[] {
  let text = ip;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = ipv4Number(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const words = (s: string): number[] => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const left = words(head);
  const right = tail === undefined ? [] : words(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

export interface ClientAddress {
  internal: boolean;
  /** The address to look up: an IPv4-mapped address as its IPv4 form, a zone id dropped. */
  lookup: string;
}

/** What an address is, or null for a string that is not an IP address. */
export function classifyAddress(raw: string): ClientAddress | null {
  const v4 = ipv4Number(raw);
  if (v4 >= 0) return { internal: internalV4(v4), lookup: raw };
  const ip = raw.split('%', 1)[0]!;
  if (!isIPv6(ip)) return null;
  const w = v6Words(ip);
  // ::ffff:a.b.c.d (IPv4-mapped): the IPv4 client behind a dual-stack socket.
  if (w[0] === 0 && w[1] === 0 && w[2] === 0 && w[3] === 0 && w[4] === 0 && w[5] === 0xffff) {
    return { internal: internalV4(w[6]! * 65_536 + w[7]!), lookup: `${w[6]! >> 8}.${w[6]! & 0xff}.${w[7]! >> 8}.${w[7]! & 0xff}` };
  }
  const unspecifiedOrLoopback = w.slice(0, 7).every((x) => x === 0) && (w[7] === 0 || w[7] === 1);
  const uniqueLocal = (w[0]! & 0xfe00) === 0xfc00; // fc00::/7
  const linkLocal = (w[0]! & 0xffc0) === 0xfe80; //   fe80::/10
  return { internal: unspecifiedOrLoopback || uniqueLocal || linkLocal, lookup: ip };
}

/**
 * Channels whose requests all come from the bank's gateway (USSD): the client address is the
 * gateway's, shared by every subscriber, so it says nothing about where a person is.
 */
export const GATEWAY_CHANNELS: ReadonlySet<string> = new Set(['ussd']);
