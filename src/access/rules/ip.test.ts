import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { InvalidRuleError } from './errors.js';
import { compileCidrs, ipAllowed } from './ip.js';

function invalid(list: string[], field = 'ip.allow'): InvalidRuleError {
  try {
    compileCidrs(list, field);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRuleError);
    return err as InvalidRuleError;
  }
  throw new Error(`compiled: ${JSON.stringify(list)}`);
}

describe('compileCidrs', () => {
  it('normalises blocks: host bits cleared, single addresses as /32 and /128, RFC 5952 IPv6, duplicates dropped', () => {
    const set = compileCidrs(['10.1.2.3/8', '192.168.1.7', '2001:DB8:0:0:1::/32', '2001:db8::1', '::/0', '0.0.0.0/0', '10.0.0.0/8', '2001:0:0:1:0:0:0:1', 'fe80::/10']);
    expect(set.blocks).toEqual(['10.0.0.0/8', '192.168.1.7/32', '2001:db8::/32', '2001:db8::1/128', '::/0', '0.0.0.0/0', '2001:0:0:1::1/128', 'fe80::/10']);
    expect(set.size).toBe(8);
  });

  it('reads IPv4-mapped rules as IPv4 rules', () => {
    expect(compileCidrs(['::ffff:10.0.0.0/104', '::ffff:a01:203', '::FFFF:0:0/96']).blocks).toEqual(['10.0.0.0/8', '10.1.2.3/32', '0.0.0.0/0']);
  });

  it('accepts an empty list as an empty set', () => {
    const set = compileCidrs([]);
    expect(set.size).toBe(0);
    expect(set.has('10.0.0.1')).toBe(false);
  });

  it('refuses prefixes out of range or malformed, with the field and a readable message', () => {
    const err = invalid(['10.0.0.0/8', '::1', '10.0.0.0/33']);
    expect(err.field).toBe('ip.allow[2]');
    expect(err.code).toBe('INVALID_RULE');
    expect(err.message).toMatch(/^ip\.allow\[2\]: "10\.0\.0\.0\/33" is not a CIDR block \(an IPv4 prefix length is 0–32\)$/);
    expect(invalid(['2001:db8::/129']).message).toContain('an IPv6 prefix length is 0–128');
    for (const bad of ['10.0.0.0/', '10.0.0.0/08', '10.0.0.0/-1', '10.0.0.0/+8', '10.0.0.0/8/8', '10.0.0.0/ 8', '10.0.0.0/1000', '::/0x10']) {
      expect(invalid([bad]).field, bad).toBe('ip.allow[0]');
    }
  });

  it('refuses garbage, empty strings, non-strings, zone ids, and mapped blocks shorter than /96', () => {
    for (const bad of ['', ' 10.0.0.0/8', '10.0.0.0/8 ', 'localhost', '10.0.0', '10.0.0.0.0', '010.0.0.1', '256.0.0.0', '1.2.3.-4', '0x0a.0.0.1',
      '2001:db8:::/32', ':::', '1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', 'g::1', '[::1]', '::1/64%eth0', 'fe80::1%eth0', '10.0.0.1:443', '::ffff:10.0.0.0/8']) {
      expect(() => compileCidrs([bad]), bad).toThrow(InvalidRuleError);
    }
    expect(invalid(['']).message).toBe('ip.allow[0]: "" is not a CIDR block (empty)');
    expect(invalid(['fe80::/10%eth0']).message).toContain('zone ids');
    expect(invalid(['::ffff:10.0.0.0/8']).message).toContain('96–128');
    expect(() => compileCidrs([8 as unknown as string])).toThrow(/cidrs\[0\]: 8 is not a CIDR block/);
    expect(() => compileCidrs('10.0.0.0/8' as unknown as string[], 'ip.deny')).toThrow(/^ip\.deny: must be a list/);
  });
});

