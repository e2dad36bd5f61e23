/**
 * MFA reset with administrator approval (issue 4 section 5).
 *
 * A user who lost their second factor asks for a reset, proving who they are with the password
 * and a factor they still hold (a session with `mfa_completed`), or with the password and their
 * security questions (a single-use proof token). An administrator holding `approve_mfa_reset`
 * approves (every factor and backup code removed, every session ended) or one holding
 * `reject_mfa_reset` rejects; nobody decides their own request (four eyes). A pending request
 * lapses after `MFA_RESET_EXPIRY_HOURS`; it is marked `expired` lazily, in the transaction of the
 * next listing or decision, or by `expireDue()` from a background job. Enrolling a factor again
 * completes an approved request (FactorStore.activate).
 *
 * Every transition is audited in its own transaction; the user's email notice leaves after
 * commit, and a refused mail is logged and audited but never undoes the decision. An approval
 * removes the push-approval factor and denies its pending requests (`factor_removed`); once it
 * commits, the pages held on them (the long poll of `complete`) are woken at once, on every node.
 */
import type { AuditEvent } from '../../audit/service.js';
import { MailDeliveryError } from '../../mail/mailer.js';
import { maskEmail } from '../../mail/templates.js';
import type { EventBus } from '../../platform/db/bus.js';
import type { Db } from '../../platform/db/database.js';
import type { MfaResetStatus } from '../../platform/db/schema.js';
import type { AppError } from '../../platform/errors.js';
import { removePushApprovalFactor } from '../../push-approval/store.js';
import { settledNotices } from '../../push-approval/waiters.js';
import type { AuthContext } from '../../sessions/guard.js';
import { SignInErrors } from '../../signin/errors.js';
import { TokenErrors } from '../../tokens/errors.js';
import type { UserRow } from '../../users/store.js';
import { MFA_RESET_PROOF_PURPOSE, type MfaContext } from '../challenge.js';
import type { MfaDeps } from '../deps.js';
import { MfaResetErrors } from './errors.js';
import { resetNoticeMail, type ResetNotice } from './mail.js';
import { ResetStore, type ResetProof, type ResetRow } from './store.js';

/** The second factors' services, and the bus that wakes the pages waiting on a push approval the reset denies. */
export type MfaResetDeps = MfaDeps & { bus: Pick<EventBus, 'publish'> };

/** What the requester offers as proof of identity. */
export type ResetProofInput = { kind: 'session'; auth: AuthContext; user: UserRow } | { kind: 'token'; token: string };

/** The administrator deciding. */
export interface ResetActor {
  uuid: string;
  username: string | null;
}

/** A request as the API shows it. */
export interface ResetView {
  request_id: string;
  /** `id` is the uuid (the one public id); `uuid` the same, kept for older clients. */
  user: { id: string; uuid: string; username: string };
  status: MfaResetStatus;
  reason: string;
  proof: string;
  requested_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  decision_note: string | null;
  completed_at: string | null;
}

const iso = (d: Date | string): string => new Date(d).toISOString();
const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));

/** The API shape of a stored request. */
export function present(r: ResetRow): ResetView {
  return {
    request_id: r.id, user: { id: r.user_uuid, uuid: r.user_uuid, username: r.username }, status: r.status, reason: r.reason, proof: r.proof,
    requested_at: iso(r.requested_at), expires_at: iso(r.expires_at), decided_at: isoOrNull(r.decided_at), decided_by: r.decided_by,
    decision_note: r.decision_note, completed_at: isoOrNull(r.completed_at),
  };
}

const EVENT: Record<ResetNotice, AuditEvent> = {
  requested: 'MFA_RESET_REQUESTED', approved: 'MFA_RESET_APPROVED', rejected: 'MFA_RESET_REJECTED', expired: 'MFA_RESET_EXPIRED',
};

/** A notice to send once the transaction that made it true has committed. */
interface Notice {
  user: UserRow;
  notice: ResetNotice;
  requestId: string;
  ctx?: MfaContext;
}

export class MfaResetService {
  private readonly store = new ResetStore();

  constructor(private readonly deps: MfaResetDeps) {}

