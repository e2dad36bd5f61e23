import { describe, expect, it } from 'vitest';
import { SAML_GROUP_KEYS } from '../saml/provision.js';
import { mapRoles } from '../users/provisioned.js';
import { groupRoleProblems, ldapGroupKeys } from './groups.js';

const BASE = 'ou=groups,dc=bank,dc=example';
const MAP = { 'cn=tellers,ou=groups,dc=bank,dc=example': ['staff'], auditors: ['operator'], admins: ['admin'] };
const roles = (groups: string[], base: string | undefined = BASE) => mapRoles(groups, MAP, ldapGroupKeys(base)).mapped;

describe('roles from directory groups', () => {
  it('a full DN key matches that group in any spelling, wherever the groups base is', () => {
    expect(roles(['CN=Tellers, OU=Groups, DC=Bank, DC=Example'])).toEqual(['staff']);
    expect(roles(['cn=tellers,ou=groups,dc=bank,dc=example'], undefined)).toEqual(['staff']);
    expect(roles(['cn=tellers,ou=managed,dc=bank,dc=example'])).toEqual([]);
  });

  it('threat: a short name matches only a group under the groups base; "cn=admins" made in an OU someone manages grants nothing', () => {
    expect(roles(['cn=auditors,ou=groups,dc=bank,dc=example'])).toEqual(['operator']);
    expect(roles(['cn=Admins,ou=branch-7,ou=groups,dc=bank,dc=example'])).toEqual(['admin']); // deeper under the base: still the bank's
    expect(roles(['cn=admins,ou=branch-managers,dc=bank,dc=example'])).toEqual([]);
    expect(roles(['cn=admins,ou=groups,dc=bank,dc=evil'])).toEqual([]);
    expect(roles(['cn=admins\\,ou=groups,dc=bank,dc=example'])).toEqual([]); // one RDN whose value holds a comma
    expect(roles(['cn=admins+ou=x,ou=groups,dc=bank,dc=example'])).toEqual([]); // a multi-valued first RDN has no short name
  });

  it('threat: a group under the base whose first RDN value is itself a DN does not answer to that DN\'s full-DN key', () => {
    const map = { 'cn=domain admins,ou=it,dc=bank,dc=example': ['admin'] };
    const forged = 'cn=cn\\=domain admins\\,ou\\=it\\,dc\\=bank\\,dc\\=example,ou=branch-7,ou=groups,dc=bank,dc=example';
    expect(mapRoles([forged], map, ldapGroupKeys(BASE)).mapped).toEqual([]);
    expect(mapRoles(['cn=Domain Admins,ou=IT,dc=bank,dc=example'], map, ldapGroupKeys(BASE)).mapped).toEqual(['admin']);
  });

  it('without a groups base a short name matches nothing, and roles it names are still the map\'s to remove', () => {
    const r = mapRoles(['cn=auditors,ou=groups,dc=bank,dc=example'], MAP, ldapGroupKeys(undefined));
    expect(r.mapped).toEqual([]);
    expect(r.managed).toEqual(['admin', 'operator', 'staff']);
  });

  it('a memberOf value that is not a DN names no group', () => {
    expect(roles(['auditors', 'cn=auditors,ou=groups,', ''])).toEqual([]);
  });

  it('problems: short names without a base, a base or a DN key that does not parse', () => {
    expect(groupRoleProblems(MAP, BASE)).toEqual([]);
    expect(groupRoleProblems({ 'cn=x,dc=y': ['staff'] }, undefined)).toEqual([]);
    expect(groupRoleProblems(MAP, undefined)).toEqual([{ field: 'group_roles', message: expect.stringContaining('"auditors", "admins" map roles only under groups_base_dn') }]);
    expect(groupRoleProblems(MAP, 'groups').map((p) => p.field)).toEqual(['groups_base_dn']);
    expect(groupRoleProblems({ 'cn=x,': ['staff'] }, BASE)).toEqual([{ field: 'group_roles', message: '"cn=x," is not a distinguished name' }]);
  });
});

describe('roles from SAML group values', () => {
  it('match the map\'s names without regard to case, a DN in any spelling, never by its first RDN alone', () => {
    const map = { tellers: ['staff'], 'cn=auditors,ou=groups,dc=bank': ['operator'] };
    expect(mapRoles(['Tellers', 'CN=Auditors, OU=Groups, DC=Bank'], map, SAML_GROUP_KEYS).mapped).toEqual(['operator', 'staff']);
    expect(mapRoles(['cn=tellers,ou=anywhere,dc=bank'], map, SAML_GROUP_KEYS).mapped).toEqual([]);
  });
});