describe('CidrSet.has', () => {
  it('matches IPv4 blocks up to their first and last address', () => {
    const set = compileCidrs(['10.0.0.0/8', '192.168.1.128/25', '203.0.113.7']);
    for (const ip of ['10.0.0.0', '10.255.255.255', '10.1.2.3', '192.168.1.128', '192.168.1.255', '203.0.113.7']) expect(set.has(ip), ip).toBe(true);
    for (const ip of ['9.255.255.255', '11.0.0.0', '192.168.1.127', '192.168.2.0', '203.0.113.6', '203.0.113.8']) expect(set.has(ip), ip).toBe(false);
  });

  it('matches the high half of the IPv4 space (sign bit) correctly', () => {
    const set = compileCidrs(['128.0.0.0/1', '255.255.255.255/32']);
    expect(set.has('128.0.0.0')).toBe(true);
    expect(set.has('255.255.255.255')).toBe(true);
    expect(set.has('127.255.255.255')).toBe(false);
    expect(compileCidrs(['255.255.255.255']).has('255.255.255.254')).toBe(false);
  });

  it('matches IPv6 blocks up to their first and last address, in every word', () => {
    const set = compileCidrs(['2001:db8::/32', '2001:db8:ffff:ffff:ffff:ffff:ffff:0/112', 'fd00:1:2:3:4:5:6:7/127']);
    expect(set.has('2001:db8::')).toBe(true);
    expect(set.has('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff')).toBe(true);
    expect(set.has('2001:db9::')).toBe(false);
    expect(set.has('2001:db7:ffff:ffff:ffff:ffff:ffff:ffff')).toBe(false);
    expect(set.has('fd00:1:2:3:4:5:6:6')).toBe(true);
    expect(set.has('fd00:1:2:3:4:5:6:7')).toBe(true);
    expect(set.has('fd00:1:2:3:4:5:6:8')).toBe(false);
    expect(set.has('fd00:1:2:3:4:5:7:6')).toBe(false);
  });

  it('handles /0 and /128 (and /32 single IPv4 addresses)', () => {
    const all4 = compileCidrs(['0.0.0.0/0']);
    expect(all4.has('0.0.0.0') && all4.has('255.255.255.255') && all4.has('::ffff:1.2.3.4')).toBe(true);
    expect(all4.has('::1')).toBe(false);
    const all6 = compileCidrs(['::/0']);
    expect(all6.has('::') && all6.has('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff') && all6.has('::1.2.3.4')).toBe(true);
    expect(all6.has('1.2.3.4')).toBe(false);
    expect(all6.has('::ffff:1.2.3.4')).toBe(false); // an IPv4 client: IPv4 rules only
    const one = compileCidrs(['2001:db8::1/128']);
    expect(one.has('2001:DB8:0:0:0:0:0:1')).toBe(true);
    expect(one.has('2001:db8::2')).toBe(false);
    expect(one.has('2001:db8::')).toBe(false);
  });

  it('matches IPv4-mapped client addresses, dotted or hex, against IPv4 rules (and mapped rules against IPv4 clients)', () => {
    const set = compileCidrs(['10.0.0.0/8']);
    expect(set.has('::ffff:10.1.2.3')).toBe(true);
    expect(set.has('::FFFF:10.255.255.255')).toBe(true);
    expect(set.has('::ffff:a01:203')).toBe(true);
    expect(set.has('0:0:0:0:0:ffff:10.1.2.3')).toBe(true);
    expect(set.has('::ffff:11.0.0.0')).toBe(false);
    expect(set.has('::10.1.2.3')).toBe(false); // IPv4-compatible: plain IPv6
    expect(set.has('64:ff9b::10.1.2.3')).toBe(false); // NAT64: plain IPv6
    const mapped = compileCidrs(['::ffff:10.0.0.0/104']);
    expect(mapped.has('10.9.9.9')).toBe(true);
    expect(mapped.has('::ffff:10.9.9.9')).toBe(true);
  });

  it('strips a zone id from client addresses, and refuses empty zones and zones on IPv4', () => {
    const set = compileCidrs(['fe80::/10', '10.0.0.0/8']);
    expect(set.has('fe80::1%eth0')).toBe(true);
    expect(set.has('fe80::1%2')).toBe(true);
    expect(set.has('fe80::1%')).toBe(false);
    expect(set.has('10.0.0.1%eth0')).toBe(false);
    expect(set.has('::ffff:10.0.0.1%eth0')).toBe(true);
  });

  it('matches nothing for invalid client addresses', () => {
    const set = compileCidrs(['0.0.0.0/0', '::/0']);
    for (const ip of ['', ' 10.0.0.1', '10.0.0.1 ', '10.0.0.1/32', '[::1]', '[::1]:443', '10.0.0.1:443', 'localhost', '010.0.0.1', '1.2.3', '::g',
      `${'1:'.repeat(60)}1`, undefined as unknown as string, null as unknown as string, 167772161 as unknown as string]) {
      expect(set.has(ip), String(ip)).toBe(false);
    }
  });

  it('accepts exactly the addresses node:net accepts (zone ids aside)', () => {
    const samples = ['0.0.0.0', '255.255.255.255', '256.1.1.1', '1.1.1.01', '1.1.1', '1.1.1.1.', '.1.1.1.1', '1..1.1', '1.1.1.1a',
      '::', '::1', '1::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '1::2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7',
      ':1::', '1:::', ':::', '1::2::', '::ffff:1.2.3.4', '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4', '::1.2.3.4:5', '::01.2.3.4',
      '::ffff:1.2.3', 'ABCD:ef01::', '00000::', '0000::', 'fe80::1:', ':fe80::1', '1.2.3.4::', '::ffff:1.2.3.256', 'g::', '1:2:3:4:5::1.2.3.4',
      '1:2:3:4:5:6::1.2.3.4', '::1.2.3.4', '1::1.2.3.4'];
    const set = compileCidrs(['0.0.0.0/0', '::/0']);
    for (const ip of samples) expect(set.has(ip), ip).toBe(isIP(ip) !== 0);
  });
});

