/**
 * Erasure ("the right to be forgotten", issue 28): the request, its cancel during the grace
 * period, and the operators' legal hold. The erasure itself is the job's (job.ts).
 *
 * A request is made by the signed-in person with their current password (checked and counted as a
 * sign-in is), after a recent step-up when the account has a second factor. In one transaction,
 * under the account's row lock (which a sign-in's session creation also takes): the request is
 * recorded (pending, due GDPR_ERASURE_GRACE_DAYS later), every session and refresh family of the
 * account ends, the request log gets an `erasure` row, and GDPR_ERASURE_REQUESTED is audited; from
 * then on a sign-in with the right credentials answers 403 ACCOUNT_ERASURE_PENDING (gate.ts).
 *
 * Cancel: with the notice's one-click token, or with the username and password (the sign-in's
 * counters and lockout; an unknown username answers exactly as a wrong password). No second
 * factor is asked for the cancel: it only puts back what the person had (signing in afterwards
 * asks the factor as always), the person may have lost the factor's device meanwhile, and
 * whoever cancels in their place is told on every contact, so the person can ask again.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { keepAnAdmin, ADMIN_ROLE } from '../../admin/lifecycle.js';
import type { AuditContext, AuditLog } from '../../audit/service.js';
import type { PasswordHasher } from '../../credentials/hashing.js';
import { confirmCurrentPassword, confirmSecret, type ReauthDeps } from '../../credentials/reauth.js';
import type { Mailer } from '../../mail/mailer.js';
import type { FactorStore } from '../../mfa/factors.js';
import type { OtpService } from '../../mfa/otp/service.js';
import type { BackgroundWork } from '../../platform/background.js';
import type { Clock } from '../../platform/clock.js';
import type { Config } from '../../platform/config.js';
import type { Hasher } from '../../platform/crypto/field-cipher.js';
import type { Db } from '../../platform/db/database.js';
import type { AuthContext, Who } from '../../sessions/guard.js';
import type { SessionService } from '../../sessions/service.js';
import { lockUserRow, type UserRow, type UserStore } from '../../users/store.js';
import type { GdprExportService } from '../export/service.js';
import { ErasureErrors as E } from './errors.js';
import { erasureMail, erasureSms, type ErasureNotice } from './notices.js';
import { view, type ErasureRow, type ErasureStore, type PendingErasure } from './store.js';

export interface ErasureServiceDeps extends ReauthDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'erasure' | 'signin' | 'rateLimits'>;
  users: UserStore;
  audit: AuditLog;
  sessions: SessionService;
  factors: FactorStore;
  gdprExport: Pick<GdprExportService, 'requireRecentAuthentication'>;
  hasher: PasswordHasher;
  mailer: Mailer;
  otp: OtpService;
  background: BackgroundWork;
  store: ErasureStore;
  /** Keyed hash of a cancel token. */
  cancelTokens: Hasher;
}

export interface Requested {
  erasure_id: string;
  requested_at: string;
  erase_after: string;
  sessions_ended: number;
}

const DAY = 86_400_000;

export class ErasureService {
  constructor(private readonly d: ErasureServiceDeps) {}

  /** The signed-in person asks for their account to be erased. */
  async request(auth: AuthContext, user: UserRow, password: string, ctx: AuditContext): Promise<Requested> {
    const d = this.d;
    if (user.is_service_account) throw E.ERASURE_NOT_ALLOWED_SERVICE_ACCOUNT();
    if ((await d.factors.active(user.id)).length > 0) await d.gdprExport.requireRecentAuthentication(auth);
    await confirmCurrentPassword(d, user, password, ctx, 'gdpr_erasure');
    const token = `erx_${randomBytes(32).toString('base64url')}`;
    const { row, ended } = await d.db.transaction().execute(async (trx) => {
      await lockUserRow(trx, user.id);
      const pending = await d.store.pendingOf(user.id, trx);
      if (pending) throw E.ERASURE_ALREADY_PENDING({ requested_at: new Date(pending.requested_at).toISOString(), erase_after: new Date(pending.erase_after).toISOString() });
      const roles = (await d.users.grants(user.id, trx)).roles;
      if (roles.includes(ADMIN_ROLE) && user.is_active) await keepAnAdmin(trx, user.id);
      const at = new Date(d.clock.now());
      const row = await d.store.insert(trx, { userId: user.id, userUuid: user.uuid, at, eraseAfter: new Date(at.getTime() + d.config.erasure.graceDays * DAY), tokenHash: d.cancelTokens.hex(token) });
      const ended = await d.sessions.endAllForUser(trx, user.id, 'erasure_requested');
      await logRequest(trx, user, 'requested', ctx.channel ?? null, { sessions_ended: ended.length }, at);
      await d.audit.record({
        ...ctx, eventType: 'GDPR_ERASURE_REQUESTED', status: 'SUCCESS', userId: user.uuid, username: user.username,
        details: { erasure_id: row.id, erase_after: new Date(row.erase_after).toISOString(), grace_days: d.config.erasure.graceDays, sessions_ended: ended.length },
      }, trx);
      return { row, ended };
    });
    await d.sessions.announce(ended);
    const base = d.config.erasure.cancelUrl;
    this.notify(user, 'requested', row, base === undefined ? undefined : `${base}#${token}`);
    return { erasure_id: row.id, requested_at: new Date(row.requested_at).toISOString(), erase_after: new Date(row.erase_after).toISOString(), sessions_ended: ended.length };
  }

