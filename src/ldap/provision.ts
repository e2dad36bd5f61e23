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
import { grantsOf, userColumnsOf, type Grants, type UserRow, type UserStore } from '../users/store.js';
import { mapRoles, nextRoles, refreshFromProvider, sameRoles } from '../users/provisioned.js';
import { ldapGroupKeys } from './groups.js';
import type { LdapSettings } from './settings.js';

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

/** A directory entry's account, by its link, with the roles and permissions it held when read. */
export interface Linked {
  user: UserRow;
  active: boolean;
  grants: Grants;
}

export interface ProvisioningDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  audit: AuditLog;
}

export class LdapProvisioning {
  constructor(private readonly deps: ProvisioningDeps) {}

  /** The account linked to `dn`, if any, whether the link is active, and its grants: one query. */
  async linked(dn: string): Promise<Linked | undefined> {
    const { rows } = await sql<UserRow & Grants & { link_active: boolean }>`
      SELECT ${userColumnsOf('u')}, ${grantsOf(sql.ref('u.id'))}, l.active AS link_active
      FROM user_identity_providers l JOIN users u ON u.id = l.user_id
      WHERE l.idp_type = ${'LDAP'} AND l.idp_issuer = '' AND l.idp_subject = ${subjectOf(dn)}`.execute(this.deps.db);
    const row = rows[0];
    if (!row) return undefined;
    const { link_active: active, roles, permissions, ...user } = row;
    return { user: this.deps.users.reveal(user), active, grants: { roles, permissions } };
  }

  /**
   * The account of a directory user who just proved their password: found by link, or created.
   * `known`: what `linked` read before the password was checked; when it is an active link and
   * the account already holds what the directory says, that is the answer, with no lock, no
   * write and no other read (most sign-ins). Its grants may be a moment old: the session's
   * transaction keeps only those the account still holds (src/signin/pipeline.ts).
   */
  async userFor(identity: DirectoryIdentity, groups: Pick<LdapSettings, 'groupRoles' | 'groupsBaseDn'>, ctx: AuditContext, known?: Linked): Promise<{ user: UserRow; grants?: Grants }> {
    const d = this.deps;
    const subject = subjectOf(identity.dn);
    const now = new Date(d.clock.now());
    const roles = mapRoles(identity.groups, groups.groupRoles, ldapGroupKeys(groups.groupsBaseDn));
    const email = identity.mail?.trim() || null;
    const fullName = identity.name?.trim() || null;
    if (known?.active && known.user.full_name === fullName && (known.user.email ?? null) === email) {
      const { grants } = known;
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
        await refreshFromProvider(trx, d.users, user, { email, fullName }, roles, now);
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
    throw SignInErrors.IDENTITY_CONFLICT({ fields: outcome.conflict });
  }

  /** The fields of a new directory user that a local account already holds (as its username or email). */
  private async conflicts(trx: Db, username: string, email: string | null): Promise<string[]> {
    const taken = await this.deps.users.exists(username, email, null, trx);
    return [...(taken.username || taken.crossed.includes('username') ? ['username'] : []), ...(taken.email || taken.crossed.includes('email') ? ['email'] : [])];
  }
}