  /**
   * Opens a pending request for the proven user. A proof token is spent in the same
   * transaction (its jti denylisted; the insert decides a parallel replay: 401 TOKEN_REVOKED);
   * a second open request is 409 MFA_RESET_ALREADY_OPEN (the unique index decides).
   */
  async request(proof: ResetProofInput, reason: string, ctx: MfaContext): Promise<{ request_id: string; status: 'pending'; requested_at: string; expires_at: string }> {
    const d = this.deps;
    const { user, label, spend } = await this.prove(proof);
    const now = new Date(d.clock.now());
    const expiresAt = new Date(now.getTime() + d.config.mfa.resetRequestTtlHours * 3_600_000);
    const { id, notices } = await d.db.transaction().execute(async (trx) => {
      // Single use; spent in this transaction, so a refused request (409) leaves the token good.
      if (spend && !(await d.denylist.spend(spend.jti, spend.exp * 1000, 'mfa_reset_proof_used', trx))) throw TokenErrors.TOKEN_REVOKED();
      const lapsed = await this.expire(trx, now, user.id); // a lapsed request must not block a new one
      const opened = await this.store.open(trx, { userId: user.id, reason, proof: label, now, expiresAt });
      if (!opened) throw MfaResetErrors.MFA_RESET_ALREADY_OPEN();
      await d.challenges.audit('MFA_RESET_REQUESTED', 'SUCCESS', user, ctx, null, { request_id: opened.id, proof: label, expires_at: expiresAt.toISOString() }, trx);
      return { id: opened.id, notices: [...lapsed, { user, notice: 'requested' as const, requestId: opened.id, ctx }] };
    });
    await this.notifyAll(notices);
    return { request_id: id, status: 'pending', requested_at: now.toISOString(), expires_at: expiresAt.toISOString() };
  }

  /** One page of requests in `status` (pending ones past their expiry are expired first). */
  async list(f: { status: MfaResetStatus; limit: number; offset: number }): Promise<{ requests: ResetView[]; total: number }> {
    await this.expireDue();
    const { rows, total } = await this.store.list(this.deps.db, f);
    return { requests: rows.map(present), total };
  }

  /** Expires every pending request past its `expires_at`, audits and notifies; returns how many. */
  async expireDue(): Promise<number> {
    const now = new Date(this.deps.clock.now());
    const notices = await this.deps.db.transaction().execute((trx) => this.expire(trx, now));
    await this.notifyAll(notices);
    return notices.length;
  }

  /** Approves: removes every factor and backup code, ends every session of the user. */
  approve(requestId: string, actor: ResetActor, note: string | null, ctx: MfaContext): Promise<ResetView> {
    return this.decide(requestId, 'approved', actor, note, ctx);
  }

  /** Rejects: the user's factors stay as they are. */
  reject(requestId: string, actor: ResetActor, reason: string, ctx: MfaContext): Promise<ResetView> {
    return this.decide(requestId, 'rejected', actor, reason, ctx);
  }

  /**
   * One transaction: expire what is due, find the request (404), refuse the requester's own
   * (403), then the conditional update (409 unless still pending), then the side effects. A
   * refusal is returned rather than thrown so the expiries and the refusal's audit entry commit.
   */
  private async decide(requestId: string, status: 'approved' | 'rejected', actor: ResetActor, note: string | null, ctx: MfaContext): Promise<ResetView> {
    const d = this.deps;
    const now = new Date(d.clock.now());
    const event = status === 'approved' ? 'MFA_RESET_APPROVED' : 'MFA_RESET_REJECTED';
    const who = { request_id: requestId, decided_by: actor.uuid, decided_by_username: actor.username };
    const out = await d.db.transaction().execute(async (trx): Promise<{ notices: Notice[]; error?: AppError; ended: string[]; denied?: string[] }> => {
      const notices = await this.expire(trx, now);
      const row = await this.store.find(trx, requestId);
      if (!row) return { notices, error: MfaResetErrors.MFA_RESET_NOT_FOUND(), ended: [] };
      const user = (await d.users.findById(row.user_id, trx))!;
      if (row.user_uuid === actor.uuid) {
        await d.challenges.audit(event, 'FAILURE', user, ctx, null, { ...who, error_code: 'MFA_RESET_SELF_APPROVAL' }, trx);
        return { notices, error: MfaResetErrors.MFA_RESET_SELF_APPROVAL(), ended: [] };
      }
      if (!(await this.store.decide(trx, requestId, { status, now, by: actor.uuid, note }))) {
        const current = (await this.store.find(trx, requestId))!.status; // re-read: a parallel decision may have committed
        await d.challenges.audit(event, 'FAILURE', user, ctx, null, { ...who, error_code: 'MFA_RESET_NOT_PENDING', status: current }, trx);
        return { notices, error: MfaResetErrors.MFA_RESET_NOT_PENDING({ status: current }), ended: [] };
      }
      let ended: string[] = [];
      let removed: string[] = [];
      let denied: string[] = [];
      if (status === 'approved') {
        removed = await d.factors.active(user.id, trx);
        // The push-approval factor first, for the requests it denies (removeAll finds it gone).
        denied = (await removePushApprovalFactor(trx, user.id, now)).denied;
        await d.factors.removeAll(trx, user.id, now);
        ended = await d.sessions.endAllForUser(trx, user.id, 'admin');
      }
      const effects = status === 'approved' ? { factors_removed: removed, sessions_ended: ended.length } : {};
      await d.challenges.audit(event, 'SUCCESS', user, ctx, null, { ...who, ...effects }, trx);
      return { notices: [...notices, { user, notice: status, requestId, ctx }], ended, denied };
    });
    await this.settled(out.denied ?? []);
    await d.sessions.announce(out.ended);
    await this.notifyAll(out.notices);
    if (out.error) throw out.error;
    return present((await this.store.find(d.db, requestId))!);
  }

