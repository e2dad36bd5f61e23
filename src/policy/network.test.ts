import { describe, expect, it } from 'vitest';
import { clientNetwork, clientSite } from './network.js';

describe('clientNetwork', () => {
  it('counts IPv4 by address, with the IPv4-mapped form alike', () => {
    expect(clientNetwork('192.0.2.7')).toBe('192.0.2.7');
    expect(clientNetwork('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientNetwork('::FFFF:192.0.2.7')).toBe('192.0.2.7');
  });

  it('counts IPv6 by /64 whatever the notation: one attacker cannot rotate through its prefix', () => {
    const one = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:9', '2001:DB8:1:2:a::b', '2001:db8:1:2::1.2.3.4', '2001:db8:1:2::1%eth0'];
    for (const ip of one) expect(clientNetwork(ip), ip).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientNetwork('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64');
    expect(clientNetwork('fe80::1:2:3:4')).toBe('fe80:0:0:0::/64');
    expect(clientNetwork('1:2:3::')).toBe('1:2:3:0::/64');
  });

  it('leaves anything that is not an address as it is (no throw)', () => {
    expect(clientNetwork('')).toBe('');
    expect(clientNetwork('not-an-ip')).toBe('not-an-ip');
  });
});

describe('clientSite', () => {
  it('is the IPv4 address, or the /48 of an IPv6 address (one site: one anonymous voter)', () => {
    expect(clientSite('198.51.100.7')).toBe('198.51.100.7');
    expect(clientSite('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(clientSite('2001:db8:40:1::7')).toBe('2001:db8:40::/48');
    expect(clientSite('2001:db8:40:ffff:1:2:3:4')).toBe(clientSite('2001:db8:40:1::9'));
    expect(clientSite('2001:db8:41::1')).not.toBe(clientSite('2001:db8:40::1'));
  });
});
