/**
 * Administrator tasks, shared by the HTTP routes, the CLI and the first-run bootstrap:
 * create users (with a temporary password unless one is given), reset passwords, unlock.
 *
 * With a configured mailer (the HTTP routes pass one; the CLI and the bootstrap do not) a
 * temporary password goes to the user's email address instead of back to the caller. The mail
 * is sent inside the transaction that sets the password, last: when the SMTP server does not
 * accept it, the transaction rolls back and the caller gets `503 MAIL_DELIVERY_FAILED`, so no
 * account or reset exists whose password nobody knows (docs/decisions.md).
 */
import { sql } from 'kysely';
import type { AuditContext, AuditLog } from '../audit/service.js';
import type { CredentialService } from '../credentials/service.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { AppError } from '../platform/errors.js';
import type { LoginAttempts } from '../policy/lockout.js';
import type { SessionService } from '../sessions/service.js';
import { phoneIndexValue } from '../platform/crypto/blind-index.js';
import { pinKeyOf } from '../pins/service.js';
import type { UserRow, UserStore } from '../users/store.js';
import { MailDeliveryError, type Mailer } from '../mail/mailer.js';
import { maskEmail, temporaryPasswordMail } from '../mail/templates.js';
import type { RequestActor } from '../sessions/guard.js';
import { AdminErrors } from './errors.js';
import { existingRoles, linkRoles } from './lifecycle.js';
import { assertRolesHeld, assertTargetHeld, heldBy } from '../roles/held.js';
import { ADVISORY_LOCKS } from '../platform/db/locks.js';

/** Where a temporary password went: to the user's mailbox, or back in the response. */
export type Delivery = 'email' | 'response';

export interface CreateUserInput {
  username: string;
  email?: string | null;
  phone?: string | null;
  fullName?: string | null;
  /** The language of the user's notifications; null: en. */
  language?: 'en' | 'pt' | 'fr' | null;
  roles: string[];
  isServiceAccount?: boolean;
  /** When given, the user's password (policy-checked, not temporary); else a temporary one is generated. */
  password?: string;
}


export class AdminService {
  constructor(
    private readonly deps: { db: Db; clock: Clock; users: UserStore; credentials: CredentialService; sessions: SessionService; attempts: LoginAttempts; audit: AuditLog; mailer?: Mailer },
  ) {}

  /** Email when a mailer is configured and the user has an address; else the response. */
  private deliveryFor(user: UserRow): Delivery {
    return this.deps.mailer?.configured && user.email ? 'email' : 'response';
  }

  /** Sends the temporary password; a failure becomes MAIL_DELIVERY_FAILED (the caller's transaction rolls back). */
  private async mail(user: UserRow, password: string, reason: 'created' | 'reset'): Promise<Record<string, unknown>> {
    const to = user.email!;
    try {
      const { messageId } = await this.deps.mailer!.send(temporaryPasswordMail({ to, username: user.username, fullName: user.full_name }, password, reason));
      return { delivery: 'email', recipient: maskEmail(to), message_id: messageId };
    } catch (err) {
      if (err instanceof MailDeliveryError) throw AdminErrors.MAIL_DELIVERY_FAILED({ delivery: 'email' }, { cause: err });
      throw err;
    }
  }

  /** Audits a delivery that failed, after the rollback, so the attempt is on record. */
  private async auditFailure(err: unknown, e: { eventType: 'USER_CREATED' | 'PASSWORD_RESET_BY_ADMIN'; userId: string | null; username: string; email: string | null; details: Record<string, unknown> }, ctx: AuditContext): Promise<void> {
    if (!(err instanceof AppError && err.code === 'MAIL_DELIVERY_FAILED')) return;
    const reason = err.cause instanceof MailDeliveryError ? err.cause.reason : 'unknown';
    await this.deps.audit.record({
      ...ctx, eventType: e.eventType, status: 'FAILURE', userId: e.userId, username: e.username,
      details: { ...e.details, delivery: 'email', recipient: e.email ? maskEmail(e.email) : null, error_code: 'MAIL_DELIVERY_FAILED', reason, rolled_back: true },
    });
  }

