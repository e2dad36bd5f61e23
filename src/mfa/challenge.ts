/**
 * The second-factor step of the one sign-in pipeline (SPEC Sign-in flows; ruling 5).
 *
 * - `MfaGate` decides, after the password (or directory, or IdP) has identified the user,
 *   whether a second factor must follow. It answers `401 2FA_REQUIRED` with a 2FA token and the
 *   methods on offer, or `403 MFA_SETUP_INCOMPLETE` with a 2FA token good only for enrolling,
 *   when the user's role requires MFA and nothing is enrolled yet.
 * - `ChallengeService` turns a 2FA token back into the user it was issued for (checking the
 *   device binding and the account lock), and finishes the sign-in once a factor is verified:
 *   the token is spent (its jti denylisted) and tokens and a session with `mfa_completed: true`
 *   are issued by the pipeline, exactly as a sign-in without MFA would be.
 *
 * Factor routes that accept either a bearer token or a 2FA token resolve their caller with
 * `actor`, so one handler serves a signed-in user and one finishing a sign-in.
 */
import type { FastifyRequest } from 'fastify';
import { auditContext, type AuditLog, type AuditEvent } from '../audit/service.js';
import type { Config } from '../platform/config.js';
import type { Clock } from '../platform/clock.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import type { AppError } from '../platform/errors.js';
import type { Metrics } from '../platform/observability/metrics.js';
import type { LoginAttempts } from '../policy/lockout.js';
import { clientNetwork } from '../policy/network.js';
import type { AuthContext, Guard } from '../sessions/guard.js';
import { fingerprintOf, userAgentOf } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { AccessPolicyCheck, AfterSecondFactor, ClientContext, SecondFactorGate, SessionOrigin, SignInPipeline, SignInResult } from '../signin/pipeline.js';
import { SignInErrors } from '../signin/errors.js';
import { TokenErrors } from '../tokens/errors.js';
import type { Denylist } from '../tokens/denylist.js';
import type { TokenService, TwoFactorClaims } from '../tokens/service.js';
import type { Grants, UserRow, UserStore } from '../users/store.js';
import { MfaErrors } from './errors.js';
import type { MfaMethod } from '../platform/db/schema.js';
import type { FactorStore, SignInMethod } from './factors.js';
import { RiskDecisionErrors } from '../risk/decisions/errors.js';

/**
 * Purpose of the short-lived `reset` token that proves identity for an MFA reset request when
 * the user cannot finish a sign-in (POST /api/v1/auth/security-questions/verify with a 2FA
 * token issues it; POST /api/v1/auth/reset/mfa accepts it as `proof_token`).
 */
export const MFA_RESET_PROOF_PURPOSE = 'mfa_reset_proof';

/** `signin`: finish a sign-in with an enrolled factor. `setup`: enrol a first factor, then finish. */
export type ChallengePurpose = 'signin' | 'setup';

export interface ChallengeClaims extends TwoFactorClaims {
  purpose: ChallengePurpose;
  methods: SignInMethod[];
  /** A `setup` challenge: the factors it may enrol (the channel's policy may narrow them). Absent: any. */
  setup_methods?: MfaMethod[];
  channel: string;
  device_fingerprint: string;
  ip_address: string;
  strategy: string;
  /** What the sign-in method keeps about the session it will open (SAML: the IdP session). */
  origin?: SessionOrigin;
  /**
   * A risky sign-in of an account without an enrolled factor (the risk response policy's
   * `step_up`): a `signin` token's `methods` are the contacts on file (email, SMS) a code may be
   * sent to; a `setup` token's `setup_methods` are those contacts' factors, and it may not set
   * security questions (it proves only the password).
   */
  by_contact?: true;
  /** Set when the password must change: the verified factor leads to a reset token, not a session. */
  next?: AfterSecondFactor['next'];
  next_reason?: AfterSecondFactor['reason'];
}

export interface Challenge {
  claims: ChallengeClaims;
  user: UserRow;
}

