/**
 * Just-in-time provisioning of SAML users (SPEC "SAML assertion consumption" steps 2 to 5;
 * issue 12 section 4). The link (idp_type SAML, idp_subject the NameID, idp_issuer the IdP's
 * entity id) finds the account. Without one:
 *
 * - an account holding the assertion's email is linked to it (SPEC), audited as
 *   IDENTITY_LINKED, unless that account holds administrative permissions (any the `customer`
 *   role lacks) or is linked to another NameID of this IdP: then 409 IDENTITY_CONFLICT, audited;
 *   an administrator links such accounts (docs/decisions.md "SAML");
 * - otherwise a user named by the email (or the NameID) is created with the email, the phone,
 *   a password-type credential with no usable local password, the link, the roles the groups
 *   map to and the branch the `branch` attribute names (when it is an active branch).
 *
 * Every sign-in then refreshes the name and the roles the group-role map manages (the IdP owns
 * those, as the directory does for LDAP); an email another account holds, or the address an
 * email factor sends codes to, is not taken over. All in one transaction, under an advisory lock
 * on the subject, so two parallel first sign-ins of one person create one user.
 */
import { sql } from 'kysely';
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { EntityStore } from '../entities/store.js';
import type { Clock } from '../platform/clock.js';
import { SAML_ROLE_KEYS, type SamlAttributeMap, type SamlSettings } from '../platform/config-saml.js';
import type { Db } from '../platform/db/database.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';
import { SignInErrors } from '../signin/errors.js';
import { normalizeDn } from '../users/dn.js';
import { dnKey, mapRoles, nameKey, refreshFromProvider, type GroupKeys } from '../users/provisioned.js';
import type { Grants, UserRow, UserStore } from '../users/store.js';
import { SamlErrors } from './errors.js';
import type { SamlAssertion } from './response.js';

/** What an assertion says about its person, through the attribute map. */
export interface SamlIdentity {
  issuer: string;
  nameId: string;
  email: string | null;
  name: string | null;
  phone: string | null;
  /** Group and role values (SPEC `role` is read like a group). */
  groups: string[];
  branch: string | null;
}

const first = (attributes: ReadonlyMap<string, string[]>, names: readonly string[]): string | null => {
  for (const n of names) {
    const v = attributes.get(n)?.find((x) => x.trim() !== '');
    if (v !== undefined) return v.trim();
  }
  return null;
};

export function identityOf(a: SamlAssertion, map: SamlAttributeMap): SamlIdentity {
  const email = first(a.attributes, map.email);
  if (email !== null && (email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email))) throw SamlErrors.SAML_ATTRIBUTES_MISSING({ fields: ['email'] });
  const groups = [...new Set([...map.groups, ...map.role].flatMap((n) => a.attributes.get(n) ?? []).map((g) => g.trim()).filter((g) => g !== ''))];
  return {
    issuer: a.issuer, nameId: a.nameId, email, name: first(a.attributes, map.name)?.slice(0, 256) ?? null,
    phone: first(a.attributes, map.phone)?.slice(0, 32) ?? null, groups, branch: first(a.attributes, map.branch)?.slice(0, 64) ?? null,
  };
}

/** SPEC's group-role map (role key -> IdP groups) turned around: group -> roles. */
export function groupRoleMap(groupRoles: SamlSettings['groupRoles']): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, groups] of Object.entries(groupRoles)) {
    const role = SAML_ROLE_KEYS[key as keyof typeof SAML_ROLE_KEYS];
    for (const g of groups ?? []) (out[g] ??= []).push(role);
  }
  return out;
}

/** A group value as compared: a DN in canonical form (RFC 4514), any other name case-folded; the two kinds never meet. */
const groupKey = (v: string): string => {
  const canonical = v.includes('=') ? normalizeDn(v) : null;
  return canonical === null ? nameKey(v) : dnKey(canonical);
};

/**
 * An assertion's group values match the map's names exactly (without regard to case, a DN in
 * any spelling); a DN is never matched by its first RDN alone, as a directory's short names
 * are not (src/ldap/groups.ts).
 */
export const SAML_GROUP_KEYS: GroupKeys = { key: groupKey, of: (g) => [groupKey(g)] };

export interface SamlLinked {
  user: UserRow;
  active: boolean;
}

export interface SamlProvisioningDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  entities: EntityStore;
  audit: AuditLog;
}

type Outcome = UserRow | { conflict: string[]; reason?: string; holder?: UserRow };

export class SamlProvisioning {
  constructor(private readonly deps: SamlProvisioningDeps) {}

  async linked(issuer: string, nameId: string): Promise<SamlLinked | undefined> {
    const link = await this.link(this.deps.db, issuer, nameId);
    const user = link && (await this.deps.users.findById(link.user_id));
    return user ? { user, active: link.active } : undefined;
  }

