/**
 * The unit a client is counted by in rate limits and in-flight bounds (issue 9, section 3): an
 * IPv4 address, or the /64 an IPv6 address belongs to. One subscriber, one host even, is given
 * a whole /64 (RFC 6177, and SLAAC privacy addresses change within it), so counting IPv6 by
 * address would give an attacker 2^64 fresh buckets. Access policy and the audit trail keep the
 * full address; only counting is by network.
 */
import { isIPv6 } from 'node:net';

/** IPv4-mapped IPv6 (`::ffff:192.0.2.1`) is its IPv4 address. */
const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The first four 16-bit groups of an IPv6 address, in canonical hex. */
function prefix64(ip: string): string {
  const [head = '', tail] = ip.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  // A dotted IPv4 tail (::1.2.3.4 forms) is two groups; it lies past the /64 in every valid form
  // except when fewer than four groups precede the "::", where the fill below is zeros anyway.
  const rightGroups = right.flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const fill = tail === undefined ? [] : Array<string>(Math.max(0, 8 - left.length - rightGroups.length)).fill('0');
  const groups = [...left, ...fill, ...rightGroups];
  return groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':');
}

export function clientNetwork(ip: string): string {
  const mapped = MAPPED_V4.exec(ip);
  if (mapped) return mapped[1] ?? ip;
  if (!isIPv6(ip)) return ip;
  return `${prefix64(ip.split('%')[0] ?? ip)}::/64`;
}

/**
 * A coarser unit, for what one party must not be able to multiply (an anonymous FAQ vote): an
 * IPv4 address, or the /48 of an IPv6 address, the most a single site is usually given
 * (RFC 6177), so that a /48 holder does not get 65,536 votes.
 */
export function clientSite(ip: string): string {
  const net = clientNetwork(ip);
  if (!net.endsWith('::/64')) return net;
  return `${net.slice(0, -'::/64'.length).split(':').slice(0, 3).join(':')}::/48`;
}