/** Who is calling a factor route: a signed-in session, or a sign-in waiting for its second factor. */
export type Actor =
  | { kind: 'session'; user: UserRow; auth: AuthContext }
  | { kind: 'challenge'; user: UserRow; challenge: Challenge };

export interface MfaContext {
  ip: string;
  userAgent: string;
  fingerprint: string;
  channel: string;
}

export function mfaContext(request: FastifyRequest, channel?: string): MfaContext {
  return { ip: request.ip, userAgent: userAgentOf(request), fingerprint: fingerprintOf(request), channel: channel ?? request.auth?.session.channel ?? 'web' };
}

/** The access policy's answers on second factors (LoginFactor): whether one is needed, and which count. */
export interface SecondFactorPolicy {
  requiresSecondFactor(channel: string, roles: readonly string[]): boolean;
  /** The factors that count on the channel; null: any. */
  factorMethods(channel: string, roles: readonly string[]): readonly MfaMethod[] | null;
  /** Audits and returns the 403 POLICY_RESTRICTED (rule `factor`) of a sign-in that holds no factor that counts. */
  refuseFactor(user: UserRow, roles: readonly string[], ctx: ClientContext): Promise<AppError>;
}

export class MfaGate implements SecondFactorGate {
  constructor(private readonly deps: { config: Config; tokens: TokenService; factors: FactorStore; audit: AuditLog; policy: SecondFactorPolicy }) {}

  async challenge(user: UserRow, grants: Grants, ctx: ClientContext, strategy: string, after?: AfterSecondFactor, origin?: SessionOrigin, riskStepUp = false): Promise<AppError | null> {
    const d = this.deps;
    const enrolled = await d.factors.active(user.id);
    if (after && enrolled.length === 0 && !riskStepUp) return null; // the password change comes first, set-up after it
    // A factor is needed when one is enrolled, when the user holds a role of MFA_REQUIRED_ROLES,
    // or when a policy of this channel covering the user says so (`require_second_factor`).
    const setupDue = grants.roles.some((r) => d.config.mfa.requiredRoles.includes(r)) || d.policy.requiresSecondFactor(ctx.channel, grants.roles);
    if (enrolled.length === 0 && riskStepUp) return this.byContact(user, grants, ctx, strategy, { setupDue, after, origin });
    if (enrolled.length === 0 && !setupDue) return null;
    // The channel's policy may accept only some factors (`second_factor_methods`): the others
    // are not offered, and a user who holds none that counts is refused here, not offered a
    // set-up that the password alone would complete.
    const accepted = d.policy.factorMethods(ctx.channel, grants.roles);
    const counts = (m: SignInMethod): boolean => accepted === null || accepted.includes(m === 'backup_code' ? 'totp' : m);
    const usable = await d.factors.signInMethods(user, enrolled);
    const methods = usable.filter(counts);
    if (enrolled.length > 0 && methods.length === 0 && usable.length > 0) return d.policy.refuseFactor(user, grants.roles, ctx);
    const setupMethods = enrolled.length > 0 ? [] : (await d.factors.enrollable(user)).filter(counts);
    if (enrolled.length === 0 && setupMethods.length === 0) return d.policy.refuseFactor(user, grants.roles, ctx);
    // Enrolled factors none of which can be used now (say email, with SMTP gone, or the phone
    // that approves sign-ins unreachable) still mean `signin`: a setup token would let the
    // password alone enrol a new factor. The user's way out is recovery, which the answer names.
    const purpose: ChallengePurpose = enrolled.length > 0 ? 'signin' : 'setup';
    const recover = purpose === 'signin' && methods.length === 0 ? recoveryHint(enrolled) : undefined;
    return this.issue(user, ctx, { purpose, methods, setupMethods, strategy, after, origin, recover });
  }

  /** A proof that is a second factor by itself (a passkey) is refused when the channel's policy lists factors without it. */
  async refusesFactor(user: UserRow, grants: Grants, ctx: ClientContext, method: string): Promise<AppError | null> {
    const accepted = this.deps.policy.factorMethods(ctx.channel, grants.roles);
    if (accepted === null || (accepted as readonly string[]).includes(method)) return null;
    return this.deps.policy.refuseFactor(user, grants.roles, ctx);
  }