  async createUser(input: CreateUserInput, actor: RequestActor, ctx: AuditContext = {}): Promise<{ user: UserRow; roles: string[]; temporaryPassword: string | null; delivery: Delivery | null }> {
    const d = this.deps;
    const email = input.email?.trim() || null;
    const roles = await existingRoles(d.users, input.roles);
    await assertRolesHeld(d.db, await heldBy(d.db, d.users, actor.uuid), roles);
    return d.db.transaction().execute(async (trx) => {
      // The unique indexes cannot see a username that equals another row's email, so two
      // creations that share an identifier (in either column) are serialised: each locks its
      // lower-cased identifiers, in sorted order (no deadlock), before it checks and inserts.
      const phone = input.phone ?? null;
      for (const id of [...new Set([input.username.toLowerCase(), ...(email ? [email.toLowerCase()] : []), ...(phone ? [phoneIndexValue(phone)] : [])])].sort()) {
        await sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.userCreate}::int, hashtext(${id}))`.execute(trx);
      }
      const taken = await d.users.exists(input.username, email, phone, trx);
      if (taken.username || taken.email || taken.phone) {
        throw AdminErrors.USER_EXISTS({ fields: [...(taken.username ? ['username'] : []), ...(taken.email ? ['email'] : []), ...(taken.phone ? ['phone'] : [])] });
      }
      if (taken.crossed.length > 0) throw AdminErrors.IDENTIFIER_CONFLICT({ fields: taken.crossed });
      const now = new Date(d.clock.now());
      let user = await d.users.create(trx, {
        username: input.username, email, phone, fullName: input.fullName ?? null, language: input.language ?? null,
        isServiceAccount: input.isServiceAccount ?? false, mustChangePassword: input.password === undefined, now,
      }).catch((err: unknown) => {
        if ((err as { code?: string }).code === '23505') throw AdminErrors.USER_EXISTS(); // lost a race on the unique index
        throw err;
      });
      await linkRoles(d.users, trx, user.id, roles);
      const temporaryPassword = input.password === undefined ? await d.credentials.temporaryPassword(user, trx) : null;
      await d.credentials.setPassword(trx, user, input.password ?? temporaryPassword!, { temporary: input.password === undefined });
      user = (await d.users.findById(user.id, trx))!;
      const delivery = temporaryPassword === null ? null : this.deliveryFor(user);
      // Last step before commit: the mail leaves only when everything else is written.
      const sent = delivery === 'email' ? await this.mail(user, temporaryPassword!, 'created') : delivery === null ? {} : { delivery };
      await d.audit.record({ ...ctx, eventType: 'USER_CREATED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { roles: input.roles, created_by: actor.username, created_by_id: actor.uuid, ...sent } }, trx);
      return { user, roles: [...roles].sort(), temporaryPassword, delivery };
    }).catch(async (err: unknown) => {
      await this.auditFailure(err, { eventType: 'USER_CREATED', userId: null, username: input.username, email, details: { roles: input.roles, created_by: actor.username, created_by_id: actor.uuid } }, ctx);
      throw err;
    });
  }

  /** The user with this uuid (the one public id); 404 USER_NOT_FOUND. */
  async findUser(uuid: string): Promise<UserRow> {
    const user = await this.deps.users.findByUuid(uuid);
    if (!user) throw AdminErrors.USER_NOT_FOUND();
    return user;
  }

  /**
   * A new temporary password, a forced change at next sign-in, every session ended. When the
   * password is emailed and the mail fails, nothing changes: the old password and sessions stay.
   */
  async resetPassword(uuid: string, actor: RequestActor, ctx: AuditContext = {}): Promise<{ temporaryPassword: string; delivery: Delivery }> {
    const d = this.deps;
    const user = await this.findUser(uuid);
    if (user.deleted_at !== null) throw AdminErrors.ACCOUNT_DELETED();
    await assertTargetHeld(d.db, d.users, actor.uuid, user.id);
    const delivery = this.deliveryFor(user);
    const who = { reset_by: actor.username, reset_by_id: actor.uuid };
    const password = await d.credentials.temporaryPassword(user);
    const prepared = await d.credentials.prepare(user, password, { temporary: true }); // bcrypt outside the transaction
    const { ended } = await d.db.transaction().execute(async (trx) => {
      await d.credentials.store(trx, user, prepared);
      const ended = await d.sessions.endAllForUser(trx, user.id, 'admin');
      const sent = delivery === 'email' ? await this.mail(user, password, 'reset') : { delivery };
      await d.audit.record({ ...ctx, eventType: 'PASSWORD_RESET_BY_ADMIN', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { ...who, sessions_ended: ended.length, ...sent } }, trx);
      return { ended };
    }).catch(async (err: unknown) => {
      await this.auditFailure(err, { eventType: 'PASSWORD_RESET_BY_ADMIN', userId: user.uuid, username: user.username, email: user.email, details: who }, ctx);
      throw err;
    });
    await d.sessions.announce(ended);
    return { temporaryPassword: password, delivery };
  }

  async unlock(uuid: string, actor: RequestActor, ctx: AuditContext = {}): Promise<UserRow> {
    const user = await this.findUser(uuid);
    await assertTargetHeld(this.deps.db, this.deps.users, actor.uuid, user.id);
    // The password's counter and the PIN's (src/pins/service.ts): unlocking is for the account.
    await this.deps.attempts.reset(this.deps.attempts.userKey(user.id));
    await this.deps.attempts.reset(pinKeyOf(this.deps.attempts.userKey(user.id)));
    await this.deps.audit.record({ ...ctx, eventType: 'ACCOUNT_UNLOCKED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { unlocked_by: actor.username, unlocked_by_id: actor.uuid } });
    return user;
  }
}
