/**
 * Just-in-time provisioning of directory users (SPEC "LDAP login" steps 6 and 7, issue 11
 * section 3). The identity provider link (idp_type LDAP, idp_subject the DN) finds the account;
 * without one, the user, a password-type credential carrying the username (with no usable local
 * password), the email when the directory has one, the link and the mapped roles are created in
 * one transaction. Every sign-in refreshes name, email and the roles the group map manages.
 *
 * Decisions (docs/decisions.md "LDAP"):
 * - A directory user whose username or email already belongs to a local account that no link
 *   ties to this DN is refused (409 IDENTITY_CONFLICT, audited), never merged: the local
 *   account's owner and the directory entry's may be different people, and merging would hand
 *   one the other's account. An administrator resolves it.
 * - The directory owns the roles its group map names: on every sign-in those are set from the
 *   groups; roles the map does not name (granted by an administrator) are kept.
 */
import { sql } from 'kysely';
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';
import { SignInErrors } from '../signin/errors.js';
import type { Grants, UserRow, UserStore } from '../users/store.js';
import { LdapErrors } from './errors.js';

export interface DirectoryIdentity {
  dn: string;
  /** The username the person typed, as it matched the directory (trimmed). */
  username: string;
  mail?: string;
  name?: string;
  groups: string[];
}

/** LDAP DNs compare without regard to case; the link stores the lower-cased DN. */
export function subjectOf(dn: string): string {
  return dn.trim().toLowerCase();
}

/** A group's keys in the map: its DN, and the value of its first RDN (`cn=Tellers,ou=…` -> `tellers`). */
function groupKeys(dn: string): string[] {
  const lower = dn.trim().toLowerCase();
  const first = /^[^=]+=((?:\\.|[^,\\])*)/.exec(lower)?.[1];
  return first === undefined ? [lower] : [lower, first];
}

/** The roles `groups` map to, and every role the map manages. */
export function mapRoles(groups: readonly string[], groupRoles: Record<string, string[]>): { mapped: string[]; managed: string[] } {
  const map = new Map(Object.entries(groupRoles).map(([k, v]) => [k.trim().toLowerCase(), v]));
  const mapped = new Set<string>();
  for (const g of groups) for (const key of groupKeys(g)) for (const role of map.get(key) ?? []) mapped.add(role);
  return { mapped: [...mapped].sort(), managed: [...new Set([...map.values()].flat())].sort() };
}

/** The roles an account holds after a sign-in: those the map does not manage kept, the mapped ones set. */
function nextRoles(current: readonly string[], roles: { mapped: string[]; managed: string[] }): string[] {
  return [...new Set([...current.filter((r) => !roles.managed.includes(r)), ...roles.mapped])].sort();
}

const sameRoles = (a: readonly string[], b: readonly string[]): boolean => [...a].sort().join('\n') === b.join('\n');

/** A directory entry's account, by its link. */
export interface Linked {
  user: UserRow;
  active: boolean;
}

export interface ProvisioningDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  audit: AuditLog;
}

export class LdapProvisioning {
  constructor(private readonly deps: ProvisioningDeps) {}

  /** The account linked to `dn`, if any, and whether the link is active. */
  async linked(dn: string): Promise<Linked | undefined> {
    const link = await this.deps.db.selectFrom('user_identity_providers').select(['user_id', 'active'])
      .where('idp_type', '=', 'LDAP').where('idp_issuer', '=', '').where('idp_subject', '=', subjectOf(dn)).executeTakeFirst();
    const user = link && (await this.deps.users.findById(link.user_id));
    return user ? { user, active: link.active } : undefined;
  }

