/**
 * The LDAP_* variables (SPEC "Other named environment variables"): the directory settings used
 * while the database holds no LDAP configuration (`POST /api/v1/auth/ldap/config` writes one,
 * which then wins). Read by config.ts, the only module that reads the environment.
 */

/** The directory settings, in the configuration record's terms (src/ldap/settings.ts). */
export interface LdapEnvSettings {
  /** ldap://host[:port] or ldaps://host[:port]. */
  uri: string;
  bindDn: string;
  bindPassword: string;
  baseDn: string;
  /** Contains `{username}`, e.g. `(&(objectClass=inetOrgPerson)(uid={username}))`. */
  userFilter: string;
  attrMail: string;
  attrName: string;
  /**
   * An attribute of the USER entry whose values are the DNs of the user's groups: `memberOf`
   * (OpenLDAP memberof overlay, Active Directory) or `isMemberOf` (389-ds, Oracle). It is read
   * from the entry the search returns; the groups themselves are not searched (a group-side
   * `member` attribute needs a second search, which the overlays exist to spare). Empty: no groups.
   */
  groupMemberAttr: string;
  startTls: boolean;
  /** LDAP_CA_FILE: a PEM file of the CA(s) to trust instead of the system store. */
  caFile: string | undefined;
  /** LDAP_GROUP_ROLES: a JSON object from directory group (its full DN, or a short name under the groups base) to role names. */
  groupRoles: Record<string, string[]>;
  /** LDAP_GROUPS_BASE_DN: where the groups that short names in the map stand for live (src/ldap/groups.ts). */
  groupsBaseDn: string | undefined;
}

export const LDAP_DEFAULTS = {
  userFilter: '(uid={username})',
  attrMail: 'mail',
  attrName: 'cn',
  groupMemberAttr: 'memberOf',
} as const;

/**
 * LDAP_POOL_SIZE: connections each node keeps open to the directory at most, shared by every
 * directory sign-in (src/ldap/pool.ts). Each carries one operation at a time (a search or a
 * bind, about a millisecond on a local network), so a few serve many sign-ins in flight.
 */
export const LDAP_POOL_SIZE = { default: 4, min: 1, max: 64 } as const;

type Opt = (name: string) => string | undefined;

/**
 * What is wrong with a directory URI and its TLS choice, by field (`uri`, `start_tls`); empty
 * when nothing is. Shared by the variables and `POST /api/v1/auth/ldap/config`.
 */
export function ldapUriProblems(uri: string, startTls: boolean, production: boolean): Array<{ field: 'uri' | 'start_tls'; message: string }> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return [{ field: 'uri', message: 'is not a URI' }];
  }
  if (url.protocol !== 'ldap:' && url.protocol !== 'ldaps:') return [{ field: 'uri', message: 'must be ldap:// or ldaps://' }];
  if (url.hostname === '' || (url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return [{ field: 'uri', message: 'must be ldap(s)://host[:port] and nothing more (the bind password goes in bind_password, never in the URI)' }];
  if (url.protocol === 'ldaps:' && startTls) return [{ field: 'start_tls', message: 'is for ldap:// (ldaps:// is TLS already)' }];
  if (url.protocol === 'ldap:' && !startTls && production) return [{ field: 'uri', message: 'plain ldap:// would send the bind password in clear: use ldaps:// or start TLS' }];
  return [];
}

/** The settings, or undefined when neither LDAP_URI nor LDAP_SERVER is set; problems name the variable. */
export function readLdapEnv(opt: Opt, problems: string[], production: boolean): LdapEnvSettings | undefined {
  const server = opt('LDAP_SERVER');
  let uri = opt('LDAP_URI');
  if (uri === undefined && server !== undefined) {
    const port = opt('LDAP_PORT');
    uri = `${server.includes('://') ? server : `ldap://${server}`}${port !== undefined ? `:${port}` : ''}`;
  }
  if (uri === undefined) return undefined;
  const userFilter = opt('LDAP_USER_FILTER') ?? LDAP_DEFAULTS.userFilter;
  if (!userFilter.includes('{username}')) problems.push('LDAP_USER_FILTER must contain the placeholder {username}');
  let groupRoles: Record<string, string[]> = {};
  const rawRoles = opt('LDAP_GROUP_ROLES');
  if (rawRoles !== undefined) {
    try {
      const parsed = JSON.parse(rawRoles) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => !Array.isArray(v) || v.some((r) => typeof r !== 'string'))) throw new Error('shape');
      groupRoles = parsed as Record<string, string[]>;
    } catch {
      problems.push('LDAP_GROUP_ROLES must be a JSON object from group to a list of role names, e.g. {"cn=tellers,ou=groups,dc=bank,dc=example":["staff"]}');
    }
  }
  const missing = ['LDAP_BIND_DN', 'LDAP_BIND_PASSWORD', 'LDAP_BASE_DN'].filter((n) => opt(n) === undefined);
  if (missing.length > 0) problems.push(`LDAP_URI is set, so ${missing.join(', ')} must be too`);
  const startTlsRaw = (opt('LDAP_START_TLS') ?? '0').toLowerCase();
  if (!['0', '1', 'true', 'false'].includes(startTlsRaw)) problems.push(`LDAP_START_TLS must be 1 or 0 (got "${startTlsRaw}")`);
  const startTls = startTlsRaw === '1' || startTlsRaw === 'true';
  for (const p of ldapUriProblems(uri, startTls, production)) problems.push(`${p.field === 'uri' ? 'LDAP_URI' : 'LDAP_START_TLS'} ${p.message} (LDAP_URI="${uri}")`);
  return {
    uri,
    bindDn: opt('LDAP_BIND_DN') ?? '',
    bindPassword: opt('LDAP_BIND_PASSWORD') ?? '',
    baseDn: opt('LDAP_BASE_DN') ?? '',
    userFilter,
    attrMail: opt('LDAP_ATTR_MAIL') ?? LDAP_DEFAULTS.attrMail,
    attrName: opt('LDAP_ATTR_NAME') ?? LDAP_DEFAULTS.attrName,
    groupMemberAttr: opt('LDAP_GROUP_MEMBER_ATTR') ?? LDAP_DEFAULTS.groupMemberAttr,
    startTls,
    caFile: opt('LDAP_CA_FILE'),
    groupRoles,
    groupsBaseDn: opt('LDAP_GROUPS_BASE_DN'),
  };
}