  /**
   * A risky sign-in of an account without an enrolled factor: a one-time code to a contact on
   * file (email, SMS) that the channel's policy accepts. When the account must set up a factor
   * anyway, the set-up is offered with those factors only: enrolling one sends its code to the
   * contact on file, so the password alone cannot enrol an authenticator app. No contact: refused
   * (403 RISK_TOO_HIGH, audited).
   */
  private async byContact(user: UserRow, grants: Grants, ctx: ClientContext, strategy: string, o: { setupDue: boolean; after?: AfterSecondFactor; origin?: SessionOrigin }): Promise<AppError> {
    const d = this.deps;
    const accepted = d.policy.factorMethods(ctx.channel, grants.roles);
    const contacts: SignInMethod[] = [];
    for (const m of ['email', 'sms'] as const) if ((accepted === null || accepted.includes(m)) && (await d.factors.deliverable(user, m))) contacts.push(m);
    if (contacts.length === 0) {
      await d.audit.record({ ...auditContext(ctx), userId: user.uuid, username: user.username, eventType: 'RISK_SIGN_IN_REFUSED', status: 'FAILURE', details: { reason: 'no_second_factor', strategy } });
      return RiskDecisionErrors.RISK_TOO_HIGH({ reason: 'no_second_factor' });
    }
    const setup = o.setupDue && !o.after;
    return this.issue(user, ctx, { purpose: setup ? 'setup' : 'signin', methods: setup ? [] : contacts, setupMethods: contacts as MfaMethod[], strategy, after: o.after, origin: o.origin, byContact: true });
  }

  /** Issues the 2FA token of a challenge, audits it and returns its answer (401 2FA_REQUIRED, or 403 MFA_SETUP_INCOMPLETE). */
  private async issue(user: UserRow, ctx: ClientContext, c: { purpose: ChallengePurpose; methods: SignInMethod[]; setupMethods: MfaMethod[]; strategy: string; after?: AfterSecondFactor; origin?: SessionOrigin; byContact?: boolean; recover?: RecoveryHint }): Promise<AppError> {
    const d = this.deps;
    const { purpose, methods, setupMethods, strategy, after, origin } = c;
    // `by_contact`: a sign-in token's methods are contacts on file; a set-up token's proves only
    // the password (no security questions may be set with it).
    const byContact = c.byContact === true;
    const issued = await d.tokens.issue('2fa', {
      user_id: user.uuid, purpose, methods, ...(purpose === 'setup' ? { setup_methods: setupMethods } : {}),
      channel: ctx.channel, device_fingerprint: ctx.fingerprint, ip_address: ctx.ipHash, strategy, ...(origin ? { origin } : {}),
      ...(byContact ? { by_contact: true } : {}), ...(after ? { next: after.next, next_reason: after.reason } : {}),
    });
    const expiresIn = d.config.tokens.twoFactorTtlSec;
    const audit = { ...auditContext(ctx), userId: user.uuid, username: user.username };
    const risk = c.byContact === true ? { reason: 'unusual_sign_in' as const } : {};
    if (purpose === 'signin') {
      await d.audit.record({ ...audit, eventType: 'MFA_REQUIRED', status: 'SUCCESS', details: { methods, strategy, ...risk, ...(after ? { then: after.next } : {}) } });
      return MfaErrors['2FA_REQUIRED']({ two_factor_token: issued.token, methods, expires_in: expiresIn, ...risk, ...(c.recover ?? {}) });
    }
    await d.audit.record({ ...audit, eventType: 'MFA_SETUP_REQUIRED', status: 'SUCCESS', details: { setup_methods: setupMethods, strategy, ...risk } });
    return MfaErrors.MFA_SETUP_INCOMPLETE({
      two_factor_token: issued.token,
      expires_in: expiresIn,
      setup_methods: setupMethods,
      ...risk,
      next_step: SETUP_NEXT_STEP,
    });
  }
}

