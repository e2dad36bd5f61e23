/**
 * One-time codes by email, SMS and push (SPEC "Second factors": random 6 digits, valid 5 minutes,
 * single use, at most 3 attempts, delivery tracked, audit trail masked).
 *
 * A code belongs to a *challenge*: the sign-in behind a 2FA token, a signed-in session asking
 * for step-up, or a factor being enrolled. Sending is throttled per challenge
 * (`OTP_RESEND_SECONDS` between codes, `OTP_MAX_SENDS` per hour); a new code replaces the last.
 * Checking spends an attempt on the code first, then one on the user's shared second-factor
 * counter (`MFA_MAX_FAILURES`, as TOTP does), and only then compares, in constant time, the keyed
 * hash of the answer. The code itself exists only in memory and in the message: the database
 * holds HMAC(code:row id), and neither the log nor the audit trail ever sees it.
 */
import { randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import type { OtpMethod } from '../../platform/db/schema.js';
import { CommonErrors, retryLater as retryAfter, type AppError } from '../../platform/errors.js';
import { secondFactorLimit } from '../attempts.js';
import type { AuthContext } from '../../sessions/guard.js';
import type { UserRow } from '../../users/store.js';
import type { Challenge, MfaContext } from '../challenge.js';
import type { MfaDeps } from '../deps.js';
import { MfaErrors } from '../errors.js';
import { DeliveryFailure, OtpDelivery } from './delivery.js';
import { OtpErrors } from './errors.js';
import type { CodeDevice } from './push-channel.js';
import type { DevOutbox } from './outbox.js';
import { OtpStore, type CurrentCode } from './store.js';
import { maskDestination, type OtpPurpose } from './templates.js';

/** The window `OTP_MAX_SENDS` counts in: a long-lived challenge (step-up, enrolment) is never blocked for good. */
export const SEND_WINDOW_SEC = 3600;

/** What a client is told after a code was sent. */
export interface OtpSent {
  method: OtpMethod;
  /** Masked: `j***@bank.example`, `+2547****12`. */
  destination: string;
  /** Seconds the code stays valid. */
  expires_in: number;
  /** Seconds before another code may be requested for the same challenge. */
  resend_after: number;
}

interface Target {
  user: UserRow;
  method: OtpMethod;
  purpose: OtpPurpose;
  challenge: string;
  /** Push enrolment: the device to send to (and to bind); otherwise push goes to the bound device. */
  device?: CodeDevice;
}

export class OtpService {
  private readonly store: OtpStore;
  private readonly delivery: OtpDelivery;

  constructor(private readonly deps: MfaDeps) {
    this.store = new OtpStore(deps.db);
    this.delivery = new OtpDelivery({ config: deps.config, mailer: deps.mailer, log: deps.log, clock: deps.clock, ...(deps.pushCodes ? { pushCodes: deps.pushCodes } : {}) });
  }

  /** The development outbox (used only without a transport, outside production). */
  get outbox(): DevOutbox {
    return this.delivery.outbox;
  }

  /** Sends a code to finish the sign-in behind a 2FA token, by a method the challenge offers. */
  async requestSignIn(challenge: Challenge, method: OtpMethod, ctx: MfaContext): Promise<OtpSent> {
    const { user, claims } = challenge;
    // Still enrolled now: an MFA reset approved since the password step removed the factors. A
    // risky sign-in of an account without a factor (`by_contact`) sends to the contact on file.
    const offered = claims.methods.includes(method) && (claims.by_contact === true ? method !== 'push' : (await this.deps.factors.active(user.id)).includes(method));
    if (!offered || !(await this.deps.factors.deliverable(user, method))) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method });
    return this.send({ user, method, purpose: 'signin', challenge: `signin:${claims.jti}` }, ctx);
  }

  /** Sends a step-up code for a signed-in session, by an enrolled factor. */
  async requestStepUp(auth: AuthContext, user: UserRow, method: OtpMethod, ctx: MfaContext): Promise<OtpSent> {
    const enrolled = await this.deps.factors.active(user.id);
    if (!enrolled.includes(method) || !(await this.deps.factors.deliverable(user, method))) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method });
    return this.send({ user, method, purpose: 'stepup', challenge: `stepup:${auth.session.sessionId}` }, ctx);
  }

  /**
   * Sends a code to the account's own address, to enrol it as a factor. Push: to one active
   * mobile device (`deviceId`, its uuid, or the user's only one), which entering the code binds; when push
   * is enrolled already this moves it to that device. A signed-in user who has a factor already
   * must have stepped up with it lately (`requireRecentStepUp`): a stolen session must not add
   * or move a factor.
   */
  async requestEnrolment(user: UserRow, method: OtpMethod, ctx: MfaContext, opts: { auth?: AuthContext; deviceId?: string } = {}): Promise<OtpSent> {
    if (!(await this.deps.factors.deliverable(user, method, 'enrol'))) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method });
    if (method !== 'push') await this.notEnrolled(user, method);
    if (opts.auth) await this.deps.challenges.requireRecentStepUp(opts.auth, await this.deps.factors.active(user.id));
    if (method !== 'push') return this.send({ user, method, purpose: 'enroll', challenge: enrollChallenge(user, method) }, ctx);
    const device = await this.deps.pushCodes!.enrolmentDevice(user.id, opts.deviceId);
    if (device === 'choose') throw CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'device_id', message: 'is required: the account has several mobile devices (GET /api/v1/notifications/devices)' }] });
    if (device === null) throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method, reason: 'not an active mobile device of this account' });
    return this.send({ user, method, purpose: 'enroll', challenge: enrollChallenge(user, method), device }, ctx);
  }

  /** Checks a sign-in code; the caller then finishes the sign-in. Resolves with the method used. */
  async verifySignIn(challenge: Challenge, code: string, ctx: MfaContext): Promise<OtpMethod> {
    const { method } = await this.check(challenge.user, `signin:${challenge.claims.jti}`, code, ctx, 'signin');
    await this.deps.challenges.audit('MFA_VERIFIED', 'SUCCESS', challenge.user, ctx, method, { purpose: 'signin' });
    return method;
  }

  /** Checks a step-up code of the caller's session; the caller then records the step-up. */
  async verifyStepUp(auth: AuthContext, user: UserRow, code: string, ctx: MfaContext): Promise<OtpMethod> {
    return (await this.check(user, `stepup:${auth.session.sessionId}`, code, ctx, 'stepup')).method;
  }

  /** Checks an enrolment code and enrols the factor (audited MFA_ENROLLED). */
  async confirmEnrolment(user: UserRow, method: OtpMethod, code: string, ctx: MfaContext): Promise<void> {
    const d = this.deps;
    if (method !== 'push') await this.notEnrolled(user, method); // push may move to another device (requestEnrolment checked the step-up)
    const row = await this.check(user, enrollChallenge(user, method), code, ctx, 'enroll', method);
    const { destination } = method === 'push' ? { destination: row.destination_masked } : await this.target(user, method);
    await d.db.transaction().execute(async (trx) => {
      const bound = method === 'push' && row.device_token_id !== null ? await d.pushCodes!.bind(trx, user.id, row.device_token_id) : undefined;
      if (method === 'push' && bound === undefined) {
        throw MfaErrors.MFA_METHOD_UNAVAILABLE({ method, reason: 'the device is no longer an active mobile device of this account' });
      }
      await d.factors.activate(trx, user, method, new Date(d.clock.now()));
      await d.challenges.audit('MFA_ENROLLED', 'SUCCESS', user, ctx, method, { destination, ...(method === 'push' ? { device_token_id: bound } : {}) }, trx);
    });
  }

  private async notEnrolled(user: UserRow, method: OtpMethod): Promise<void> {
    if ((await this.deps.factors.active(user.id)).includes(method)) throw OtpErrors.OTP_FACTOR_ALREADY_ENROLLED({ method });
  }

  /** Throttles, stores (hashed, `queued`), delivers, then records `sent` or `failed`. */
  private async send(t: Target, ctx: MfaContext): Promise<OtpSent> {
    const d = this.deps;
    const cfg = d.config.mfa;
    const locked = await d.attempts.retryAfter(t.user.id, 'second_factor');
    if (locked > 0) throw retryAfter(MfaErrors.MFA_LOCKED, locked); // no code could be accepted anyway
    const { to, destination, deviceId } = await this.target(t.user, t.method, t.device);
    const id = randomUUID();
    const code = randomInt(0, 1_000_000).toString().padStart(6, '0'); // CSPRNG, uniform over 000000-999999
    const now = new Date(d.clock.now());
    await d.db.transaction().execute(async (trx) => {
      await this.store.lockChallenge(trx, t.challenge); // two parallel requests must not both pass the throttle
      const sent = await this.store.sentSince(trx, t.challenge, new Date(now.getTime() - SEND_WINDOW_SEC * 1000));
      if (sent.length >= cfg.otpMaxSends) {
        throw retryAfter(OtpErrors.OTP_SEND_LIMIT, (new Date(sent[cfg.otpMaxSends - 1]!.created_at).getTime() + SEND_WINDOW_SEC * 1000 - now.getTime()) / 1000);
      }
      const last = sent.find((s) => s.delivery_status !== 'failed'); // a code that never arrived does not hold the next one back
      const wait = last ? new Date(last.created_at).getTime() + cfg.otpResendSec * 1000 - now.getTime() : 0;
      if (wait > 0) throw retryAfter(OtpErrors.OTP_RESEND_THROTTLED, wait / 1000);
      await this.store.replace(trx, {
        id, user_id: t.user.id, challenge: t.challenge, purpose: t.purpose, method: t.method, code_hash: this.hash(code, id),
        destination_masked: destination, created_at: now, expires_at: new Date(now.getTime() + cfg.otpValiditySec * 1000), delivery_status: 'queued',
        consumed_at: null, superseded_at: null, delivery_ref: null, delivery_error: null, delivered_at: null, device_token_id: deviceId,
      }, now);
    });
    await this.dispatch(t, { id, code, to, destination }, ctx);
    return { method: t.method, destination, expires_in: cfg.otpValiditySec, resend_after: cfg.otpResendSec };
  }

  /**
   * Delivers a stored code, then records `sent` (OTP_SENT) or `failed` (OTP_DELIVERY_FAILED,
   * and 503 OTP_DELIVERY_FAILED).
   */
  private async dispatch(t: Target, c: { id: string; code: string; to: string; destination: string }, ctx: MfaContext): Promise<void> {
    const d = this.deps;
    const audit = { destination: c.destination, purpose: t.purpose, otp_id: c.id };
    try {
      const { via, ref } = await this.delivery.deliver({
        method: t.method, userId: t.user.id, language: t.user.language, to: c.to, destination: c.destination, code: c.code, purpose: t.purpose, reference: c.id, recipient: { username: t.user.username, fullName: t.user.full_name },
      });
      await this.store.markSent(c.id, ref, new Date(d.clock.now()));
      await d.challenges.audit('OTP_SENT', 'SUCCESS', t.user, ctx, t.method, { ...audit, via, delivery_status: 'sent' });
    } catch (err) {
      // The code is void either way; an unexpected error (a bug) still surfaces as a 500.
      const known = err instanceof DeliveryFailure;
      const reason = known ? err.reason : 'internal error';
      await this.store.markFailed(c.id, reason, new Date(d.clock.now()));
      await d.challenges.audit('OTP_DELIVERY_FAILED', 'FAILURE', t.user, ctx, t.method, { ...audit, via: known ? err.via : this.delivery.via(t.method), delivery_status: 'failed', reason });
      throw known ? OtpErrors.OTP_DELIVERY_FAILED({ method: t.method }) : err;
    }
  }

  /**
   * Account recovery (src/recovery): stores a new code for `challenge` (replacing the last) and
   * sends it to the user's address on file, by email or SMS. The workflow throttles its sends and
   * counts its attempts itself, so neither the send throttle nor the user's second-factor counter
   * applies here. Delivery runs in the background (`delivered`, which never rejects): whether it
   * works, and how long it takes, must not show in an answer that has to read the same for an
   * account that does not exist. Its outcome is audited (OTP_SENT or OTP_DELIVERY_FAILED).
   *
   * Without `user` (a decoy: a made-up or unusable account, or no such contact on file) the same
   * statements run: a row for `challenge`, for no account, whose hash is of a random value no
   * six-digit code can be, so nothing ever matches it; nothing is delivered.
   */
  async sendRecovery(user: UserRow | undefined, method: 'email' | 'sms', challenge: string, ctx: MfaContext): Promise<{ delivered: Promise<void> }> {
    const d = this.deps;
    const { to, destination } = user ? await this.target(user, method) : { to: '', destination: '***' };
    const id = randomUUID();
    const code = user ? randomInt(0, 1_000_000).toString().padStart(6, '0') : randomUUID();
    const now = new Date(d.clock.now());
    await d.db.transaction().execute((trx) => this.store.replace(trx, {
      id, user_id: user?.id ?? null, challenge, purpose: 'recovery', method, code_hash: this.hash(code, id), destination_masked: destination, created_at: now,
      expires_at: new Date(now.getTime() + d.config.mfa.otpValiditySec * 1000), delivery_status: 'queued', consumed_at: null, superseded_at: null,
      delivery_ref: null, delivery_error: null, delivered_at: null, device_token_id: null,
    }, now));
    if (!user) return { delivered: Promise.resolve() };
    const delivered = this.dispatch({ user, method, purpose: 'recovery', challenge }, { id, code, to, destination }, ctx)
      .catch((err: unknown) => d.log.warn({ err, user_id: user.uuid, otp_id: id }, 'account recovery code not delivered'));
    return { delivered };
  }

  /** Account recovery: a notice by SMS to the user's phone, through the SMS gateway when one is configured (else false). */
  async sendRecoveryNotice(user: UserRow, message: string, reference: string): Promise<boolean> {
    return user.phone ? this.delivery.sendText(user.phone, message, reference) : false;
  }

  /**
   * Account recovery: whether `code` is the live code of `challenge`, spending it when it is.
   * The code's own attempts are spent before the comparison (constant time), as for every code;
   * the workflow reserves and audits its attempts, so nothing else is counted or audited here.
   * False for no code, a used, replaced or expired one, or a wrong one.
   */
  async checkRecovery(challenge: string, code: string): Promise<boolean> {
    const d = this.deps;
    const row = await this.store.current(challenge);
    if (!row || row.consumed_at !== null || new Date(row.expires_at).getTime() <= d.clock.now()) return false;
    const attempt = await this.store.spendAttempt(row.id, d.config.mfa.otpMaxAttempts);
    if (!attempt || !this.matches(code, row.id, attempt.code_hash)) return false;
    return this.store.consume(row.id, new Date(d.clock.now()));
  }

  /** Constant-time comparison of the keyed hash of `code` with the stored one. */
  private matches(code: string, id: string, storedHex: string): boolean {
    const given = Buffer.from(this.hash(code, id), 'hex');
    const stored = Buffer.from(storedHex, 'hex');
    return given.length === stored.length && timingSafeEqual(given, stored);
  }

  /**
   * Checks `code` against the live code of `challenge` and uses it up. Order matters: the
   * attempt is spent (atomically) before the comparison, so parallel guesses cannot outrun
   * the limit; the comparison is constant-time; the use is a conditional update only one
   * request can win.
   */
  private async check(user: UserRow, challenge: string, code: string, ctx: MfaContext, purpose: OtpPurpose, expected?: OtpMethod): Promise<CurrentCode> {
    const d = this.deps;
    const cfg = d.config.mfa;
    const row = await this.store.current(challenge);
    const method = row?.method ?? expected ?? null;
    const fail = async (error: AppError, reason: string, extra: Record<string, unknown> = {}): Promise<never> => {
      await d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, method, { purpose, reason, ...(row ? { otp_id: row.id } : {}), ...extra });
      throw error;
    };
    if (!row) return fail(OtpErrors.OTP_INVALID(), 'no_code');
    if (row.consumed_at !== null) return fail(OtpErrors.OTP_INVALID(), 'already_used');
    if (new Date(row.expires_at).getTime() <= d.clock.now()) return fail(OtpErrors.OTP_EXPIRED(), 'expired');
    const attempt = await this.store.spendAttempt(row.id, cfg.otpMaxAttempts);
    if (!attempt) {
      if (await this.store.isSpentOrReplaced(row.id)) return fail(OtpErrors.OTP_INVALID(), 'already_used');
      return fail(OtpErrors.OTP_ATTEMPTS_EXCEEDED(), 'attempts_exceeded');
    }
    // Across codes too: a new 2FA token or a resend buys fresh attempts on a code, not on the user.
    const limit = secondFactorLimit(d.config);
    const reservation = await d.attempts.reserve(user.id, 'second_factor', limit);
    if (!reservation.ok) return fail(retryAfter(MfaErrors.MFA_LOCKED, reservation.retryAfterSec), 'locked');
    if (!this.matches(code, row.id, attempt.code_hash)) {
      const left = Math.max(0, cfg.otpMaxAttempts - attempt.attempts);
      if (reservation.failedCount >= limit.max) await d.challenges.audit('MFA_LOCKED', 'SUCCESS', user, ctx, method, { locked_minutes: limit.lockMinutes });
      return fail(OtpErrors.OTP_INVALID({ attempts_remaining: left }), 'invalid_code', { attempts: attempt.attempts });
    }
    if (!(await this.store.consume(row.id, new Date(d.clock.now())))) return fail(OtpErrors.OTP_INVALID(), 'already_used');
    await d.attempts.clear(user.id, 'second_factor');
    return row;
  }

  /** Where a method's code goes: the real address and its mask (push: the device's uuid and description; `deviceId`, internal, for the code's row). */
  private async target(user: UserRow, method: OtpMethod, device?: CodeDevice): Promise<{ to: string; destination: string; deviceId: number | null }> {
    if (method === 'push') {
      const d = device ?? (await this.deps.pushCodes?.codeDevice(user.id)) ?? null;
      return d ? { to: d.uuid, destination: d.description, deviceId: d.id } : { to: '', destination: 'no device', deviceId: null };
    }
    const to = (method === 'email' ? user.email : user.phone) ?? '';
    return { to, destination: maskDestination(method, to), deviceId: null };
  }

  /** HMAC(code:row id) under the code key: a dump of the table cannot test guesses. */
  private hash(code: string, id: string): string {
    return this.deps.codeHasher.hex(`${code}:${id}`);
  }

  /** Clean-up job: codes a week past their expiry. */
  purgeOld(): Promise<void> {
    return this.store.purgeOld(this.deps.clock.now());
  }
}

function enrollChallenge(user: UserRow, method: OtpMethod): string {
  return `enroll:${user.id}:${method}`;
}