describe('ipAllowed', () => {
  const allow = compileCidrs(['10.0.0.0/8', '2001:db8::/32'], 'ip.allow');
  const deny = compileCidrs(['10.66.0.0/16', '2001:db8:bad::/48'], 'ip.deny');

  it('lets deny win over allow', () => {
    expect(ipAllowed({ allow, deny }, '10.1.2.3')).toBe(true);
    expect(ipAllowed({ allow, deny }, '10.66.0.1')).toBe(false);
    expect(ipAllowed({ allow, deny }, '::ffff:10.66.0.1')).toBe(false);
    expect(ipAllowed({ allow, deny }, '2001:db8:1::1')).toBe(true);
    expect(ipAllowed({ allow, deny }, '2001:db8:bad::1')).toBe(false);
  });

  it('requires a non-empty allow list to contain the address; absent or empty allow lists do not restrict', () => {
    expect(ipAllowed({ allow }, '192.0.2.1')).toBe(false);
    expect(ipAllowed({ allow }, '::ffff:10.0.0.1')).toBe(true);
    expect(ipAllowed({ deny }, '192.0.2.1')).toBe(true);
    expect(ipAllowed({ allow: compileCidrs([]), deny }, '192.0.2.1')).toBe(true);
    expect(ipAllowed({ allow: compileCidrs([]), deny }, '10.66.1.1')).toBe(false);
    expect(ipAllowed({}, '192.0.2.1')).toBe(true);
  });

  it('fails closed on an invalid client address, with or without rules', () => {
    for (const ip of ['', 'unknown', '10.0.0.256', 'fe80::1%', undefined as unknown as string]) {
      expect(ipAllowed({ allow, deny }, ip), String(ip)).toBe(false);
      expect(ipAllowed({}, ip), String(ip)).toBe(false);
    }
  });

  it('parses once for both lists and still works with a CidrSet implemented elsewhere', () => {
    const foreign = { size: 1, blocks: ['10.66.0.0/16'], has: (ip: string) => ip.startsWith('10.66.') };
    expect(ipAllowed({ allow, deny: foreign }, '10.66.0.1')).toBe(false);
    expect(ipAllowed({ allow, deny: foreign }, '10.67.0.1')).toBe(true);
  });
});
