import { describe, expect, it } from 'vitest';
import { isUnder, normalizeDn, parseDn } from './dn.js';

describe('distinguished names (RFC 4514)', () => {
  it('two spellings of one DN have one canonical form: case, spaces around separators, escapes, hex pairs, multi-valued RDN order', () => {
    const canonical = 'cn=tellers,ou=groups,dc=bank,dc=example';
    for (const spelling of [
      'cn=tellers,ou=groups,dc=bank,dc=example',
      'CN=Tellers,OU=Groups,DC=Bank,DC=Example',
      'cn = tellers , ou=groups, dc=bank ,dc=example',
      'cn=tellers;ou=groups;dc=bank;dc=example', // RFC 2253's other separator
      'cn=\\74ellers,ou=groups,dc=bank,dc=example', // \74 is "t"
      '  cn=tellers,ou=groups,dc=bank,dc=example',
    ]) expect(normalizeDn(spelling), spelling).toBe(canonical);
    expect(normalizeDn('cn=Ana+uid=a1,dc=x')).toBe(normalizeDn('UID=A1 + CN=ana,DC=X'));
    expect(normalizeDn('cn=Jürgen   Müller,dc=x')).toBe(normalizeDn('cn=J\\C3\\BCrgen M\\C3\\BCller,dc=x'));
  });

  it('escaped separators stay inside their value: "cn=a\\,ou=admins" is one RDN, not two', () => {
    const dn = parseDn('cn=a\\,ou=admins,dc=x');
    expect(dn).toHaveLength(2);
    expect(dn[0]).toEqual([{ type: 'cn', value: 'a,ou=admins', ber: false }]);
    expect(normalizeDn('cn=a\\,ou=admins,dc=x')).not.toBe(normalizeDn('cn=a,ou=admins,dc=x'));
    expect(normalizeDn('cn=\\#1,dc=x')).not.toBe(normalizeDn('cn=#31,dc=x')); // a string "#1" is not the BER value 0x31
  });

  it('threat: characters outside the Basic Multilingual Plane keep DNs apart (read by code point), and match their hex-pair spelling', () => {
    expect(normalizeDn('cn=😀,dc=x')).not.toBe(normalizeDn('cn=🔥,dc=x'));
    expect(normalizeDn('cn=😀,dc=x')).toBe(normalizeDn('cn=\\F0\\9F\\98\\80,dc=x'));
    expect(normalizeDn('cn=\ud83d,dc=x')).toBeNull(); // a lone surrogate
  });

  it('no compatibility folding: full-width letters are not the ASCII ones (stricter than a directory only fails closed)', () => {
    expect(normalizeDn('ou=ｇｒｏｕｐｓ,dc=x')).not.toBe(normalizeDn('ou=groups,dc=x'));
  });

  it('what is not a DN is refused: no type, no =, a bad escape, an empty value, a raw quote, bad UTF-8', () => {
    for (const bad of ['tellers', '=x,dc=x', 'cn', 'cn=a\\z,dc=x', 'cn=,dc=x', 'cn="a",dc=x', 'cn=\\ff\\fe,dc=x', 'cn=a,,dc=x', 'cn=a,dc=x,', 'cn=#zz']) {
      expect(normalizeDn(bad), bad).toBeNull();
    }
  });

  it('under: at any depth below the base, not the base itself, not a sibling that merely ends alike', () => {
    const base = parseDn('ou=groups,dc=bank,dc=example');
    expect(isUnder(parseDn('cn=tellers,ou=groups,dc=bank,dc=example'), base)).toBe(true);
    expect(isUnder(parseDn('cn=x,ou=branch,ou=groups,dc=bank,dc=example'), base)).toBe(true);
    expect(isUnder(parseDn('OU=Groups,DC=bank,DC=example'), base)).toBe(false);
    expect(isUnder(parseDn('cn=tellers,ou=managed,dc=bank,dc=example'), base)).toBe(false);
    expect(isUnder(parseDn('cn=tellers,ou=othergroups,dc=bank,dc=example'), base)).toBe(false);
    expect(isUnder(parseDn('cn=tellers,ou=groups\\,dc=bank,dc=example'), base)).toBe(false);
  });
});
