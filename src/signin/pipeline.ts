/**
 * The one sign-in pipeline (ARCHITECTURE 4): every channel and every strategy goes through
 *
 *   rate limit -> lockout -> identify (strategy) -> risk -> account and password state
 *   -> access policy -> second factor -> tokens + session (+ risk profile) -> audit
 *
 * Access policy and MFA are hooks other modules provide (src/signin/module.ts names them).
 *
 * Risk (src/risk): the account's history is read while the password is compared; once it proved
 * right, the assessment rides on the client context (`ctx.risk`), so every audit entry of the
 * sign-in written with that context carries its `risk_score` and `suspicious_indicators` (the
 * FAILED_LOGIN_ATTEMPT of a wrong one carries the failure signals). The profile is updated inside
 * the session's transaction: no extra commit. Listeners (`risk.onAssessed`) hear of what raised.
 */
import { randomUUID } from 'node:crypto';
import { auditContext, type AuditLog } from '../audit/service.js';
import type { CredentialService } from '../credentials/service.js';
import { CredentialErrors } from '../credentials/errors.js';
import type { Config } from '../platform/config.js';
import type { Clock } from '../platform/clock.js';
import type { FieldCipher } from '../platform/crypto/field-cipher.js';
import { sql, type Insertable } from 'kysely';
import type { Db } from '../platform/db/database.js';
import type { RefreshTokensTable } from '../platform/db/schema.js';
import type { AppError } from '../platform/errors.js';
import type { Metrics } from '../platform/observability/metrics.js';
import { ipInFlightKey, type InFlightLimit } from '../policy/in-flight.js';
import type { AttemptLimits, LoginAttempts } from '../policy/lockout.js';
import type { ReportedLocation, SessionPolicy } from '../sessions/guard.js';
import type { Session, SessionLimits, SessionService } from '../sessions/service.js';
import type { TokenService } from '../tokens/service.js';
import type { RiskService } from '../risk/service.js';
import type { AssessedOutcome, RiskAssessment } from '../risk/types.js';
import { grantsOf, type Grants, type UserRow, type UserStore } from '../users/store.js';
import type { PasswordState } from '../credentials/service.js';
import { SignInErrors } from './errors.js';
import { admissionOf, erasurePendingError, pendingErasureOf } from '../gdpr/erasure/gate.js';
import { securityLockedError } from '../risk/responses/lock.js';
import type { SignInStrategy, StrategyName, Subject } from './strategy.js';
import { RiskGate } from './risk-gate.js';

export interface ClientContext {
  ip: string;
  ipHash: string;
  /** Hash of the client's network (src/policy/network.ts): what the in-flight bound counts. Rate limits are the routes' (src/policy/route-limits.ts). */
  networkHash: string;
  fingerprint: string;
  userAgent: string;
  channel: string;
  /** Where the device says it is (agent sign-in); fields are checked by the access policy. */
  location?: ReportedLocation;
  /** The sign-in's risk evaluation, once made: audit entries written with this context carry it. */
  risk?: RiskAssessment;
}

export interface PolicyCheckOptions {
  /** The request finishing a second factor: rules that need the sign-in's own evidence (a location) were checked at the password step. */
  secondStep?: boolean;
}

/** Ends with a 403 when the user may not sign in (or go on) on this channel, from this place, now. */
export interface AccessPolicyCheck extends SessionPolicy {
  check(user: UserRow, grants: Grants, ctx: ClientContext, opts?: PolicyCheckOptions): Promise<void>;
  /** Whether what the channel allows depends on the user's roles (else a check may pass none). */
  rolesMatter(channel: string): boolean;
  /** The channel's failed-attempt limit and lock length (what it leaves unset: the server's). */
  attemptLimits(channel: string): AttemptLimits;
  /** A new session's inactivity timeout and per-channel session limit for a holder of `roles`. */
  sessionLimits(channel: string, roles: readonly string[]): SessionLimits;
}

export type PasswordChangeReason = 'temporary_password' | 'password_expired';

/** What follows a verified second factor instead of the session: a forced password change. */
export interface AfterSecondFactor {
  next: 'password_change';
  reason: PasswordChangeReason;
}

/**
 * Returns a 2FA_REQUIRED (or MFA_SETUP_INCOMPLETE) error when a second factor must follow.
 * With `after`, only an enrolled factor is asked for (no set-up prompt), and verifying it
 * leads to `after` rather than to a session.
 */