  /** The account of the person the IdP vouched for: found by link, linked by email, or created. */
  async userFor(identity: SamlIdentity, settings: SamlSettings, ctx: AuditContext): Promise<{ user: UserRow; grants?: Grants }> {
    const d = this.deps;
    const now = new Date(d.clock.now());
    const roles = mapRoles(identity.groups, groupRoleMap(settings.groupRoles), SAML_GROUP_KEYS);
    const outcome = await d.db.transaction().execute(async (trx): Promise<Outcome> => {
      // Two first sign-ins of one person at once: the second waits here and then finds the link.
      await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.userCreate}::int, hashtext(${`saml:${identity.issuer}\n${identity.nameId}`}))`.execute(trx);
      const link = await this.link(trx, identity.issuer, identity.nameId);
      if (link) {
        if (!link.active) throw SignInErrors.ACCOUNT_DISABLED();
        const user = (await d.users.findById(link.user_id, trx))!;
        await refreshFromProvider(trx, d.users, user, { email: identity.email ?? user.email, fullName: identity.name ?? user.full_name }, roles, now);
        return (await d.users.findById(link.user_id, trx))!;
      }
      const byEmail = identity.email === null ? undefined : await this.holderOfEmail(trx, identity.email);
      if (byEmail) {
        if (await this.privileged(trx, byEmail.id)) return { conflict: ['email'], reason: 'privileged_account', holder: byEmail };
        const other = await trx.selectFrom('user_identity_providers').select('id').where('user_id', '=', byEmail.id).where('idp_type', '=', 'SAML').where('idp_issuer', '=', identity.issuer).executeTakeFirst();
        if (other) return { conflict: ['email'], reason: 'linked_to_another_subject', holder: byEmail };
        await trx.insertInto('user_identity_providers').values({ user_id: byEmail.id, idp_type: 'SAML', idp_subject: identity.nameId, idp_issuer: identity.issuer, created_at: now }).execute();
        await d.audit.record({ ...ctx, eventType: 'IDENTITY_LINKED', status: 'SUCCESS', userId: byEmail.uuid, username: byEmail.username, details: { idp_type: 'SAML', issuer: identity.issuer, by: 'email' } }, trx);
        await refreshFromProvider(trx, d.users, byEmail, { email: identity.email, fullName: identity.name ?? byEmail.full_name }, roles, now);
        return (await d.users.findById(byEmail.id, trx))!;
      }
      const username = identity.email ?? identity.nameId;
      const taken = await d.users.exists(username, identity.email, null, trx);
      const fields = [...(taken.username || taken.crossed.includes('username') ? ['username'] : []), ...(taken.email || taken.crossed.includes('email') ? ['email'] : [])];
      if (fields.length > 0) return { conflict: fields };
      const user = await d.users.create(trx, { username, email: identity.email, phone: identity.phone, fullName: identity.name, isServiceAccount: false, mustChangePassword: false, now });
      // SPEC: a user created this way always has a credential (the token subject resolves through it); no usable password.
      await trx.insertInto('credentials').values({ user_id: user.id, type: 'password', username, password_hash: null, password_enc: null, changed_at: now, expires_at: null, is_temporary: false }).execute();
      await trx.insertInto('user_identity_providers').values({ user_id: user.id, idp_type: 'SAML', idp_subject: identity.nameId, idp_issuer: identity.issuer, created_at: now }).execute();
      await d.users.setRoles(trx, user.id, roles.mapped);
      const branch = identity.branch === null ? undefined : await d.entities.byCode(identity.branch, trx);
      if (branch?.is_active) await d.entities.link(trx, user.id, branch.id);
      await d.audit.record({
        ...ctx, eventType: 'USER_PROVISIONED', status: 'SUCCESS', userId: user.uuid, username: user.username,
        details: { idp_type: 'SAML', issuer: identity.issuer, roles: roles.mapped, email: identity.email !== null, branch: branch?.is_active ? branch.code : null, ...(identity.branch !== null && !branch?.is_active ? { branch_unknown: identity.branch } : {}) },
      }, trx);
      return user;
    }).catch((err: unknown): Outcome => {
      // An account created at the same moment won the unique index: the same conflict.
      if ((err as { code?: unknown }).code !== '23505') throw err;
      const constraint = String((err as { constraint?: unknown }).constraint ?? '');
      return { conflict: constraint.includes('email') ? ['email'] : constraint.includes('username') ? ['username'] : ['username', 'email'] };
    });
    if (!('conflict' in outcome)) return { user: outcome };
    const who = outcome.holder ? { userId: outcome.holder.uuid, username: outcome.holder.username } : { userId: null, username: identity.email ?? identity.nameId };
    await d.audit.record({ ...ctx, eventType: 'IDENTITY_CONFLICT', status: 'FAILURE', ...who, details: { idp_type: 'SAML', issuer: identity.issuer, subject: identity.nameId, fields: outcome.conflict, ...(outcome.reason ? { reason: outcome.reason } : {}) } });
    throw SignInErrors.IDENTITY_CONFLICT({ fields: outcome.conflict, ...(outcome.reason ? { reason: outcome.reason } : {}) });
  }

  private link(db: Db, issuer: string, nameId: string) {
    return db.selectFrom('user_identity_providers').select(['user_id', 'active'])
      .where('idp_type', '=', 'SAML').where('idp_issuer', '=', issuer).where('idp_subject', '=', nameId).executeTakeFirst();
  }

  /** The account whose email is `email` (an account merely named so is not it). */
  private async holderOfEmail(trx: Db, email: string): Promise<UserRow | undefined> {
    const found = await this.deps.users.findByLogin(email, trx);
    return found?.email?.toLowerCase() === email.toLowerCase() ? found : undefined;
  }

  /** Whether the account holds a permission the `customer` role does not: it is linked by an administrator, never by email. */
  private async privileged(trx: Db, userId: number): Promise<boolean> {
    const customer = await trx.selectFrom('role_permissions').innerJoin('roles', 'roles.id', 'role_permissions.role_id')
      .innerJoin('permissions', 'permissions.id', 'role_permissions.permission_id').select('permissions.name').where('roles.name', '=', 'customer').execute();
    const ordinary = new Set(customer.map((r) => r.name));
    return (await this.deps.users.grants(userId, trx)).permissions.some((p) => !ordinary.has(p));
  }
}
