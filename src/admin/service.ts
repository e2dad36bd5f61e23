/**
 * Administrator tasks, shared by the HTTP routes, the CLI and the first-run bootstrap:
 * create users (with a temporary password unless one is given), reset passwords, unlock.
 */
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { CredentialService } from '../credentials/service.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { SessionService } from '../sessions/service.js';
import type { UserRow, UserStore } from '../users/store.js';
import { AdminErrors } from './errors.js';

export interface CreateUserInput {
  username: string;
  email?: string | null;
  phone?: string | null;
  fullName?: string | null;
  roles: string[];
  isServiceAccount?: boolean;
  /** When given, the user's password (policy-checked, not temporary); else a temporary one is generated. */
  password?: string;
}

export class AdminService {
  constructor(
    private readonly deps: { db: Db; clock: Clock; users: UserStore; credentials: CredentialService; sessions: SessionService; attempts: LoginAttempts; audit: AuditLog },
  ) {}

  async createUser(input: CreateUserInput, actor: { uuid: string | null; username: string | null }, ctx: AuditContext = {}): Promise<{ user: UserRow; roles: string[]; temporaryPassword: string | null }> {
    const d = this.deps;
    const email = input.email?.trim() || null;
    const known = await d.users.knownRoles();
    const unknown = input.roles.filter((r) => !known.includes(r));
    if (unknown.length > 0 || input.roles.length === 0) throw AdminErrors.UNKNOWN_ROLE({ unknown_roles: unknown, known_roles: known });
    const taken = await d.users.exists(input.username, email);
    if (taken.username || taken.email) throw AdminErrors.USER_EXISTS({ fields: [...(taken.username ? ['username'] : []), ...(taken.email ? ['email'] : [])] });

    return d.db.transaction().execute(async (trx) => {
      const now = new Date(d.clock.now());
      let user = await d.users.create(trx, {
        username: input.username, email, phone: input.phone ?? null, fullName: input.fullName ?? null,
        isServiceAccount: input.isServiceAccount ?? false, mustChangePassword: input.password === undefined, now,
      }).catch((err: unknown) => {
        if ((err as { code?: string }).code === '23505') throw AdminErrors.USER_EXISTS(); // lost a race on the unique index
        throw err;
      });
      await d.users.setRoles(trx, user.id, [...new Set(input.roles)]);
      const temporaryPassword = input.password === undefined ? await d.credentials.temporaryPassword(user, trx) : null;
      await d.credentials.setPassword(trx, user, input.password ?? temporaryPassword!, { temporary: input.password === undefined });
      user = (await d.users.findById(user.id, trx))!;
      await d.audit.record({ ...ctx, eventType: 'USER_CREATED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { roles: input.roles, created_by: actor.username, created_by_id: actor.uuid } }, trx);
      return { user, roles: [...new Set(input.roles)].sort(), temporaryPassword };
    });
  }

  async findUser(id: number): Promise<UserRow> {
    const user = await this.deps.users.findById(id);
    if (!user) throw AdminErrors.USER_NOT_FOUND();
    return user;
  }

  /** A new temporary password, a forced change at next sign-in, every session ended. */
  async resetPassword(id: number, actor: { uuid: string | null; username: string | null }, ctx: AuditContext = {}): Promise<string> {
    const d = this.deps;
    const user = await this.findUser(id);
    const { password, ended } = await d.db.transaction().execute(async (trx) => {
      const password = await d.credentials.temporaryPassword(user, trx);
      await d.credentials.setPassword(trx, user, password, { temporary: true });
      const ended = await d.sessions.endAllForUser(trx, user.id, 'admin');
      await d.audit.record({ ...ctx, eventType: 'PASSWORD_RESET_BY_ADMIN', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { reset_by: actor.username, reset_by_id: actor.uuid, sessions_ended: ended.length } }, trx);
      return { password, ended };
    });
    await d.sessions.announce(ended);
    return password;
  }

  async unlock(id: number, actor: { uuid: string | null; username: string | null }, ctx: AuditContext = {}): Promise<UserRow> {
    const user = await this.findUser(id);
    await this.deps.attempts.reset(this.deps.attempts.userKey(user.id));
    await this.deps.audit.record({ ...ctx, eventType: 'ACCOUNT_UNLOCKED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { unlocked_by: actor.username, unlocked_by_id: actor.uuid } });
    return user;
  }
}
