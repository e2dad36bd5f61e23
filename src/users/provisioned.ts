/**
 * What LDAP and SAML provisioning share. Roles from an identity provider's groups (LDAP group DNs, SAML group or role values), through
 * a map of group to role names. The identity provider owns the roles its map names: on every
 * sign-in those are set from the groups; roles the map does not name (granted by an
 * administrator) are kept. The profile (name, email) follows the identity provider too, with two
 * exceptions that keep an account safe before its second factor.
 */
import type { Db } from '../platform/db/database.js';
import { foldValue } from './dn.js';
import type { UserRow, UserStore } from './store.js';

/**
 * How an identity provider's groups meet the keys of its group-role map: `key` puts a map key in
 * the form groups are compared in (null: a key that can never match), `of` gives the keys a
 * group answers to.
 */
export interface GroupKeys {
  key(mapKey: string): string | null;
  of(group: string): readonly string[];
}

/**
 * The two kinds of group key never meet: a DN is `dn:` and its canonical form (src/users/dn.ts),
 * a name `name:` and the name case-folded. Otherwise a name that is itself a DN (the first RDN
 * value of `cn=cn\=domain admins\,ou\=it\,...,ou=groups,...`) would answer to the key of
 * another group's full DN.
 */
export const dnKey = (canonical: string): string => `dn:${canonical}`;
export const nameKey = (name: string): string => `name:${foldValue(name)}`;

/** The roles `groups` map to, and every role the map manages. */
export function mapRoles(groups: readonly string[], groupRoles: Record<string, string[]>, keys: GroupKeys): { mapped: string[]; managed: string[] } {
  const map = new Map<string, string[]>();
  for (const [k, roles] of Object.entries(groupRoles)) {
    const key = keys.key(k);
    if (key !== null) map.set(key, [...(map.get(key) ?? []), ...roles]);
  }
  const mapped = new Set<string>();
  for (const g of groups) for (const key of keys.of(g)) for (const role of map.get(key) ?? []) mapped.add(role);
  return { mapped: [...mapped].sort(), managed: [...new Set(Object.values(groupRoles).flat())].sort() };
}

/** The roles an account holds after a sign-in: those the map does not manage kept, the mapped ones set. */
export function nextRoles(current: readonly string[], roles: { mapped: string[]; managed: string[] }): string[] {
  return [...new Set([...current.filter((r) => !roles.managed.includes(r)), ...roles.mapped])].sort();
}

export const sameRoles = (a: readonly string[], b: readonly string[]): boolean => [...a].sort().join('\n') === b.join('\n');


/**
 * Sets name, email and the managed roles from the identity provider. This runs before the second
 * factor, so an email another account holds is not taken over, and neither is the address an
 * email factor sends its codes to: whoever can edit their own mail at the IdP must not route the
 * code to themselves with the first factor alone. The rest of the profile still follows.
 */
export async function refreshFromProvider(trx: Db, users: UserStore, user: UserRow, profile: { email: string | null; fullName: string | null }, roles: { mapped: string[]; managed: string[] }, now: Date): Promise<void> {
  if (user.full_name !== profile.fullName || (user.email ?? null) !== profile.email) {
    const holder = profile.email === null ? undefined : await users.findByLogin(profile.email, trx);
    const codesGoThere = (await trx.selectFrom('mfa_factors').select('method').where('user_id', '=', user.id).where('method', '=', 'email').where('status', '=', 'active').executeTakeFirst()) !== undefined;
    const keep = (holder !== undefined && holder.id !== user.id) || codesGoThere;
    await users.setProfile(trx, user.id, { email: keep ? user.email : profile.email, fullName: profile.fullName }, now);
  }
  const current = (await users.grants(user.id, trx)).roles;
  const next = nextRoles(current, roles);
  if (!sameRoles(current, next)) await users.setRoles(trx, user.id, next);
}