/** Where a sign-in whose enrolled factors none can be used now points (`401 2FA_REQUIRED` with empty `methods`). */
export interface RecoveryHint {
  recover_path: string;
  /** What to name as lost at `recover_path`. */
  recover_lost: 'device' | 'mfa';
  recover: string;
}

/**
 * The account recovery for enrolled factors none of which can be used now: a device recovery
 * when the phone that approves sign-ins is the only one (it removes that factor), else an MFA
 * recovery (it removes them all).
 */
export function recoveryHint(enrolled: readonly MfaMethod[]): RecoveryHint {
  const lost = enrolled.length === 1 && enrolled[0] === 'push_approval' ? 'device' : 'mfa';
  const what = lost === 'device' ? 'The phone that approves your sign-ins cannot be reached now' : 'None of your second factors can be used now';
  return {
    recover_path: '/api/v1/auth/reset/initiate',
    recover_lost: lost,
    recover: `${what}. Recover the account (POST /api/v1/auth/reset/initiate with lost: "${lost}"), then set up a second factor again; or sign in again once it can be used.`,
  };
}

/**
 * What `403 MFA_SETUP_INCOMPLETE` tells the client to do: the set-up routes that take its
 * `two_factor_token` (those of the factors `enrollable` can offer). Push approval is not one: its
 * enrolment needs a signed-in session on the phone, so it is set up after the sign-in.
 */
export const SETUP_NEXT_STEP = 'Set up one of setup_methods with this two_factor_token: an authenticator app (POST /api/v1/2fa/totp/setup, then POST /api/v1/2fa/totp/verify with a code from the app), '
  + 'a one-time code by email, SMS or push (POST /api/v1/2fa/otp/setup, then POST /api/v1/2fa/otp/verify), or a passkey (POST /api/v1/passkeys/registration/options, then POST /api/v1/passkeys/registration/verify). '
  + 'The sign-in finishes when the factor is verified. Push approval is set up afterwards, from a signed-in session on the phone.';

export interface ChallengeDeps {
  db: Db;
  clock: Clock;
  tokens: TokenService;
  users: UserStore;
  pipeline: SignInPipeline;
  /** The pipeline's access-policy step, checked again for the request that finishes a sign-in. */
  accessPolicy: AccessPolicyCheck;
  loginAttempts: LoginAttempts;
  sessions: SessionService;
  audit: AuditLog;
  guard: Guard;
  ipHasher: Hasher;
  denylist: Denylist;
  /** Counts each audited factor event (`strongroom_mfa_events_total`). */
  metrics?: Pick<Metrics, 'mfaEvents'>;
}

/** How recent a step-up must be to add or move a second factor. */
export const STEP_UP_FRESH_MINUTES = 10;

/** The step-up routes of each factor, in the order a client may offer them. */
const STEP_UP_ROUTES: Record<string, { method: string; routes: string[] }> = {
  totp: { method: 'totp', routes: ['POST /api/v1/auth/totp/verify'] },
  email: { method: 'email', routes: ['POST /api/v1/auth/2fa/request', 'POST /api/v1/auth/2fa/verify'] },
  sms: { method: 'sms', routes: ['POST /api/v1/auth/2fa/request', 'POST /api/v1/auth/2fa/verify'] },
  push: { method: 'push', routes: ['POST /api/v1/auth/2fa/request', 'POST /api/v1/auth/2fa/verify'] },
  passkey: { method: 'passkey', routes: ['POST /api/v1/auth/passkey/step-up/options', 'POST /api/v1/auth/passkey/step-up/verify'] },
  push_approval: { method: 'push_approval', routes: ['POST /api/v1/auth/push-approval/step-up/request', 'POST /api/v1/auth/push-approval/step-up/complete'] },
};

/**
 * 403 STEP_UP_REQUIRED naming what to call: `details.step_up` lists, for each enrolled factor,
 * the routes that step the session up with it; the message names them too.
 */
/** A factor whose step-up is a code sent by POST /api/v1/auth/2fa/request. */
const isCode = (method: string): boolean => method !== 'totp' && method !== 'passkey' && method !== 'push_approval';

