import { describe, expect, it } from 'vitest';
import { cidrProblem, cidrValues, parseCidrList } from './cidr-input.js';

describe('a CIDR list as typed in the console', () => {
  it('accepts IPv4 and IPv6 blocks and single addresses, as the server does', () => {
    for (const ok of ['10.0.0.0/8', '10.1.2.3/8', '192.0.2.44', '2001:db8::/32', '2001:DB8:40::7', '::/0', '::ffff:10.0.0.0/104', '0.0.0.0/0']) expect(cidrProblem(ok), ok).toBeNull();
  });

  it('names what is wrong: the address, the prefix, a mapped block\'s prefix, a zone id', () => {
    expect(cidrProblem('10.0.0.256/8')).toBe('address');
    expect(cidrProblem('010.0.0.1')).toBe('address'); // octal-looking octets are refused
    expect(cidrProblem('bank.example')).toBe('address');
    expect(cidrProblem('2001:db8:::1')).toBe('address');
    expect(cidrProblem('10.0.0.0/33')).toBe('prefix');
    expect(cidrProblem('10.0.0.0/')).toBe('prefix');
    expect(cidrProblem('2001:db8::/129')).toBe('prefix');
    expect(cidrProblem('10.0.0.0/08')).toBe('prefix');
    expect(cidrProblem('::ffff:10.0.0.0/8')).toBe('mapped_prefix');
    expect(cidrProblem('fe80::1%eth0')).toBe('zone');
  });

  it('splits lines and commas, skips blanks, marks a repeated block (after normalising) and keeps the good entries as typed', () => {
    const entries = parseCidrList('10.20.0.0/16, 2001:db8:40::/48\n\n10.20.1.0/16\n10.0.0.0/33 ');
    expect(entries).toEqual([
      { text: '10.20.0.0/16', problem: null },
      { text: '2001:db8:40::/48', problem: null },
      { text: '10.20.1.0/16', problem: 'duplicate' },
      { text: '10.0.0.0/33', problem: 'prefix' },
    ]);
    expect(cidrValues(entries)).toEqual(['10.20.0.0/16', '2001:db8:40::/48']);
    expect(parseCidrList('  \n , ')).toEqual([]);
  });
});