export interface SecondFactorGate {
  /** `riskStepUp`: the risk response policy asks for a second factor whatever the account holds (a code to a contact on file when none is enrolled). */
  challenge(user: UserRow, grants: Grants, ctx: ClientContext, strategy: string, after?: AfterSecondFactor, origin?: SessionOrigin, riskStepUp?: boolean): Promise<AppError | null>;
  /** The refusal (audited 403 POLICY_RESTRICTED, rule `factor`) of a proof that is a second factor by itself when the channel's policy does not accept `method`; null: accepted. */
  refusesFactor(user: UserRow, grants: Grants, ctx: ClientContext, method: string): Promise<AppError | null>;
}

export interface SignInResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
  user: { id: number; uuid: string; active: boolean };
  permissions: string[];
  actions: string[];
  session_id: string;
  user_profile: {
    username: string;
    email: string | null;
    phone: string | null;
    full_name: string | null;
    roles: string[];
    channel: string;
    mfa_completed: boolean;
    last_login_at: string | null;
    password_expires_at: string | null;
  };
}

/** What a completed sign-in gives its route: the body, and the session's transport key. */
export interface SignInResult {
  body: SignInResponse;
  sessionKey: Buffer;
}

/** A proven identity, admitted by the access policy: what `finish` needs. */
export interface Identified {
  user: UserRow;
  grants: Grants;
  /** The local password's state, when the strategy checked one. */
  password?: PasswordState;
  /** The password lives elsewhere (a directory, an IdP): it never expires here. */
  passwordElsewhere: boolean;
  /** The risk evaluation made when the identity was proven (absent: evaluation is off, or `finish` makes it). */
  risk?: RiskAssessment;
}

/**
 * What a sign-in method keeps about a session it opens (SAML: the IdP session it came from, for
 * single logout). Carried in the 2FA token when a second factor comes between, and written by
 * the method's `OriginWriter` in the session's transaction.
 */
export type SessionOrigin = Record<string, string | null>;
export type OriginWriter = (trx: Db, session: Session, user: UserRow, origin: SessionOrigin) => Promise<void>;

export interface FinishOptions {
  origin?: SessionOrigin;
}

export const SUB_CONTEXT = 'jwt.sub';
const PASSWORD_CHANGE_PURPOSE = 'password_change';
export { PASSWORD_CHANGE_PURPOSE };

export interface PipelineDeps {
  db: Db;
  clock: Clock;
  config: Config;
  users: UserStore;
  credentials: CredentialService;
  tokens: TokenService;
  sessions: SessionService;
  attempts: LoginAttempts;
  inFlight: InFlightLimit;
  audit: AuditLog;
  metrics: Metrics;
  subCipher: FieldCipher;
  accessPolicy: AccessPolicyCheck;
  secondFactor: SecondFactorGate;
  risk: RiskService;
}

export class SignInPipeline {
  private readonly originWriters = new Map<string, OriginWriter>();
  private readonly riskGate: RiskGate;

  constructor(private readonly deps: PipelineDeps) {
    this.riskGate = new RiskGate(deps);
  }

  /** The module of sign-in method `strategy` writes what it keeps about the sessions it opens. */
  registerOrigin(strategy: StrategyName, write: OriginWriter): void {
    if (this.originWriters.has(strategy)) throw new Error(`a session origin writer for ${strategy} is already registered`);
    this.originWriters.set(strategy, write);
  }

  async signIn<I>(strategy: SignInStrategy<I>, input: I, ctx: ClientContext, opts: FinishOptions = {}): Promise<SignInResult> {
    return this.finish(strategy, await this.identify(strategy, input, ctx), ctx, opts);
  }

