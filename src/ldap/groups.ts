/**
 * Roles from directory groups. A key of the group-role map is either a group's full DN, which
 * matches that group only (compared in canonical form, RFC 4514), or a short name such as
 * `tellers`, which matches the first RDN value of a group only when the group lies under the
 * configured groups base (`groups_base_dn`). Matching a short name anywhere in the directory
 * would give the role to whoever can create `cn=tellers` in an OU they manage and join it;
 * without a groups base a short name matches nothing (and start-up warns).
 */
import { DnSyntaxError, formatDn, isUnder, normalizeDn, parseDn, type Dn } from '../users/dn.js';
import { dnKey, nameKey, type GroupKeys } from '../users/provisioned.js';

/** A map key written as a DN (it has an `=`); anything else is a short name. */
const isDnKey = (key: string): boolean => key.includes('=');

/** How directory groups (DNs from `memberOf`) meet the map's keys, given the groups base. */
export function ldapGroupKeys(groupsBaseDn: string | undefined): GroupKeys {
  let base: Dn | null = null;
  if (groupsBaseDn !== undefined) {
    try {
      base = parseDn(groupsBaseDn);
    } catch (err) {
      if (!(err instanceof DnSyntaxError)) throw err;
    }
  }
  return {
    key(k) {
      if (!isDnKey(k)) return nameKey(k);
      const canonical = normalizeDn(k);
      return canonical === null ? null : dnKey(canonical);
    },
    of(group) {
      let dn: Dn;
      try {
        dn = parseDn(group);
      } catch (err) {
        if (err instanceof DnSyntaxError) return []; // a value that is not a DN names no group
        throw err;
      }
      if (dn.length === 0) return [];
      const keys = [dnKey(formatDn(dn))];
      const first = dn[0]!;
      if (base !== null && base.length > 0 && first.length === 1 && !first[0]!.ber && isUnder(dn, base)) keys.push(nameKey(first[0]!.value));
      return keys;
    },
  };
}

/**
 * What is wrong with a group-role map and its groups base, by field: a DN key or base that does
 * not parse, short names with no base to look under. For the configuration route (refused) and
 * start-up (a warning for what was stored or set before this rule).
 */
export function groupRoleProblems(groupRoles: Record<string, string[]>, groupsBaseDn: string | undefined): Array<{ field: 'group_roles' | 'groups_base_dn'; message: string }> {
  const problems: Array<{ field: 'group_roles' | 'groups_base_dn'; message: string }> = [];
  if (groupsBaseDn !== undefined && (normalizeDn(groupsBaseDn) ?? '') === '') problems.push({ field: 'groups_base_dn', message: 'is not a distinguished name' });
  const keys = Object.keys(groupRoles);
  const withNul = keys.filter((k) => k.includes('\0'));
  if (withNul.length > 0) problems.push({ field: 'group_roles', message: 'a group name or DN holds a NUL character' });
  const badDns = keys.filter((k) => isDnKey(k) && !k.includes('\0') && normalizeDn(k) === null);
  if (badDns.length > 0) problems.push({ field: 'group_roles', message: `${badDns.map((k) => JSON.stringify(k)).join(', ')} is not a distinguished name` });
  const short = keys.filter((k) => !isDnKey(k));
  if (short.length > 0 && groupsBaseDn === undefined) {
    problems.push({ field: 'group_roles', message: `the short group names ${short.map((k) => JSON.stringify(k)).join(', ')} map roles only under groups_base_dn: set it, or name each group by its full DN` });
  }
  return problems;
}
