/**
 * The directory settings as the form holds them, from the settings in force (POST
 * /api/v1/auth/ldap/config without a body), and the body that writes them (the same route with
 * one). The bind password is never read: empty means "keep the stored one" (the API keeps it when
 * `bind_password` is left out, as long as the server, account and TLS settings stay the same;
 * `passwordNeed` tells the form beforehand when they do not, so it asks for the password instead
 * of sending an edit the API would refuse and audit as a failure).
 */
import { linesOf, orNull } from './settings-form.js';
import type { LdapView } from './types.js';

export const LDAP_CONFIG = '/api/v1/auth/ldap/config';

/** One row of the group-role map: a group (full DN or short name) and its roles, comma-separated. */
export interface GroupRow {
  id: number;
  group: string;
  roles: string;
}

export interface LdapDraft {
  uri: string;
  startTls: boolean;
  caCert: string;
  bindDn: string;
  bindPassword: string;
  baseDn: string;
  userFilter: string;
  attrMail: string;
  attrName: string;
  groupMemberAttr: string;
  groupsBaseDn: string;
  groups: GroupRow[];
}

/** The fields of the body the form has a place for (where a refusal's field errors go). */
export const LDAP_FIELDS = ['uri', 'start_tls', 'ca_cert', 'bind_dn', 'bind_password', 'base_dn', 'user_filter', 'attr_mail', 'attr_name', 'group_member_attr', 'groups_base_dn', 'group_roles'] as const;

/** The form prefilled from the settings in force; a server without them gets the API's defaults for the attributes. */
export function ldapDraftOf(v: LdapView | undefined): LdapDraft {
  const configured = v?.configured === true;
  return {
    uri: v?.uri ?? '', startTls: v?.start_tls ?? false, caCert: v?.ca_cert ?? '', bindDn: v?.bind_dn ?? '', bindPassword: '',
    baseDn: v?.base_dn ?? '', userFilter: v?.user_filter ?? '',
    attrMail: configured ? v?.attr_mail ?? '' : 'mail', attrName: configured ? v?.attr_name ?? '' : 'cn',
    groupMemberAttr: configured ? v?.group_member_attr ?? '' : 'memberOf', groupsBaseDn: v?.groups_base_dn ?? '',
    groups: Object.entries(v?.group_roles ?? {}).map(([group, roles], id) => ({ id, group, roles: roles.join(', ') })),
  };
}

/** Role names typed with commas (or one per line). */
export function rolesOf(text: string): string[] {
  return [...new Set(linesOf(text.replace(/,/g, '\n')))];
}

/** The rows as the API's map; rows without a group are left out, a group given twice gets the roles of both. */
export function groupRolesOf(rows: GroupRow[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const row of rows) {
    const group = row.group.trim();
    if (group === '') continue;
    out[group] = [...new Set([...(out[group] ?? []), ...rolesOf(row.roles)])];
  }
  return out;
}

/** The body of the write: every setting; the password only when one is typed; empty attributes take the API's defaults. */
export function ldapBodyOf(d: LdapDraft): Record<string, unknown> {
  return {
    uri: d.uri.trim(), bind_dn: d.bindDn.trim(), ...(d.bindPassword !== '' ? { bind_password: d.bindPassword } : {}),
    base_dn: d.baseDn.trim(), user_filter: d.userFilter.trim(),
    ...(d.attrMail.trim() !== '' ? { attr_mail: d.attrMail.trim() } : {}), ...(d.attrName.trim() !== '' ? { attr_name: d.attrName.trim() } : {}),
    group_member_attr: d.groupMemberAttr.trim(), start_tls: d.startTls, ca_cert: orNull(d.caCert),
    group_roles: groupRolesOf(d.groups), groups_base_dn: orNull(d.groupsBaseDn),
  };
}

/** The settings the stored bind password was given for: changing one needs the password again. */
export type EndpointField = 'uri' | 'bind_dn' | 'start_tls' | 'ca_cert';

/** scheme://host:port as the API compares servers (host case-insensitive, the scheme's default port); the text itself when it is not an LDAP URI. */
function serverOf(uri: string): string {
  const m = /^(ldaps?):\/\/(\[[^\]]*\]|[^/:?#]*)(?::(\d+))?(?:[/?#]|$)/i.exec(uri);
  if (!m) return uri;
  const scheme = m[1]!.toLowerCase();
  return `${scheme}://${m[2]!.toLowerCase()}:${m[3] ?? (scheme === 'ldaps' ? '636' : '389')}`;
}

const pemOf = (text: unknown): string => (typeof text === 'string' ? text.replace(/\r\n/g, '\n').trim() : '');

/**
 * Which of the server, the service account, StartTLS and the CA certificate the draft changes
 * from the settings in force. Stricter than the API where it normalizes a DN: a bind DN written
 * differently counts as changed, so the form asks for the password at worst once too often,
 * never too rarely.
 */
export function endpointChanges(view: LdapView, d: LdapDraft): EndpointField[] {
  const was = ldapBodyOf(ldapDraftOf(view));
  const now = ldapBodyOf(d);
  return [
    ...(serverOf(String(was.uri)) !== serverOf(String(now.uri)) ? ['uri' as const] : []),
    ...(was.bind_dn !== now.bind_dn ? ['bind_dn' as const] : []),
    ...(was.start_tls !== now.start_tls ? ['start_tls' as const] : []),
    ...(pemOf(was.ca_cert) !== pemOf(now.ca_cert) ? ['ca_cert' as const] : []),
  ];
}

/** Why the form needs the bind password: none is stored yet, or the draft changes what the stored one was given for; null: it may stay empty. */
export function passwordNeed(view: LdapView, d: LdapDraft): { first: true } | { changed: EndpointField[] } | null {
  if (view.source !== 'database') return { first: true };
  const changed = endpointChanges(view, d);
  return changed.length > 0 ? { changed } : null;
}