  /**
   * The first half of a sign-in: rate limit, lockout, the strategy's check, account state and
   * access policy. What it returns is a proven identity that `finish` turns into a session,
   * now or later (a SAML browser sign-in finishes when the client exchanges its one-time code).
   */
  async identify<I>(strategy: SignInStrategy<I>, input: I, ctx: ClientContext): Promise<Identified> {
    const d = this.deps;
    const outcome = this.outcome(strategy.name, ctx.channel);

    const subject = await strategy.subject(input);
    // A network blocked for credential stuffing: refused before anything is compared.
    try {
      this.riskGate.checkAddress(ctx);
    } catch (err) {
      outcome('address_blocked');
      throw err;
    }
    // A bounded number of checks per address in flight (issue 9, section 3), then the attempt is
    // reserved before the strategy compares anything (section 1): both before any bcrypt.
    let leave: () => void;
    try {
      leave = d.inFlight.enter([ipInFlightKey(ctx.networkHash)]);
    } catch (err) {
      outcome('rate_limited');
      throw err;
    }
    // The account's history is read while the password is compared (a bcrypt check takes far
    // longer than the read), so the evaluation adds no round trip to a sign-in.
    const early = d.risk.enabled && subject.user ? { userId: subject.user.id, read: d.risk.prior(subject.user, ctx) } : null;
    const attempt = await d.attempts.attempt(subject.key, () => strategy.authenticate(input, subject), d.accessPolicy.attemptLimits(ctx.channel)).finally(leave);
    if (attempt.kind !== 'ok') {
      const failed = attempt.kind === 'failed' || attempt.kind === 'locked' ? await this.assessFailure(subject, ctx) : ctx;
      const who = { ...auditContext(failed), userId: subject.user?.uuid, username: subject.identifier };
      const refused = await d.attempts.refusal(attempt, who, { reason: 'invalid_credentials', strategy: strategy.name });
      // The response policy: a stuffing network blocked from this attempt on.
      const responded = failed.risk && attempt.kind === 'failed' ? await this.riskGate.afterFailure(failed.risk, ctx, who) : null;
      outcome(attempt.kind === 'busy' ? 'rate_limited' : responded ? 'address_blocked' : refused ? 'locked' : 'invalid_credentials');
      if (failed.risk) d.risk.announceLater('failed', failed.risk, subject.user ?? null, ctx);
      throw responded ?? refused ?? SignInErrors.INVALID_CREDENTIALS({}, strategy.invalidMessage === undefined ? undefined : { message: strategy.invalidMessage });
    }
    const { user, password } = attempt.value;
    let risk: RiskAssessment | undefined;
    if (d.risk.enabled) {
      const prior = early?.userId === user.id ? await early.read : await d.risk.prior(user, ctx);
      risk = d.risk.assess(prior, ctx, strategy.passwordOf?.(input));
    }
    const grants = await this.admit(user, risk ? { ...ctx, risk } : ctx, outcome, attempt.value.grants);
    return { user, grants, password, passwordElsewhere: strategy.passwordElsewhere === true, risk };
  }

  /** A wrong secret: the failure signals, on a copy of the context its audit entries are written with. */
  private async assessFailure(subject: Subject, ctx: ClientContext): Promise<ClientContext> {
    if (!this.deps.risk.enabled) return ctx;
    return { ...ctx, risk: await this.deps.risk.assessFailure(subject.key, subject.user?.uuid ?? null, ctx) };
  }

  /**
   * `ctx` with the sign-in's risk assessment: the one it carries or `known`, else made now from a
   * fresh read (a sign-in finished in a later request: a second factor, a SAML code's exchange).
   */
  private async assessed(user: UserRow, ctx: ClientContext, known?: RiskAssessment): Promise<ClientContext> {
    const d = this.deps;
    const risk = ctx.risk ?? known ?? (d.risk.enabled ? d.risk.assess(await d.risk.prior(user, ctx), ctx) : undefined);
    return risk ? { ...ctx, risk } : ctx;
  }

  /** Tells the risk listeners of a sign-in that now waits for its second factor. */
  private async announceChallenge(challenge: AppError, user: UserRow, ctx: ClientContext): Promise<void> {
    const waiting: AssessedOutcome | null = challenge.code === '2FA_REQUIRED' || challenge.code === 'MFA_SETUP_INCOMPLETE' ? 'second_factor_required' : challenge.code === 'RISK_TOO_HIGH' ? 'refused' : null;
    if (waiting && ctx.risk) await this.deps.risk.announce(waiting, ctx.risk, user, ctx, null, this.deps.db);
  }

