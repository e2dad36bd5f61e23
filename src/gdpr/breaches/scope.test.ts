import { describe, expect, it } from 'vitest';
import { canonicalNetwork, normalisedScope, scopeProblems } from './scope.js';

describe('breach scope networks', () => {
  it('accepts addresses and CIDR blocks in canonical form', () => {
    expect(canonicalNetwork('198.51.100.7')).toBe('198.51.100.7/32');
    expect(canonicalNetwork('198.51.100.0/24')).toBe('198.51.100.0/24');
    expect(canonicalNetwork('0.0.0.0/0')).toBe('0.0.0.0/0');
    expect(canonicalNetwork('2001:DB8::/32')).toBe('2001:db8::/32');
    expect(canonicalNetwork('::1')).toBe('::1/128');
    expect(canonicalNetwork('::ffff:198.51.100.0/120')).toBe('::ffff:198.51.100.0/120');
    expect(canonicalNetwork('fe80::1:0:0:0/80')).toBe('fe80::1:0:0:0/80');
  });

  it('refuses what is not an address, a prefix out of range, and host bits below the prefix', () => {
    for (const bad of ['', 'localhost', '198.51.100', '198.51.100.256', '198.51.100.0/33', '198.51.100.1/24', '2001:db8::1/32', '2001:db8::/129', '1.2.3.4/024', '1.2.3.4/ 8', "1.2.3.4'; DROP TABLE users; --", '::ffff:198.51.100.1/120', '1:2:3:4:5:6:7:8:9']) {
      expect(canonicalNetwork(bad), bad).toBeNull();
    }
  });

  it('names each bad network by its index, and stores a sorted, de-duplicated scope', () => {
    expect(scopeProblems({ client_networks: ['10.0.0.0/8', 'nope', '10.0.0.1/8'] }).map((p) => p.field)).toEqual(['scope.client_networks.1', 'scope.client_networks.2']);
    expect(normalisedScope({ channels: ['web', 'mobile', 'web'], event_types: [], client_networks: ['10.0.0.0/8', '10.0.0.0/8', '192.0.2.1'] }))
      .toEqual({ channels: ['mobile', 'web'], client_networks: ['10.0.0.0/8', '192.0.2.1/32'] });
  });
});