  /** The notice's one-click cancel: 404 ERASURE_NOT_FOUND for a token that names no pending erasure (used, erased, unknown). */
  async cancelWithToken(token: string, ctx: AuditContext): Promise<PendingErasure> {
    const row = await this.d.store.byToken(this.d.cancelTokens.hex(token));
    if (!row) throw E.ERASURE_NOT_FOUND();
    return this.cancel(row, 'token', ctx);
  }

  /**
   * Cancel with the account's sign-in credentials: the sign-in's rate, in-flight bound and
   * lockout counters; an unknown username gets a dummy comparison and the same 401.
   */
  async cancelWithCredentials(username: string, password: string, ctx: AuditContext): Promise<PendingErasure> {
    const d = this.d;
    const user = await d.users.findByLogin(username);
    const key = d.attempts.subjectKey(user?.id, username);
    await confirmSecret(d, {
      who: { userId: user?.uuid, username: user?.username ?? username }, key, boundKey: true,
      verify: () => (user ? d.credentials.verifyCurrent(user.id, password, key) : d.hasher.verify(password, null, key)),
      reason: 'invalid_credentials', message: 'The username or password is incorrect.',
    }, ctx, 'gdpr_erasure_cancel');
    const row = user ? await d.store.pendingOf(user.id) : undefined;
    if (!row) throw E.ERASURE_NOT_FOUND();
    return this.cancel(row, 'credentials', ctx);
  }

  /** Ends a pending request as cancelled; of parallel cancels (or a cancel and the job) exactly one wins. */
  private async cancel(row: ErasureRow, via: 'token' | 'credentials', ctx: AuditContext): Promise<PendingErasure> {
    const d = this.d;
    const user = (await d.users.findById(row.user_id))!;
    const ended = await d.db.transaction().execute(async (trx) => {
      const out = await d.store.end(trx, row.id, 'cancelled', via, new Date(d.clock.now()));
      if (!out) throw E.ERASURE_NOT_FOUND();
      await d.audit.record({ ...ctx, eventType: 'GDPR_ERASURE_CANCELLED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { erasure_id: row.id, via } }, trx);
      return out;
    });
    this.notify(user, 'cancelled', ended);
    return view(ended);
  }

  async listPending(limit: number): Promise<PendingErasure[]> {
    return this.d.store.listPending(limit);
  }

  /** Places (`reason`) or releases (null) an operator's legal hold; audited with the operator. */
  async hold(id: string, reason: string | null, who: Who): Promise<PendingErasure> {
    const d = this.d;
    return d.db.transaction().execute(async (trx) => {
      const row = await d.store.get(id, trx);
      if (!row || row.state !== 'pending') throw E.ERASURE_NOT_FOUND();
      const at = new Date(d.clock.now());
      const out = await d.store.setHold(trx, id, reason === null ? null : { reason, by: who.actor.uuid, at });
      if (!out) throw E.ERASURE_HOLD_CONFLICT({ held: row.held_at !== null });
      await d.audit.record({
        ...who.context, eventType: reason === null ? 'GDPR_ERASURE_RELEASED' : 'GDPR_ERASURE_HELD', status: 'SUCCESS', userId: row.user_uuid, username: null,
        details: { erasure_id: id, ...(reason === null ? { hold_reason: row.hold_reason } : { reason }), by: who.actor.username, by_id: who.actor.uuid },
      }, trx);
      return view(out);
    });
  }

  /** Tells the account's email and phone, in its language, in the background (never delays the answer). */
  private notify(user: UserRow, notice: ErasureNotice, row: ErasureRow, cancelLink?: string): void {
    const d = this.d;
    const input = { notice, language: user.language, username: user.username, fullName: user.full_name, eraseAfter: new Date(row.erase_after), cancelLink };
    const failed = (via: string) => (err: unknown): void => d.log.warn({ err, user_id: user.uuid, notice, via }, 'erasure notice not delivered');
    if (d.mailer.configured && user.email) d.background.track(d.mailer.send(erasureMail(user.email, input)).catch(failed('email')));
    if (user.phone) d.background.track(d.otp.sendRecoveryNotice(user, erasureSms(input), `erasure-${notice}-${row.id}`).catch(failed('sms')));
  }
}

/** The request log's row of an erasure (`format`: requested or erased), for the regulator: what, never data. */
export async function logRequest(trx: Db, user: Pick<UserRow, 'id' | 'uuid'>, format: 'requested' | 'erased', channel: string | null, sections: Record<string, number>, at: Date): Promise<void> {
  await trx.insertInto('gdpr_requests').values({
    user_id: user.id, user_uuid: user.uuid, kind: 'erasure', format, channel, encrypted: false, sections: JSON.stringify(sections), bytes: 0, requested_at: at,
  }).execute();
}