  /**
   * The second half: a second factor when one is due (its error carries the challenge), a forced
   * password change, else tokens and a session. `opts.onSession` writes what the strategy keeps
   * about the new session (SAML: its SessionIndex) in the session's transaction.
   */
  async finish(strategy: Pick<SignInStrategy<unknown>, 'name' | 'multiFactor'>, identified: Identified, client: ClientContext, opts: FinishOptions = {}): Promise<SignInResult> {
    const d = this.deps;
    const outcome = this.outcome(strategy.name, client.channel);
    const { user, grants, password } = identified;
    const ctx = await this.assessed(user, client, identified.risk);
    const riskStepUp = await this.riskGate.afterSuccess(user, ctx, outcome);
    // Read once, reused by the response (null: never expires, as a password kept elsewhere).
    let passwordExpiresAt: number | null | undefined = identified.passwordElsewhere ? null : undefined;
    let changeRequired: PasswordChangeReason | null = null;
    if (password) {
      passwordExpiresAt = password.expiresAt;
      const expired = password.expiresAt != null && password.expiresAt <= d.clock.now();
      if (user.must_change_password || expired) changeRequired = expired ? 'password_expired' : 'temporary_password';
    }

    // A proof that is two factors by itself (a passkey with user verification) is the second
    // factor too: the session completes with it, and a risk step-up is satisfied by it.
    if (strategy.multiFactor === true) {
      // The channel's accepted factors (`second_factor_methods`) bind this proof as well.
      const refused = await d.secondFactor.refusesFactor(user, grants, ctx, strategy.name);
      if (refused) {
        outcome(challengeOutcome(refused));
        throw refused;
      }
      const response = await this.complete(user, grants, ctx, { mfaCompleted: true, method: strategy.name, mfaMethod: strategy.name, passwordExpiresAt, origin: opts.origin });
      outcome('success');
      return response;
    }
    // An enrolled second factor comes before a forced password change: a temporary or expired
    // password alone must not reach the reset token (issue 9, section 6).
    const challenge = await d.secondFactor.challenge(user, grants, ctx, strategy.name, changeRequired ? { next: 'password_change', reason: changeRequired } : undefined, opts.origin, riskStepUp);
    if (challenge) {
      outcome(challengeOutcome(challenge));
      await this.announceChallenge(challenge, user, ctx);
      throw challenge;
    }
    if (changeRequired) {
      outcome('password_change_required');
      throw await this.passwordChangeRequired(user, ctx, changeRequired);
    }

    const response = await this.complete(user, grants, ctx, { mfaCompleted: false, method: strategy.name, passwordExpiresAt, origin: opts.origin });
    outcome('success');
    return response;
  }

  /**
   * The second factor `finish` would ask for, without finishing: the 401 2FA_REQUIRED (or 403
   * MFA_SETUP_INCOMPLETE, or POLICY_RESTRICTED) with its 2FA token bound to `ctx`, or null when
   * none is due (the SAML browser flow asks before it spends its code).
   */
  async secondFactorDue(strategy: Pick<SignInStrategy<unknown>, 'name'>, identified: Identified, client: ClientContext, opts: FinishOptions = {}): Promise<AppError | null> {
    const ctx = await this.assessed(identified.user, client, identified.risk);
    const riskStepUp = await this.riskGate.afterSuccess(identified.user, ctx, this.outcome(strategy.name, client.channel));
    const challenge = await this.deps.secondFactor.challenge(identified.user, identified.grants, ctx, strategy.name, undefined, opts.origin, riskStepUp);
    if (challenge) await this.announceChallenge(challenge, identified.user, ctx);
    return challenge;
  }

  private outcome(strategy: string, channel: string): (o: string) => void {
    return (o) => this.deps.metrics.signins.inc({ channel, strategy, outcome: o });
  }