export function stepUpRequired(enrolled: readonly string[]): Error {
  const stepUp = enrolled.map((m) => STEP_UP_ROUTES[m]).filter((x) => x !== undefined);
  const ways = [
    ...(stepUp.some((s) => s.method === 'totp') ? ['POST /api/v1/auth/totp/verify with a code from the authenticator app'] : []),
    ...(stepUp.some((s) => isCode(s.method)) ? [`POST /api/v1/auth/2fa/request with {"method": ${stepUp.filter((s) => isCode(s.method)).map((s) => `"${s.method}"`).join(' or ')}}, then POST /api/v1/auth/2fa/verify with the code`] : []),
    ...(stepUp.some((s) => s.method === 'passkey') ? ['POST /api/v1/auth/passkey/step-up/options, then POST /api/v1/auth/passkey/step-up/verify with the passkey\'s answer'] : []),
    ...(stepUp.some((s) => s.method === 'push_approval') ? ['POST /api/v1/auth/push-approval/step-up/request, approve on your phone with the number shown, then POST /api/v1/auth/push-approval/step-up/complete'] : []),
  ];
  return MfaErrors.STEP_UP_REQUIRED({ within_minutes: STEP_UP_FRESH_MINUTES, enrolled, step_up: stepUp }, {
    message: `Confirm it is you with your current second factor first (${ways.join('; or ')}, with this session's bearer token), then try again within ${STEP_UP_FRESH_MINUTES} minutes.`,
  });
}

export class ChallengeService {
  constructor(private readonly deps: ChallengeDeps) {}

  /**
   * The sign-in a 2FA token stands for. Refuses a token of another type, an expired or spent
   * one (401 TOKEN_*), one bound to another device (401 FINGERPRINT_MISMATCH, or FINGERPRINT_REQUIRED without the header), a purpose the
   * route does not serve (401 TOKEN_INVALID), a disabled account (403) and a locked one (429).
   */
  async resolve(token: string, request: FastifyRequest, purposes: readonly ChallengePurpose[]): Promise<Challenge> {
    const d = this.deps;
    const claims = (await d.tokens.verify(token, '2fa')) as ChallengeClaims;
    d.tokens.checkBinding(claims, { fingerprint: fingerprintOf(request), ipHash: () => d.ipHasher.hex(request.ip) });
    // Spent tokens reach the in-memory denylist by NOTIFY; the table is the arbiter right away.
    const spent = await d.db.selectFrom('token_denylist').select('jti').where('jti', '=', claims.jti).executeTakeFirst();
    if (spent) throw TokenErrors.TOKEN_REVOKED();
    if (!purposes.includes(claims.purpose)) throw TokenErrors.TOKEN_INVALID({ reason: `this route does not accept a ${claims.purpose} token` });
    const user = await d.users.findByUuid(claims.user_id);
    if (!user) throw TokenErrors.TOKEN_INVALID();
    if (!user.is_active) throw SignInErrors.ACCOUNT_DISABLED();
    const lockedUntil = await d.loginAttempts.lockedUntil(d.loginAttempts.userKey(user.id));
    if (lockedUntil !== null) throw d.loginAttempts.lockedError(lockedUntil);
    return { claims, user };
  }

  /** A bearer-authenticated caller, or the sign-in behind `twoFactorToken` when one is given. */
  async actor(request: FastifyRequest, twoFactorToken: string | undefined, purposes: readonly ChallengePurpose[]): Promise<Actor> {
    if (twoFactorToken !== undefined) {
      const challenge = await this.resolve(twoFactorToken, request, purposes);
      return { kind: 'challenge', user: challenge.user, challenge };
    }
    const user = await this.signedInUser(request);
    return { kind: 'session', user, auth: request.auth! };
  }

  /** The user behind the request's bearer token (authenticated here if no hook did yet). */
  async signedInUser(request: FastifyRequest): Promise<UserRow> {
    await this.deps.guard.authenticate(request);
    const user = await this.deps.users.findByUuid(request.auth!.claims.user_id);
    if (!user) throw TokenErrors.TOKEN_INVALID();
    return user;
  }