  /**
   * The account of a directory user who just proved their password: found by link, or created.
   * `known`: what `linked` read before the password was checked; when it is an active link and
   * the account already holds what the directory says, that is the answer, with no lock and no
   * write (most sign-ins).
   */
  async userFor(identity: DirectoryIdentity, groupRoles: Record<string, string[]>, ctx: AuditContext, known?: Linked): Promise<{ user: UserRow; grants?: Grants }> {
    const d = this.deps;
    const subject = subjectOf(identity.dn);
    const now = new Date(d.clock.now());
    const roles = mapRoles(identity.groups, groupRoles);
    const email = identity.mail?.trim() || null;
    const fullName = identity.name?.trim() || null;
    if (known?.active && known.user.full_name === fullName && (known.user.email ?? null) === email) {
      const grants = await d.users.grants(known.user.id);
      if (sameRoles(grants.roles, nextRoles(grants.roles, roles))) return { user: known.user, grants };
    }
    const outcome = await d.db.transaction().execute(async (trx): Promise<UserRow | { conflict: string[] }> => {
      // Two first sign-ins of one person at once: the second waits here and then finds the link.
      await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.userCreate}::int, hashtext(${`ldap:${subject}`}))`.execute(trx);
      const link = await trx.selectFrom('user_identity_providers').select(['user_id', 'active'])
        .where('idp_type', '=', 'LDAP').where('idp_issuer', '=', '').where('idp_subject', '=', subject).executeTakeFirst();
      if (link) {
        if (!link.active) throw SignInErrors.ACCOUNT_DISABLED();
        const user = (await d.users.findById(link.user_id, trx))!;
        await this.refresh(trx, user, email, fullName, roles, now);
        return (await d.users.findById(link.user_id, trx))!;
      }
      const conflict = await this.conflicts(trx, identity.username, email);
      if (conflict.length > 0) return { conflict };
      const user = await d.users.create(trx, { username: identity.username, email, phone: null, fullName, isServiceAccount: false, mustChangePassword: false, now });
      await trx.insertInto('credentials').values({ user_id: user.id, type: 'password', username: identity.username, password_hash: null, password_enc: null, changed_at: now, expires_at: null, is_temporary: false }).execute();
      await trx.insertInto('user_identity_providers').values({ user_id: user.id, idp_type: 'LDAP', idp_subject: subject, created_at: now }).execute();
      await d.users.setRoles(trx, user.id, roles.mapped);
      await d.audit.record({ ...ctx, eventType: 'USER_PROVISIONED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { idp_type: 'LDAP', roles: roles.mapped, email: email !== null } }, trx);
      return user;
    }).catch((err: unknown) => {
      // A local account created at the same moment (an administrator, another directory entry
      // with the same mail) passed the check above and won the unique index: the same conflict.
      if ((err as { code?: unknown }).code !== '23505') throw err;
      const constraint = String((err as { constraint?: unknown }).constraint ?? '');
      return { conflict: constraint.includes('email') ? ['email'] : constraint.includes('username') ? ['username'] : ['username', 'email'] };
    });
    if (!('conflict' in outcome)) return { user: outcome };
    // Audited outside the transaction that found it (which wrote nothing).
    await d.audit.record({ ...ctx, eventType: 'IDENTITY_CONFLICT', status: 'FAILURE', userId: null, username: identity.username, details: { idp_type: 'LDAP', subject, fields: outcome.conflict } });
    throw LdapErrors.IDENTITY_CONFLICT({ fields: outcome.conflict });
  }

  /** Name and email from the directory; the managed roles from its groups, the others kept. */
  private async refresh(trx: Db, user: UserRow, email: string | null, fullName: string | null, roles: { mapped: string[]; managed: string[] }, now: Date): Promise<void> {
    const d = this.deps;
    if (user.full_name !== fullName || (user.email ?? null) !== email) {
      // This runs before the second factor. An email another account holds is not taken over,
      // and neither is the address an email factor sends its codes to: whoever can edit their
      // own `mail` in the directory must not route the code to themselves with the password
      // alone. The rest of the profile still follows the directory.
      const holder = email === null ? undefined : await d.users.findByLogin(email, trx);
      const codesGoThere = (await trx.selectFrom('mfa_factors').select('method').where('user_id', '=', user.id).where('method', '=', 'email').where('status', '=', 'active').executeTakeFirst()) !== undefined;
      const keep = (holder !== undefined && holder.id !== user.id) || codesGoThere;
      await d.users.setProfile(trx, user.id, { email: keep ? user.email : email, fullName }, now);
    }
    const current = (await d.users.grants(user.id, trx)).roles;
    const next = nextRoles(current, roles);
    if (!sameRoles(current, next)) await d.users.setRoles(trx, user.id, next);
  }

  /** The fields of a new directory user that a local account already holds (as its username or email). */
  private async conflicts(trx: Db, username: string, email: string | null): Promise<string[]> {
    const taken = await this.deps.users.exists(username, email, null, trx);
    return [...(taken.username || taken.crossed.includes('username') ? ['username'] : []), ...(taken.email || taken.crossed.includes('email') ? ['email'] : [])];
  }
}
