/**
 * A user's life after creation, as administrators manage it: read, change (name, contacts,
 * language, roles, branches, active), soft-delete, and list or end their sessions. Shared by the
 * HTTP routes and the CLI.
 *
 * Rules (docs/decisions.md, "User lifecycle administration"):
 * - every change runs under the user's row lock, which sign-in also takes before it opens a
 *   session, so a sign-in racing a change either ends before it (and its session is ended by it)
 *   or sees the changed account;
 * - disabling or deleting ends every session of the user at once (and their refresh tokens);
 * - any change of roles ends the user's sessions at once (their second factor, channel access and
 *   limits were decided on the old roles); branches are not in tokens;
 * - an administrator acts only on accounts whose every permission they hold (`assertTargetHeld`);
 * - nobody disables or deletes their own account, and no change leaves no active account with
 *   the `admin` role (such changes are counted one at a time, under an advisory lock);
 * - a role given to a user grants only permissions its giver holds (`assertRolesHeld`).
 */
import { sql } from 'kysely';
import type { AuditEvent, AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import { phoneIndexValue } from '../platform/crypto/blind-index.js';
import type { Db } from '../platform/db/database.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';
import type { EntityStore } from '../entities/store.js';
import type { Who } from '../sessions/guard.js';
import type { Session, SessionService } from '../sessions/service.js';
import { lockUserRow, type UserRow, type UserStore } from '../users/store.js';
import { AdminErrors } from './errors.js';
import { assertHeld, assertRolesHeld, assertTargetHeld, heldBy } from '../roles/held.js';
import type { DirectoryQuery, DirectoryUser, UserDirectory } from './user-directory.js';

export const ADMIN_ROLE = 'admin';

/** The roles, deduplicated (at least one); 422 UNKNOWN_ROLE naming the ones that do not exist. */
export async function existingRoles(users: UserStore, roles: string[], db?: Db): Promise<string[]> {
  const known = await users.knownRoles(db);
  const unknown = roles.filter((r) => !known.includes(r));
  if (unknown.length > 0 || roles.length === 0) throw AdminErrors.UNKNOWN_ROLE({ unknown_roles: unknown, known_roles: known });
  return [...new Set(roles)];
}

/**
 * Gives the user exactly these roles, checked to exist again under the roles' share lock: a role
 * deleted since `existingRoles` read it is 422 UNKNOWN_ROLE, never a foreign-key failure.
 */
export async function linkRoles(users: UserStore, trx: Db, userId: number, roles: string[]): Promise<void> {
  const missing = await users.setRoles(trx, userId, roles);
  if (missing.length > 0) throw AdminErrors.UNKNOWN_ROLE({ unknown_roles: missing, known_roles: await users.knownRoles(trx) });
}

/** What an administrator may change; an absent field stays as it is. */
export interface UserChange {
  fullName?: string | null;
  email?: string | null;
  phone?: string | null;
  language?: UserRow['language'];
  roles?: string[];
  /** Branch codes: the user's branches become exactly these. */
  entities?: string[];
  active?: boolean;
}

export interface LifecycleDeps {
  db: Db;
  clock: Clock;
  users: UserStore;
  entities: EntityStore;
  directory: UserDirectory;
  sessions: SessionService;
  audit: AuditLog;
}


export class UserLifecycle {
  constructor(private readonly deps: LifecycleDeps) {}

  /** The user, deleted or not; 404 USER_NOT_FOUND. */
  async get(uuid: string, trx?: Db): Promise<DirectoryUser> {
    const user = await this.deps.directory.byUuid(uuid, trx);
    if (!user) throw AdminErrors.USER_NOT_FOUND();
    return user;
  }

  /** A page of users found by search and filters (keyset paging: `UserDirectory`). */
  async find(q: DirectoryQuery): Promise<{ users: DirectoryUser[]; nextCursor: string | null }> {
    return this.deps.directory.page(q);
  }

  /** The user under their row lock, not deleted (409 ACCOUNT_DELETED). */
  private async lockLive(trx: Db, uuid: string): Promise<DirectoryUser> {
    const found = await this.deps.users.findByUuid(uuid, trx);
    if (!found) throw AdminErrors.USER_NOT_FOUND();
    await lockUserRow(trx, found.id);
    const user = await this.get(uuid, trx); // read again under the lock
    if (user.status === 'deleted') throw AdminErrors.ACCOUNT_DELETED();
    return user;
  }

  async update(uuid: string, change: UserChange, who: Who): Promise<{ user: DirectoryUser; sessionsEnded: number }> {
    const d = this.deps;
    const { ended, after } = await d.db.transaction().execute(async (trx) => {
      const before = await this.lockLive(trx, uuid);
      const held = await heldBy(trx, d.users, who.actor.uuid);
      const permissionsBefore = (await d.users.grants(before.id, trx)).permissions;
      assertHeld(held, permissionsBefore);
      const roles = change.roles === undefined ? undefined : (await existingRoles(d.users, change.roles, trx)).sort();
      if (roles !== undefined) await assertRolesHeld(trx, held, roles.filter((r) => !before.roles.includes(r)));
      const entityIds = change.entities === undefined ? undefined : await this.knownEntities(trx, change.entities, before.entities);
      await this.checkContacts(trx, before, change);
      const losesAdmin = before.is_active && before.roles.includes(ADMIN_ROLE) && (change.active === false || (roles !== undefined && !roles.includes(ADMIN_ROLE)));
      if (change.active === false && who.actor.uuid === before.uuid) throw AdminErrors.CANNOT_DISABLE_SELF();
      if (losesAdmin) await this.keepAnAdmin(trx, before.id);
      const now = new Date(d.clock.now());
      await d.users.updateProfile(trx, before.id, { fullName: change.fullName, email: change.email, phone: change.phone, language: change.language, isActive: change.active }, now);
      // Any change of roles ends the sessions: a session's second factor, channel access and
      // limits were decided on the roles it signed in with (a new role may require a factor).
      const rolesChanged = roles !== undefined && roles.join() !== [...before.roles].sort().join();
      if (rolesChanged) await linkRoles(d.users, trx, before.id, roles);
      if (entityIds !== undefined) await d.entities.setLinks(trx, before.id, entityIds);
      const permissionsAfter = rolesChanged ? (await d.users.grants(before.id, trx)).permissions : permissionsBefore;
      const lost = permissionsBefore.filter((p) => !permissionsAfter.includes(p));
      const ended = change.active === false || rolesChanged ? await d.sessions.endAllForUser(trx, before.id, 'admin') : [];
      const after = await this.get(uuid, trx);
      const event: AuditEvent = change.active === false && before.is_active ? 'USER_DISABLED' : change.active === true && !before.is_active ? 'USER_ENABLED' : 'USER_UPDATED';
      await d.audit.record({
        ...who.context, eventType: event, status: 'SUCCESS', userId: before.uuid, username: before.username,
        details: { ...changes(before, after, change), permissions_removed: lost, sessions_ended: ended.length, changed_by: who.actor.username, changed_by_id: who.actor.uuid },
      }, trx);
      return { ended, after };
    });
    await d.sessions.announce(ended);
    return { user: after, sessionsEnded: ended.length };
  }

  /** Soft deletion: inactive, marked deleted, every session ended; the row, links and audit trail stay. */
  async delete(uuid: string, who: Who): Promise<{ user: DirectoryUser; sessionsEnded: number }> {
    const d = this.deps;
    const ended = await d.db.transaction().execute(async (trx) => {
      const user = await this.lockLive(trx, uuid);
      if (who.actor.uuid === user.uuid) throw AdminErrors.CANNOT_DISABLE_SELF();
      await assertTargetHeld(trx, d.users, who.actor.uuid, user.id);
      if (user.roles.includes(ADMIN_ROLE) && user.is_active) await this.keepAnAdmin(trx, user.id);
      await d.users.markDeleted(trx, user.id, who.actor.uuid, new Date(d.clock.now()));
      const ids = await d.sessions.endAllForUser(trx, user.id, 'admin');
      await d.audit.record({
        ...who.context, eventType: 'USER_DELETED', status: 'SUCCESS', userId: user.uuid, username: user.username,
        details: { was_active: user.is_active, roles: user.roles, sessions_ended: ids.length, deleted_by: who.actor.username, deleted_by_id: who.actor.uuid },
      }, trx);
      return ids;
    });
    await d.sessions.announce(ended);
    return { user: await this.get(uuid), sessionsEnded: ended.length };
  }

  /** The user's active sessions (404 for an unknown user). */
  async sessionsOf(uuid: string): Promise<{ user: DirectoryUser; sessions: Session[] }> {
    const user = await this.get(uuid);
    return { user, sessions: await this.deps.sessions.activeOf(user.id) };
  }

  /** Ends one session of the user, or all of them (`sessionId` undefined); audited as SESSION_ENDED. */
  async endSessions(uuid: string, sessionId: string | undefined, who: Who): Promise<string[]> {
    const d = this.deps;
    const user = await this.get(uuid);
    const ended = await d.db.transaction().execute(async (trx) => {
      await assertTargetHeld(trx, d.users, who.actor.uuid, user.id);
      let ids: string[];
      if (sessionId === undefined) {
        ids = await d.sessions.endAllForUser(trx, user.id, 'admin');
      } else {
        const row = await trx.selectFrom('sessions').select('session_id').where('session_id', '=', sessionId).where('user_id', '=', user.id).where('is_active', '=', true).forUpdate().executeTakeFirst();
        if (!row) throw AdminErrors.SESSION_NOT_FOUND();
        await d.sessions.endMany(trx, [sessionId], 'admin', user.id);
        ids = [sessionId];
      }
      await d.audit.record({
        ...who.context, eventType: 'SESSION_ENDED', status: 'SUCCESS', userId: user.uuid, username: user.username,
        details: { reason: 'admin', all_sessions: sessionId === undefined, sessions_ended: ids, ended_by: who.actor.username, ended_by_id: who.actor.uuid },
      }, trx);
      return ids;
    });
    await d.sessions.announce(ended);
    return ended;
  }


  /** The branches' ids; a code not linked yet must name an active branch (422 UNKNOWN_ENTITY). */
  private async knownEntities(trx: Db, codes: string[], linked: string[]): Promise<number[]> {
    const rows = await this.deps.entities.byCodes(codes, trx);
    const byCode = new Map(rows.map((r) => [r.code.toLowerCase(), r]));
    const unknown = codes.filter((c) => !byCode.has(c.toLowerCase()));
    const isLinked = (code: string) => linked.some((l) => l.toLowerCase() === code.toLowerCase());
    const inactive = rows.filter((r) => !r.is_active && !isLinked(r.code)).map((r) => r.code);
    if (unknown.length > 0 || inactive.length > 0) throw AdminErrors.UNKNOWN_ENTITY({ unknown_entities: unknown, inactive_entities: inactive });
    return [...new Set(rows.map((r) => r.id))];
  }

  /**
   * A new email or phone must be no other account's, and an email no other account's username
   * (409 USER_EXISTS / IDENTIFIER_CONFLICT, as at creation); the identifiers are locked as a
   * creation locks them, so a creation and a change cannot both take one.
   */
  private async checkContacts(trx: Db, user: UserRow, change: UserChange): Promise<void> {
    const email = change.email === undefined || change.email === null || change.email.toLowerCase() === user.email?.toLowerCase() ? null : change.email;
    const phone = change.phone === undefined || change.phone === null || phoneIndexValue(change.phone) === (user.phone === null ? null : phoneIndexValue(user.phone)) ? null : change.phone;
    if (email === null && phone === null) return;
    const taken = await this.deps.users.contactsTakenLocked(trx, user.id, email, phone);
    if (taken.email || taken.phone) throw AdminErrors.USER_EXISTS({ fields: [...(taken.email ? ['email'] : []), ...(taken.phone ? ['phone'] : [])] });
    if (taken.crossed.length > 0) throw AdminErrors.IDENTIFIER_CONFLICT({ fields: taken.crossed });
  }

  /** 409 LAST_ADMIN unless another active, undeleted account holds the admin role; one such check at a time. */
  private async keepAnAdmin(trx: Db, losingId: number): Promise<void> {
    await keepAnAdmin(trx, losingId);
  }
}

/**
 * 409 LAST_ADMIN unless another active, undeleted account, with no erasure pending, holds the
 * admin role; one such check at a time (also the erasure request's, src/gdpr/erasure).
 */
export async function keepAnAdmin(trx: Db, losingId: number): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.adminMembership})`.execute(trx);
  const row = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM users u
    WHERE u.id <> ${losingId} AND u.is_active AND u.deleted_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM gdpr_erasures e WHERE e.user_id = u.id AND e.state = 'pending')
      AND EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = u.id AND r.name = ${ADMIN_ROLE})`.execute(trx);
  if ((row.rows[0]?.n ?? 0) === 0) throw AdminErrors.LAST_ADMIN({ role: ADMIN_ROLE });
}

/** The audit trail's account of a change: which fields changed, and roles, branches and state before and after (never a contact's value). */
function changes(before: DirectoryUser, after: DirectoryUser, change: UserChange): Record<string, unknown> {
  const changed = [
    ...(change.fullName !== undefined && before.full_name !== after.full_name ? ['full_name'] : []),
    ...(change.email !== undefined && before.email !== after.email ? ['email'] : []),
    ...(change.phone !== undefined && before.phone !== after.phone ? ['phone'] : []),
    ...(change.language !== undefined && before.language !== after.language ? ['language'] : []),
    ...(change.roles !== undefined && before.roles.join() !== after.roles.join() ? ['roles'] : []),
    ...(change.entities !== undefined && before.entities.join() !== after.entities.join() ? ['entities'] : []),
    ...(change.active !== undefined && before.is_active !== after.is_active ? ['active'] : []),
  ];
  return {
    changed,
    ...(changed.includes('roles') ? { roles_before: before.roles, roles_after: after.roles } : {}),
    ...(changed.includes('entities') ? { entities_before: before.entities, entities_after: after.entities } : {}),
    ...(changed.includes('active') ? { active_before: before.is_active, active_after: after.is_active } : {}),
  };
}