  /**
   * 403 PASSWORD_CHANGE_REQUIRED with a reset token (ruling 11), audited: the answer to a
   * temporary or expired password once the user's identity (and second factor) is settled.
   */
  async passwordChangeRequired(user: UserRow, ctx: ClientContext, reason: PasswordChangeReason): Promise<AppError> {
    const d = this.deps;
    const reset = await d.tokens.issue('reset', { user_id: user.uuid, purpose: PASSWORD_CHANGE_PURPOSE });
    await d.audit.record({ ...auditContext(ctx), eventType: 'PASSWORD_CHANGE_REQUIRED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { reason: reason === 'password_expired' ? 'expired' : 'temporary_or_reset' } });
    return CredentialErrors.PASSWORD_CHANGE_REQUIRED({ reason, reset_token: reset.token, expires_in: d.config.tokens.resetTtlSec });
  }

  /**
   * Issues tokens and a session for a user whose identity (and second factor) is settled.
   * `passwordExpiresAt`: when the caller read it already (null: never expires).
   */
  async complete(user: UserRow, admitted: Grants, client: ClientContext, opts: { mfaCompleted: boolean; method: string; mfaMethod?: string; passwordExpiresAt?: number | null } & FinishOptions): Promise<SignInResult> {
    const d = this.deps;
    const ctx = await this.assessed(user, client);
    const now = new Date(d.clock.now());
    let grants = admitted;
    const { session, ended, pair } = await d.db.transaction().execute(async (trx) => {
      const created = await d.sessions.create(trx, {
        userId: user.id, deviceFingerprint: ctx.fingerprint, ipAddress: ctx.ipHash, userAgent: ctx.userAgent,
        channel: ctx.channel, mfaCompleted: opts.mfaCompleted, limits: d.accessPolicy.sessionLimits(ctx.channel, admitted.roles),
      });
      // Under the user's row lock `create` took: an administrator's change that committed while
      // this sign-in ran (the account disabled or deleted, its roles changed) is seen now, so no
      // session outlives a disabling and no token carries a grant taken away. The token carries
      // only what was both admitted (second factor, policy and limits were decided on it) and is
      // still held: a role added meanwhile waits for the next sign-in rather than skip its checks.
      // An erasure requested while this sign-in ran (it takes the same row lock) is seen too.
      const fresh = await sql<{ is_active: boolean; roles: string[]; permissions: string[]; erase_after: Date | string | null; security_locked_at: Date | string | null }>`
        SELECT u.is_active, u.security_locked_at, ${grantsOf(sql.ref('u.id'))}, ${pendingErasureOf(sql.ref('u.id'))} FROM users u WHERE u.id = ${user.id}`.execute(trx);
      const current = fresh.rows[0];
      if (!current?.is_active) throw SignInErrors.ACCOUNT_DISABLED();
      if (current.erase_after !== null) throw erasurePendingError({ erase_after: current.erase_after });
      // A "this was not me" answered while this sign-in waited for its second factor is seen here.
      if (current.security_locked_at !== null) throw securityLockedError(current.security_locked_at);
      grants = { roles: admitted.roles.filter((r) => current.roles.includes(r)), permissions: admitted.permissions.filter((p) => current.permissions.includes(p)) };
      const familyId = randomUUID();
      await trx.insertInto('refresh_families').values({ family_id: familyId, session_id: created.session.sessionId, user_id: user.id, created_at: now, revoked_at: null, revoke_reason: null }).execute();
      const issued = await this.issuePair(trx, user, grants, created.session, familyId);
      if (opts.origin) await this.originWriters.get(opts.method)?.(trx, created.session, user, opts.origin);
      await d.users.update(trx, user.id, { last_login_at: now }, now);
      const entry = d.audit.row({
        eventType: 'USER_LOGIN', status: 'SUCCESS', userId: user.uuid, username: user.username, ...auditContext(ctx), mfaMethod: opts.mfaMethod ?? null,
        details: { method: opts.method, session_id: created.session.sessionId, ended_sessions: created.ended },
      });
      await trx.insertInto('audit_log').values(entry).execute();
      if (ctx.risk) {
        await d.risk.record(trx, user.id, ctx, ctx.risk);
        await d.risk.announce('signed_in', ctx.risk, user, ctx, entry.audit_id ?? null, trx);
      }
      return { session: created.session, ended: created.ended, pair: issued };
    });
    await d.sessions.announce(ended);
    return { body: await this.response(user, grants, session, pair, now, opts.passwordExpiresAt), sessionKey: session.aesKey! };
  }

  /** A new access token and a new refresh token in `familyId`, the refresh one recorded in `trx`. */
  async issuePair(trx: Db, user: UserRow, grants: Grants, session: Session, familyId: string): Promise<{ access: string; refresh: string }> {
    const { pair, refreshRow } = await this.mintPair(user, grants, session, familyId);
    await trx.insertInto('refresh_tokens').values(refreshRow).execute();
    return pair;
  }

  /** The failed-attempt limit and lock length of `channel` (its access policy's, else the server's). */
  attemptLimits(channel: string): AttemptLimits {
    return this.deps.accessPolicy.attemptLimits(channel);
  }

  /**
   * What follows a right secret, for sign-in and for routes that act on a proven secret without
   * signing in (a PIN change over USSD): the account is active (else audited, 403
   * ACCOUNT_DISABLED), has no pending erasure and no lock its holder put on it ("this was not
   * me": 403 ACCOUNT_SECURITY_LOCKED), and the access policy allows this request. Returns the user's grants.
   */
  async admit(user: UserRow, ctx: ClientContext, outcome?: (o: string) => void, known?: Grants): Promise<Grants> {
    const d = this.deps;
    if (!user.is_active) {
      outcome?.('disabled');
      await d.audit.record({ ...auditContext(ctx), eventType: 'FAILED_LOGIN_ATTEMPT', status: 'FAILURE', userId: user.uuid, username: user.username, details: { reason: 'account_disabled' } });
      throw SignInErrors.ACCOUNT_DISABLED();
    }
    const { erasure, grants } = await admissionOf(d.db, user.id, known);
    if (erasure) {
      outcome?.('erasure_pending');
      await d.audit.record({ ...auditContext(ctx), eventType: 'FAILED_LOGIN_ATTEMPT', status: 'FAILURE', userId: user.uuid, username: user.username, details: { reason: 'erasure_pending' } });
      throw erasurePendingError(erasure);
    }
    // The holder answered "this was not me" to a sign-in notice: no sign-in until a recovery
    // (src/risk/responses/lock.ts). On the account's row the sign-in read; `complete` reads it
    // again under the row lock, so a lock set meanwhile is seen there.
    const securityLocked = user.security_locked_at;
    if (securityLocked) {
      outcome?.('security_locked');
      await d.audit.record({ ...auditContext(ctx), eventType: 'FAILED_LOGIN_ATTEMPT', status: 'FAILURE', userId: user.uuid, username: user.username, details: { reason: 'security_locked' } });
      throw securityLockedError(securityLocked);
    }
    await d.accessPolicy.check(user, grants, ctx).catch((err: unknown) => {
      outcome?.('policy_restricted');
      throw err;
    });
    return grants;
  }

  /** The token pair, and the `refresh_tokens` row the caller must write for the refresh token to work. */
  async mintPair(user: UserRow, grants: Grants, session: Session, familyId: string): Promise<{ pair: { access: string; refresh: string }; refreshRow: Insertable<RefreshTokensTable> }> {
    const d = this.deps;
    const access = await d.tokens.issue('access', {
      sub: d.subCipher.seal(user.username, SUB_CONTEXT), user_id: user.uuid, roles: grants.roles, permissions: grants.permissions,
      session_id: session.sessionId, device_fingerprint: session.deviceFingerprint, ip_address: session.ipAddress, channel: session.channel,
    });
    const refresh = await d.tokens.issue('refresh', { user_id: user.uuid, session_id: session.sessionId, family_id: familyId });
    const refreshRow = { jti: refresh.jti, family_id: familyId, issued_at: new Date(d.clock.now()), expires_at: new Date(refresh.expiresAt), used_at: null };
    return { pair: { access: access.token, refresh: refresh.token }, refreshRow };
  }

  /** `passwordExpiresAt`: when the caller already read it (null: never); read here otherwise. */
  async response(user: UserRow, grants: Grants, session: Session, pair: { access: string; refresh: string }, lastLogin: Date | null, passwordExpiresAt?: number | null): Promise<SignInResponse> {
    const d = this.deps;
    const state = passwordExpiresAt !== undefined ? { expiresAt: passwordExpiresAt } : await d.credentials.state(user.id);
    const actions: string[] = [];
    if (state?.expiresAt != null && state.expiresAt - d.clock.now() < (await d.credentials.warnDays(user, grants.roles)) * 86_400_000) actions.push('CHANGE_PASSWORD_SOON');
    return {
      access_token: pair.access,
      token_type: 'bearer',
      expires_in: d.config.tokens.accessTtlSec,
      refresh_token: pair.refresh,
      user: { id: user.id, uuid: user.uuid, active: user.is_active },
      permissions: grants.permissions,
      actions,
      session_id: session.sessionId,
      user_profile: {
        username: user.username, email: user.email, phone: user.phone, full_name: user.full_name, roles: grants.roles,
        channel: session.channel, mfa_completed: session.mfaCompleted,
        last_login_at: lastLogin ? lastLogin.toISOString() : null,
        password_expires_at: state?.expiresAt != null ? new Date(state.expiresAt).toISOString() : null,
      },
    };
  }
}

/** The `strongroom_signins_total` outcome of a sign-in stopped at the second-factor step. */
function challengeOutcome(challenge: AppError): string {
  if (challenge.code === 'POLICY_RESTRICTED') return 'policy_restricted'; // no factor this channel accepts
  if (challenge.code === 'RISK_TOO_HIGH') return 'risk_refused'; // a second factor is due, and none can reach the holder
  return 'second_factor_required';
}
