import { isIPv4 } from 'node:net';
import { describe, expect, it } from 'vitest';
import { classifyAddress, ipv4Number } from './addresses.js';
import { TwoGenerationCache } from './cache.js';

describe('internal addresses: never a country', () => {
  it.each([
    '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.254', '192.168.1.10', // private
    '127.0.0.1', '127.8.9.10', // loopback
    '169.254.10.20', // link-local
    '100.64.0.1', '100.127.255.254', // carrier-grade NAT
    '0.0.0.0', // "this network"
    '::1', '::', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'fc00::1', 'fd12:3456:789a::1', // IPv6 loopback, unspecified, link-local, unique-local
    '::ffff:10.1.2.3', '::ffff:127.0.0.1', '::ffff:192.168.0.1', '::ffff:100.64.0.1', '::ffff:a01:203', // IPv4-mapped forms of internal ones
  ])('%s is internal', (ip) => {
    expect(classifyAddress(ip)?.internal).toBe(true);
  });

  it.each([
    '41.90.64.1', '85.138.0.1', '8.8.8.8', '172.32.0.1', '172.15.255.255', '100.63.255.255', '100.128.0.1', '192.169.0.1', '169.255.0.1', '11.0.0.1',
    '2001:db8::1', '2001:4860:4860::8888', 'fec0::1', 'fbff::1', '::2',
  ])('%s is not', (ip) => {
    expect(classifyAddress(ip)?.internal).toBe(false);
  });

  it('an IPv4-mapped address is looked up as the IPv4 address it carries (dotted or hex); a zone id is dropped', () => {
    expect(classifyAddress('::ffff:41.90.64.1')).toEqual({ internal: false, lookup: '41.90.64.1' });
    expect(classifyAddress('::FFFF:295a:4001')).toEqual({ internal: false, lookup: '41.90.64.1' });
    expect(classifyAddress('2001:db8::1')).toEqual({ internal: false, lookup: '2001:db8::1' });
    expect(classifyAddress('fe80::1%eth0')).toEqual({ internal: true, lookup: 'fe80::1' });
  });

  it('a string that is not an address is null (a forwarded header can hold anything)', () => {
    for (const bad of ['', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.04', '1..2.3', ' 1.2.3.4', '1.2.3.4 ', '::g', '1.2.3.4/24', 'unknown']) {
      expect(classifyAddress(bad), bad).toBeNull();
    }
  });

  it('the one-pass IPv4 parser agrees with node:net on valid and invalid forms', () => {
    for (const s of ['0.0.0.0', '255.255.255.255', '1.2.3.4', '192.168.001.1', '1.2.3.', '.1.2.3', '1.2.3.256', '1.2.3.4.', '12345', '1.2.3.a', '0.0.0.00']) {
      expect(ipv4Number(s) >= 0, s).toBe(isIPv4(s));
    }
    expect(ipv4Number('255.255.255.255')).toBe(0xffffffff);
    expect(ipv4Number('41.90.64.1')).toBe(0x295a4001);
  });
});

describe('the two-generation cache', () => {
  it('keeps what is used: a hit in the old generation survives the next turnover; unused entries go', () => {
    const c = new TwoGenerationCache<string, number>(2);
    c.set('a', 1);
    c.set('b', 2);
    c.set('c', 3); // young {c}, old {a, b}
    expect(c.get('a')).toBe(1); // moved to young {c, a}
    c.set('d', 4); // young full: old {c, a}, young {d}
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe(1);
    c.clear();
    expect(c.get('d')).toBeUndefined();
    const none = new TwoGenerationCache<string, number>(0);
    none.set('a', 1);
    expect(none.get('a')).toBeUndefined();
  });
});
