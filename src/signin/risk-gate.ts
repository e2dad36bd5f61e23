/**
 * The risk response step of the sign-in pipeline: what the response policy (src/risk/decisions)
 * decides about an attempt, carried out in one place for every method and channel.
 *
 * - Before anything is compared: a network blocked for credential stuffing is refused
 *   (429 ADDRESS_BLOCKED), so a right password and a wrong one get the same answer.
 * - A wrong secret: a rule may block the client's network (this attempt already answers 429
 *   ADDRESS_BLOCKED, as a right password would). Nothing else: a wrong password never locks
 *   through the policy (src/risk/decisions/policy.ts says why).
 * - A right secret: refused (403 RISK_TOO_HIGH), the account locked (its password and its PIN:
 *   429 ACCOUNT_LOCKED), or the network blocked, each audited and told to the risk listeners (a
 *   security alert and the holder's notice); or a second factor asked for whatever the account
 *   holds (`step_up`, for the second-factor step to act on). A lock and a block that both apply
 *   both happen, and the answer is the block's: from a blocked network every answer is the same.
 */
import { auditContext, type AuditLog } from '../audit/service.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { retryLater, type AppError } from '../platform/errors.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { AttemptAudit, LoginAttempts } from '../policy/lockout.js';
import { RiskDecisionErrors } from '../risk/decisions/errors.js';
import type { Decided, RiskClient, RiskService } from '../risk/service.js';
import type { RiskAssessment } from '../risk/types.js';
import { pinKeyOf } from '../pins/service.js';
import type { UserRow } from '../users/store.js';

/** The parts of a sign-in's client context (ClientContext of pipeline.ts) this step reads. */
type ClientContext = RiskClient & { userAgent: string; risk?: RiskAssessment };

export interface RiskGateDeps {
  db: Db;
  clock: Clock;
  risk: RiskService;
  attempts: LoginAttempts;
  audit: AuditLog;
  metrics: Pick<Metrics, 'accountLocks'>;
}

export class RiskGate {
  constructor(private readonly deps: RiskGateDeps) {}

  /** Throws 429 ADDRESS_BLOCKED while the client's network is blocked. No database read. */
  checkAddress(ctx: ClientContext): void {
    const until = this.deps.risk.blockedUntil(ctx);
    if (until !== null) throw this.blocked(until);
  }

  /**
   * A wrong secret whose failure signals a rule answers: 429 ADDRESS_BLOCKED when it blocks the
   * client's network, to answer instead of the wrong secret's (null: none); `who` is the failure's audit context.
   */
  async afterFailure(risk: RiskAssessment, ctx: ClientContext, who: AttemptAudit): Promise<AppError | null> {
    const decided = await this.deps.risk.decide(risk, ctx, true);
    return decided.blockAddress ? this.block(decided, ctx, who) : null;
  }

  /**
   * A right secret of `user` (`ctx.risk` its assessment). Throws when the policy refuses it;
   * true when a second factor must be asked for whatever the account holds.
   */
  async afterSuccess(user: UserRow, ctx: ClientContext, outcome: (o: string) => void): Promise<boolean> {
    const d = this.deps;
    if (!ctx.risk) return false;
    const decided = await d.risk.decide(ctx.risk, ctx);
    if (decided.answer === 'allow' && !decided.blockAddress) return false;
    if (decided.answer === 'step_up' && !decided.blockAddress) return true;
    const who = { ...auditContext(ctx), userId: user.uuid, username: user.username };
    let error: AppError | null = null;
    if (decided.answer === 'lock_account') {
      outcome('locked');
      error = await this.lock(user.id, decided, ctx, who);
    }
    if (decided.blockAddress) {
      if (error === null) outcome('address_blocked');
      error = await this.block(decided, ctx, who);
    } else if (error === null) {
      outcome('risk_refused');
      await d.audit.record({ ...who, eventType: 'RISK_SIGN_IN_REFUSED', status: 'FAILURE', details: { reason: 'score', rules: decided.rules } });
      error = RiskDecisionErrors.RISK_TOO_HIGH({ reason: 'score' });
    }
    await d.risk.announce('refused', ctx.risk, user, ctx, null, d.db);
    throw error;
  }

  private async block(decided: Decided, ctx: ClientContext, who: AttemptAudit): Promise<AppError> {
    const d = this.deps;
    const until = decided.blockedUntil ?? d.risk.blockedUntil(ctx);
    if (decided.blockedUntil !== null) {
      await d.audit.record({ ...who, eventType: 'RISK_ADDRESS_BLOCKED', status: 'SUCCESS', details: { blocked_until: new Date(decided.blockedUntil).toISOString(), rules: decided.rules } });
    }
    // An internal address or a gateway cannot be blocked: the attempt alone is refused.
    return this.blocked(until ?? d.clock.now() + 1000);
  }

  /** Locks the account's password and PIN sign-ins (the two counters a lock can be on). */
  private async lock(userId: number, decided: Decided, ctx: ClientContext, who: AttemptAudit): Promise<AppError> {
    const d = this.deps;
    const until = d.clock.now() + decided.lockMinutes * 60_000;
    const key = d.attempts.userKey(userId);
    await d.attempts.lockFor(key, until);
    await d.attempts.lockFor(pinKeyOf(key), until);
    await d.audit.record({ ...who, eventType: 'ACCOUNT_LOCKED', status: 'SUCCESS', details: { reason: 'risk', locked_until: new Date(until).toISOString(), rules: decided.rules } });
    d.metrics.accountLocks.inc({ channel: ctx.channel, reason: 'risk' });
    return d.attempts.lockedError(until);
  }

  private blocked(until: number): AppError {
    return retryLater(RiskDecisionErrors.ADDRESS_BLOCKED, (until - this.deps.clock.now()) / 1000);
  }
}