  /**
   * Tells every node (this one first) that these push-approval requests left `pending`, so the
   * pages held on them answer now (403 PUSH_APPROVAL_DENIED, `factor_removed`) rather than when
   * their wait ends. After the commit; a lost notice only delays such a page to the end of its wait.
   */
  private async settled(requestIds: readonly string[]): Promise<void> {
    for (const notice of settledNotices(requestIds)) {
      await this.deps.bus.publish(notice).catch((err: unknown) => this.deps.log.warn({ err }, 'push-approval requests denied by an MFA reset not announced; held pages see it when their wait ends'));
    }
  }

  /** Who the proof stands for, how they proved it, and the proof token to spend (if any). */
  private async prove(proof: ResetProofInput): Promise<{ user: UserRow; label: ResetProof; spend?: { jti: string; exp: number } }> {
    const d = this.deps;
    if (proof.kind === 'session') {
      // Password plus a factor: only a session that passed a second factor (or a step-up) counts.
      if (!proof.auth.session.mfaCompleted) throw MfaResetErrors.MFA_RESET_PROOF_REQUIRED();
      return { user: proof.user, label: 'password_and_factor' };
    }
    const claims = await d.tokens.verify(proof.token, 'reset');
    if (claims.purpose !== MFA_RESET_PROOF_PURPOSE) throw TokenErrors.TOKEN_INVALID({ reason: 'not an MFA reset proof token' });
    const user = await d.users.findByUuid(claims.user_id);
    if (!user) throw TokenErrors.TOKEN_INVALID();
    if (!user.is_active) throw SignInErrors.ACCOUNT_DISABLED();
    return { user, label: 'password_and_security_questions', spend: { jti: claims.jti, exp: claims.exp } };
  }

  /** Marks due requests expired inside `trx` and audits each; returns the notices to send after commit. */
  private async expire(trx: Db, now: Date, userId?: number): Promise<Notice[]> {
    const out: Notice[] = [];
    for (const r of await this.store.expireDue(trx, now, userId)) {
      const user = (await this.deps.users.findById(r.user_id, trx))!;
      await this.deps.audit.record({ eventType: 'MFA_RESET_EXPIRED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { request_id: r.id } }, trx);
      out.push({ user, notice: 'expired', requestId: r.id });
    }
    return out;
  }

  private async notifyAll(notices: Notice[]): Promise<void> {
    for (const n of notices) await this.notify(n);
  }

  /**
   * Emails the user about a transition (when email is configured and the user has an address)
   * and audits the delivery under the transition's event with `details.notification`. A refused
   * mail is logged and audited as FAILURE; the transition stands.
   */
  private async notify({ user, notice, requestId, ctx }: Notice): Promise<void> {
    const d = this.deps;
    if (!d.mailer.configured || !user.email) return;
    const recipient = maskEmail(user.email);
    let status: 'SUCCESS' | 'FAILURE';
    let notification: Record<string, unknown>;
    try {
      const { messageId } = await d.mailer.send(resetNoticeMail({ to: user.email, username: user.username, fullName: user.full_name }, notice));
      status = 'SUCCESS';
      notification = { channel: 'email', status: 'SENT', recipient, message_id: messageId };
    } catch (err) {
      const reason = err instanceof MailDeliveryError ? err.reason : 'unknown';
      d.log.warn({ user_id: user.uuid, request_id: requestId, notice, reason }, 'MFA reset notice not delivered');
      status = 'FAILURE';
      notification = { channel: 'email', status: 'FAILURE', recipient, reason };
    }
    await d.audit.record({
      eventType: EVENT[notice], status, userId: user.uuid, username: user.username, ip: ctx?.ip ?? null,
      deviceFingerprint: ctx?.fingerprint || null, userAgent: ctx?.userAgent ?? null, channel: ctx?.channel ?? null,
      details: { request_id: requestId, notification },
    });
  }
}