  /**
   * Finishes the sign-in once `method` was verified: spends the 2FA token (a second use is
   * 401 TOKEN_REVOKED, even in parallel: the denylist insert is the arbiter) and issues tokens
   * and a session with `mfa_completed: true` bound to the device and channel of the sign-in;
   * or, when the password must change (the token says `next`), answers 403
   * PASSWORD_CHANGE_REQUIRED with a reset token instead.
   */
  async finish(challenge: Challenge, request: FastifyRequest, method: string): Promise<SignInResult> {
    const d = this.deps;
    const { claims, user } = challenge;
    if (!(await d.denylist.spend(claims.jti, claims.exp * 1000, '2fa_used'))) throw TokenErrors.TOKEN_REVOKED();
    await d.denylist.announce(claims.jti, claims.exp * 1000);
    // No reset of the failure count here: the password step gave back its own attempt, and a
    // reset would erase failures other requests counted since (src/policy/lockout.ts).
    // The session is bound as the password step was: its device, address and channel.
    const ctx: ClientContext = { ip: request.ip, ipHash: claims.ip_address, networkHash: d.ipHasher.hex(clientNetwork(request.ip)), fingerprint: claims.device_fingerprint, userAgent: userAgentOf(request), channel: claims.channel };
    const grants = await d.users.grants(user.id);
    // The policy again, for the request that finishes: a 2FA token lives minutes, and the
    // address, the hour, the device's binding or the policies may have changed since the
    // password step (its location was checked there: this request carries none).
    await d.accessPolicy.check(user, grants, ctx, { secondStep: true });
    if (claims.next === 'password_change') throw await d.pipeline.passwordChangeRequired(user, ctx, claims.next_reason ?? 'temporary_password');
    return d.pipeline.complete(user, grants, ctx, { mfaCompleted: true, method: claims.strategy, mfaMethod: method, origin: claims.origin });
  }

  /**
   * Adding or moving a second factor when the user has one already needs that factor first: a
   * step-up in this session in the last STEP_UP_FRESH_MINUTES (403 STEP_UP_REQUIRED). The
   * password and a session are not the second factor; without this, a stolen session and the
   * password would enrol the thief's authenticator or phone.
   */
  async requireRecentStepUp(auth: AuthContext, enrolled: readonly string[], trx: Db = this.deps.db): Promise<void> {
    if (enrolled.length === 0) return;
    const row = await trx.selectFrom('sessions').select('mfa_verified_at').where('session_id', '=', auth.session.sessionId).executeTakeFirst();
    const at = row?.mfa_verified_at ? new Date(row.mfa_verified_at).getTime() : 0;
    if (this.deps.clock.now() - at > STEP_UP_FRESH_MINUTES * 60_000) throw stepUpRequired(enrolled);
  }

  /** A signed-in user proved a factor again (step-up): the session records it. */
  async stepUp(auth: AuthContext, user: UserRow, method: string, ctx: MfaContext): Promise<{ verified: true; method: string; session_id: string; verified_at: string }> {
    const d = this.deps;
    const now = new Date(d.clock.now());
    await d.db.transaction().execute(async (trx) => {
      await trx.updateTable('sessions').set({ mfa_completed: true, mfa_verified_at: now }).where('session_id', '=', auth.session.sessionId).execute();
      await this.audit('MFA_STEP_UP', 'SUCCESS', user, ctx, method, {}, trx);
    });
    auth.session.mfaCompleted = true;
    await d.sessions.announceChanged(auth.session.sessionId);
    return { verified: true, method, session_id: auth.session.sessionId, verified_at: now.toISOString() };
  }

  /** One audit entry about a factor, with the request's context. */
  async audit(eventType: AuditEvent, status: 'SUCCESS' | 'FAILURE', user: UserRow, ctx: MfaContext, method: string | null, details: Record<string, unknown> = {}, trx?: Db): Promise<void> {
    await this.deps.audit.record({
      eventType, status, userId: user.uuid, username: user.username, ...auditContext(ctx), mfaMethod: method, details,
    }, trx);
    this.deps.metrics?.mfaEvents.inc({ event: eventType, method: method ?? 'none' });
  }
}
