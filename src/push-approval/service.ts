/**
 * Push approval (issue 30, section 2): a sign-in, or a signed-in session's step-up, is approved on
 * the enrolled phone by picking, among three numbers, the one the asking page shows, and signing
 * the answer with a key the phone keeps in its secure hardware. The access token of the phone's
 * session alone cannot approve: the answer's signature must verify under the enrolled key.
 *
 * - Enrolment: the phone's device token (and its public key, or the key comes at confirmation),
 *   then its signature over a challenge and, per PUSH_APPROVAL_ATTESTATION, its key attestation.
 * - A request: bound to a 2FA token (a sign-in) or to one session (a step-up: no other session
 *   completes it). One pending per account (a request for another sign-in or session supersedes
 *   it; asking again with the same binding answers the same request and sends nothing), at most
 *   PUSH_APPROVAL_MAX_PER_HOUR per account an hour, sent once (a data push through the outbox,
 *   tried once, naming only the request id). A wrong number ends push approval for that binding;
 *   a fraud report denies every pending request, pauses the account's push approval and ends the
 *   session that asked for a step-up.
 * - While the second factor is locked, no request, answer or completion is taken; the failure
 *   count is cleared only when a sign-in or step-up completes.
 * - An answer: one conditional UPDATE decides (pending and not expired); every other is refused.
 *   An approval is used once (`completed_at`; a sign-in's 2FA token is spent besides).
 * - The page waiting for the answer may be held (`wait_seconds`, waiters.ts) until the request
 *   leaves `pending`: every change that ends a pending request announces it (`settle`).
 * - The expiry job marks the requests past their 5 minutes `expired` (one conditional UPDATE:
 *   one node announces each) and publishes `second_factor.expired`.
 */
import { randomBytes } from 'node:crypto';
import { sql, type ExpressionBuilder } from 'kysely';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/service.js';
import type { DeviceRemoval, DeviceTokenStore } from '../devices/store.js';
import type { GeoLookup } from '../geo/types.js';
import type { MfaAttempts } from '../mfa/attempts.js';
import { secondFactorLimit } from '../mfa/attempts.js';
import type { ChallengeService, MfaContext } from '../mfa/challenge.js';
import { MfaErrors } from '../mfa/errors.js';
import type { FactorStore } from '../mfa/factors.js';
import type { PushOutbox } from '../notifications/outbox.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { PushApprovalAttestationMode } from '../platform/config-push-approval.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import type { Database, PushApprovalDenyReason, PushApprovalPurpose, PushApprovalState } from '../platform/db/schema.js';
import { CommonErrors, retryLater } from '../platform/errors.js';
import type { RealtimeHub } from '../realtime/hub.js';
import type { AlertService } from '../risk/alerts/service.js';
import { describeDevice } from '../risk/responses/device.js';
import type { AuthContext } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import { lockUserRow, type UserRow } from '../users/store.js';
import { levelOf, verifyEnrolmentAttestation, type AttestationLevel, type EnrolmentAttestation, type StoredAttestation } from './attestation/enrolment.js';
import { ATTESTATION_REASONS, AttestationError } from './attestation/errors.js';
import { answerMessage, type AnswerDecision, drawNumbers, enrolMessage, parsePublicKey, verifySignature } from './crypto.js';
import { PushApprovalErrors as E } from './errors.js';
import { removePushApprovalFactor } from './store.js';
import { settledNotices, type Waiters } from './waiters.js';

/** How long the phone has to confirm an enrolment, and to answer a request. */
export const ENROL_SECONDS = 300;
export const REQUEST_SECONDS = 300;
/** What a waiting web page is told between two polls of `complete`. */
export const POLL_SECONDS = 2;
/** The longest `wait_seconds` of a long poll of `complete`. */
export const MAX_WAIT_SECONDS = 25;
/**
 * How long an approval may be completed after the phone's tap: a page waiting on it completes
 * within a second; one that comes back later asks again (docs/decisions.md).
 */
export const APPROVAL_USE_SECONDS = 120;
/** How long a request is kept after it expires (purge); its use is known that long (src/admin/user-factors.ts). */
export const REQUESTS_KEPT_MS = 86_400_000;
/** Requests the expiry job marks per statement. */
export const EXPIRE_BATCH = 500;

export interface PushApprovalServiceDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'mfa' | 'pushApproval'>;
  audit: AuditLog;
  factors: FactorStore;
  challenges: ChallengeService;
  mfaAttempts: MfaAttempts;
  deviceTokens: DeviceTokenStore;
  pushOutbox: PushOutbox;
  push: unknown;
  realtime: RealtimeHub;
  alerts: AlertService;
  geo: GeoLookup;
  bus: EventBus;
  log: Logger;
  /** The pages held by a long poll of `complete` on this node. */
  waiters: Waiters;
  /** Ends the session that asked for a step-up the user reports as fraud. */
  sessions: Pick<SessionService, 'end'>;
}

/** What a request is bound to: a sign-in's 2FA token, or (a step-up) the session that asked. */
export type RequestBinding = { purpose: 'sign_in'; jti: string } | { purpose: 'step_up'; sessionId: string };

/** How long a completion may wait for the phone (wall time), and the client's going away. */
export interface Wait {
  ms: number;
  signal?: AbortSignal;
}

export interface RequestView {
  id: string;
  purpose: PushApprovalPurpose;
  choices: number[];
  location: { city: string | null; country: string | null };
  device: { browser: string | null; system: string | null };
  channel: string;
  requested_at: string;
  expires_at: string;
  state: PushApprovalState;
}

type RequestRow = {
  id: string; user_id: number; purpose: PushApprovalPurpose; two_factor_jti: string | null; session_id: string | null; number: number; choices: number[];
  state: PushApprovalState; deny_reason: PushApprovalDenyReason | null; completed_at: Date | null;
  country: string | null; city: string | null; browser: string | null; system: string | null; channel: string; requested_at: Date; expires_at: Date; answered_at: Date | null;
};

const iso = (d: Date | string): string => new Date(d).toISOString();

/** The requests of `b` (a sign-in's 2FA token, or a step-up's session). */
const boundTo = (b: RequestBinding) => (eb: ExpressionBuilder<Database, 'push_approval_requests'>) =>
  b.purpose === 'sign_in' ? eb('two_factor_jti', '=', b.jti) : eb.and([eb('purpose', '=', 'step_up'), eb('session_id', '=', b.sessionId)]);

/** The push sent for each purpose: no number, no code. */
const PUSH_TEXT: Record<PushApprovalPurpose, { title: string; body: string }> = {
  sign_in: { title: 'Sign-in request', body: 'Open the app to approve or deny this sign-in.' },
  step_up: { title: 'Confirm it is you', body: 'Open the app to approve or deny this request.' },
};

/** The audit trail's name of a purpose (as the other factors write it). */
const AUDIT_PURPOSE: Record<PushApprovalPurpose, string> = { sign_in: 'signin', step_up: 'stepup' };

/** What the phone sends to finish its enrolment. */
export interface ConfirmInput {
  signature: string;
  /** The key, when the setup was started without one; else the setup's key again (or nothing). */
  public_key?: string;
  attestation?: EnrolmentAttestation;
}

/**
 * The key the confirmation enrols: the setup's, or (a setup started without one) the one sent
 * now. 422 when none is known, or when the one sent is not the setup's; 400 when it is not P-256.
 */
function keyBeingEnrolled(atSetup: string | null, sent: string | undefined): string {
  const invalid = (message: string) => CommonErrors.VALIDATION_ERROR({ fields: [{ location: 'body', field: 'public_key', message }] });
  if (atSetup === null) {
    if (sent === undefined) throw invalid('is required: the setup was started without a key');
    if (!parsePublicKey(sent)) throw E.PUSH_APPROVAL_KEY_INVALID();
    return sent;
  }
  if (sent !== undefined && sent !== atSetup) throw invalid('is not the key given at setup');
  return atSetup;
}

export class PushApprovalService {
  constructor(private readonly d: PushApprovalServiceDeps) {}

  /** The pages held by a long poll on this node (tests await them instead of sleeping). */
  get waiters(): Waiters {
    return this.d.waiters;
  }

  private now(): Date {
    return new Date(this.d.clock.now());
  }

  /**
   * Starts (or restarts) the enrolment of `user`'s phone: its device, and its key when the phone
   * made it already (else the key comes with the confirmation: an Android key attests the
   * challenge, so the challenge comes first); the challenge it must sign, and whether the
   * confirmation needs a key attestation.
   */
  async setup(user: UserRow, deviceUuid: string, publicKey: string | undefined): Promise<{ challenge: string; expires_in: number; attestation: PushApprovalAttestationMode }> {
    if (publicKey !== undefined && !parsePublicKey(publicKey)) throw E.PUSH_APPROVAL_KEY_INVALID();
    const device = await this.d.deviceTokens.get(user.id, deviceUuid);
    if (!device || !device.is_active || device.platform !== 'mobile') throw E.PUSH_APPROVAL_DEVICE_NOT_FOUND();
    const now = this.now();
    const challenge = randomBytes(32).toString('base64url');
    const expires = new Date(now.getTime() + ENROL_SECONDS * 1000);
    const pending = { pending_public_key: publicKey ?? null, pending_device_token_id: device.id, enrol_challenge: challenge, enrol_expires_at: expires };
    // The new key waits beside the working one: a setup never confirmed must not lock the user
    // out, nor a thief's half-done setup end the user's phone. Confirming swaps it in.
    await this.d.db.transaction().execute(async (trx) => {
      // The lock order of every change to a user's phone: user row, device row, key row, requests.
      await lockUserRow(trx, user.id);
      if (!(await this.holdDevice(trx, user.id, device.id, true))) throw E.PUSH_APPROVAL_DEVICE_NOT_FOUND(); // deleted or moved meanwhile
      await trx.insertInto('push_approval_keys')
        .values({ user_id: user.id, device_token_id: device.id, public_key: publicKey ?? null, ...pending, confirmed_at: null, paused_until: null, created_at: now })
        .onConflict((oc) => oc.column('user_id').doUpdateSet(pending))
        .execute();
    });
    return { challenge, expires_in: ENROL_SECONDS, attestation: this.d.config.pushApproval.attestation.mode };
  }

  /**
   * Finishes the enrolment: the setup has not expired, the key (given at setup, or now) signed the
   * challenge, its attestation verifies (PUSH_APPROVAL_ATTESTATION), then one conditional UPDATE
   * swaps the key in (a parallel confirmation, or a setup started again meanwhile, loses) and
   * activates the factor.
   */
  async confirm(user: UserRow, body: ConfirmInput, ctx: MfaContext): Promise<{ enrolled: true; method: 'push_approval'; attestation: AttestationLevel }> {
    const now = this.now();
    const key = await this.d.db.selectFrom('push_approval_keys').selectAll().where('user_id', '=', user.id).executeTakeFirst();
    if (!key || key.enrol_challenge === null || key.enrol_expires_at === null || key.pending_device_token_id === null
      || new Date(key.enrol_expires_at).getTime() <= now.getTime()) throw E.PUSH_APPROVAL_SETUP_EXPIRED();
    const publicKey = keyBeingEnrolled(key.pending_public_key, body.public_key);
    if (!verifySignature(publicKey, enrolMessage(user.uuid, key.enrol_challenge), body.signature)) {
      await this.d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'push_approval', { reason: 'enrolment_signature' });
      throw E.PUSH_APPROVAL_SIGNATURE_INVALID();
    }
    const attestation = await this.checkAttestation(user, ctx, { challenge: key.enrol_challenge, publicKey }, body.attestation);
    const challenge = key.enrol_challenge;
    const level = levelOf(attestation);
    await this.d.db.transaction().execute(async (trx) => {
      // The lock order of every change to a user's phone (setup): the device goes or moves before or after, not during.
      await lockUserRow(trx, user.id);
      if (!(await this.holdDevice(trx, user.id, key.pending_device_token_id!))) throw E.PUSH_APPROVAL_SETUP_EXPIRED();
      const done = await trx.updateTable('push_approval_keys')
        .set({ public_key: publicKey, attestation: attestation === null ? null : JSON.stringify(attestation), device_token_id: key.pending_device_token_id!, confirmed_at: now, created_at: now, pending_public_key: null, pending_device_token_id: null, enrol_challenge: null, enrol_expires_at: null })
        .where('user_id', '=', user.id).where('enrol_challenge', '=', challenge).returning('id').executeTakeFirst();
      if (!done) throw E.PUSH_APPROVAL_SETUP_EXPIRED(); // confirmed by a parallel request, or restarted
      await this.d.factors.activate(trx, user, 'push_approval', now);
      await this.d.challenges.audit('MFA_ENROLLED', 'SUCCESS', user, ctx, 'push_approval', { attestation: level, ...(attestation ? { platform: attestation.platform } : {}) }, trx);
    });
    return { enrolled: true, method: 'push_approval', attestation: level };
  }

  /**
   * Takes a key-share lock on the user's device token `id` (a deletion or a transfer waits until
   * this transaction ends, and this one waits for one under way); whether it is still theirs (and,
   * with `active`, turned on). Called with the user's row locked, before any key or request row is.
   */
  private async holdDevice(trx: Db, userId: number, id: number, active = false): Promise<boolean> {
    let q = trx.selectFrom('device_tokens').select('id').where('id', '=', id).where('user_id', '=', userId);
    if (active) q = q.where('is_active', '=', true);
    return (await q.forKeyShare().executeTakeFirst()) !== undefined;
  }

  /**
   * The attestation of the key being enrolled, as PUSH_APPROVAL_ATTESTATION says: `off`, none is
   * looked at; `optional`, one sent must verify; `required`, one must be sent and verify. A
   * refusal is audited (MFA_FAILED, `enrolment_attestation`). What to store (null: none).
   */
  private async checkAttestation(user: UserRow, ctx: MfaContext, enrolment: { challenge: string; publicKey: string }, given: EnrolmentAttestation | undefined): Promise<StoredAttestation | null> {
    const config = this.d.config.pushApproval.attestation;
    if (config.mode === 'off') return null;
    if (given === undefined) {
      if (config.mode === 'optional') return null;
      await this.d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'push_approval', { reason: 'enrolment_attestation', attestation_reason: 'missing' });
      throw E.PUSH_APPROVAL_ATTESTATION_REQUIRED();
    }
    try {
      return verifyEnrolmentAttestation(given, enrolment, config, this.d.clock);
    } catch (err) {
      if (!(err instanceof AttestationError)) throw err;
      await this.d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'push_approval', { reason: 'enrolment_attestation', attestation_reason: err.reason, format: given.format });
      throw E.PUSH_APPROVAL_ATTESTATION_INVALID({ reason: err.reason, format: given.format }, { message: `${E.PUSH_APPROVAL_ATTESTATION_INVALID.message} ${ATTESTATION_REASONS[err.reason]}` });
    }
  }

  /**
   * Sends a request to the phone for `binding` (a sign-in's 2FA token, or a session's step-up),
   * denying, as `superseded`, the account's pending request of another binding, or answers the
   * pending one of that binding again (nothing is sent twice). 429 past the hourly limit, 503
   * without a device (or its key), 403 after a wrong number with this binding or while a fraud
   * report pauses the account.
   */
  async request(user: UserRow, binding: RequestBinding, ctx: MfaContext): Promise<{ request_id: string; number: number; expires_in: number }> {
    await this.refuseLocked(user.id);
    const now = this.now();
    const result = await this.d.db.transaction().execute(async (trx) => {
      // One request at a time per account: the count and the insert cannot interleave. The lock
      // order of every change to a user's phone: user row, device row (key-share, below, before
      // any request row: a deletion or transfer of the phone's token waits for this request, or
      // this one for it, never each for the other), key row, requests.
      await lockUserRow(trx, user.id);
      const pending = await trx.selectFrom('push_approval_requests').select(['id', 'number', 'expires_at'])
        .where('user_id', '=', user.id).where(boundTo(binding)).where('state', '=', 'pending').where('expires_at', '>', now)
        .orderBy('requested_at', 'desc').executeTakeFirst();
      if (pending) return { request_id: pending.id, number: pending.number, expires_in: Math.ceil((new Date(pending.expires_at).getTime() - now.getTime()) / 1000), fresh: false, superseded: [] as string[] };
      await this.refuseAsking(trx, user.id, binding, now);
      // A key deleted with its device (or bound to a device no longer the user's) is no factor: 503.
      const key = await trx.selectFrom('push_approval_keys as k')
        .innerJoin('device_tokens as d', (j) => j.onRef('d.id', '=', 'k.device_token_id').onRef('d.user_id', '=', 'k.user_id'))
        .select(['k.device_token_id']).where('k.user_id', '=', user.id).where('k.confirmed_at', 'is not', null).forKeyShare('d').executeTakeFirst();
      if (!key || this.d.push === undefined) throw E.PUSH_APPROVAL_UNAVAILABLE();
      // One pending request per account: a new one supersedes the older (its page is told it was
      // denied, its phone screen that it was answered), so parallel sign-ins cannot turn the
      // number matching into a guess among several pushes.
      const superseded = await trx.updateTable('push_approval_requests').set({ state: 'denied', deny_reason: 'superseded', answered_at: now })
        .where('user_id', '=', user.id).where('state', '=', 'pending').where('expires_at', '>', now).returning('id').execute();
      const { id, number } = await this.insertRequest(trx, user, binding, ctx, now);
      // A data push naming the request only: no number, no code. Tried once, never again.
      const sent = await this.d.pushOutbox.enqueueOnce(trx, user.id, key.device_token_id, { ...PUSH_TEXT[binding.purpose], data: { type: 'push_approval', request_id: id } });
      if (sent === null) throw E.PUSH_APPROVAL_UNAVAILABLE();
      await this.d.challenges.audit('MFA_REQUIRED', 'SUCCESS', user, ctx, 'push_approval', { request_id: id, purpose: AUDIT_PURPOSE[binding.purpose] }, trx);
      return { request_id: id, number, expires_in: REQUEST_SECONDS, fresh: true, superseded: superseded.map((r) => r.id) };
    });
    await this.settle(result.superseded);
    for (const id of result.superseded) {
      await this.d.realtime.publish({ userId: user.id }, { type: 'second_factor.denied', data: { method: 'push_approval', request_id: id, reason: 'superseded' } });
    }
    if (result.fresh) {
      const expiresAt = iso(new Date(now.getTime() + REQUEST_SECONDS * 1000));
      await this.d.realtime.publish({ userId: user.id }, { type: 'second_factor.requested', data: { method: 'push_approval', request_id: result.request_id, purpose: binding.purpose, expires_at: expiresAt } });
    }
    return { request_id: result.request_id, number: result.number, expires_in: result.expires_in };
  }

  /**
   * The fatigue rules before a new request, in the request's transaction: 403 while a fraud
   * report pauses the account, 403 once this binding's push approval ended (a wrong number, a
   * fraud report), 429 past PUSH_APPROVAL_MAX_PER_HOUR.
   */
  private async refuseAsking(trx: Db, userId: number, binding: RequestBinding, now: Date): Promise<void> {
    const paused = await trx.selectFrom('push_approval_keys').select('paused_until').where('user_id', '=', userId).executeTakeFirst();
    if (paused?.paused_until && new Date(paused.paused_until).getTime() > now.getTime()) throw E.PUSH_APPROVAL_DENIED({ reason: 'fraud_reported' });
    const ended = await trx.selectFrom('push_approval_requests').select('deny_reason').where('user_id', '=', userId).where(boundTo(binding))
      .where('deny_reason', 'in', ['fraud_reported', 'wrong_number']).orderBy('requested_at', 'desc').executeTakeFirst();
    if (ended) throw E.PUSH_APPROVAL_DENIED({ reason: ended.deny_reason });
    const hourAgo = new Date(now.getTime() - 3_600_000);
    const recent = await trx.selectFrom('push_approval_requests').select('requested_at')
      .where('user_id', '=', userId).where('requested_at', '>', hourAgo).orderBy('requested_at').execute();
    if (recent.length >= this.d.config.pushApproval.maxPerHour) {
      const oldest = new Date(recent[0]!.requested_at).getTime();
      throw retryLater(E.PUSH_APPROVAL_TOO_MANY, (oldest + 3_600_000 - now.getTime()) / 1000);
    }
  }

  /** A new pending request: the number, where and on what the asking page is. */
  private async insertRequest(trx: Db, user: UserRow, binding: RequestBinding, ctx: MfaContext, now: Date): Promise<{ id: string; number: number }> {
    const { number, choices } = drawNumbers();
    const place = this.d.geo.lookup(ctx.ip);
    const where = place && !('internal' in place) ? place : null;
    const device = describeDevice(ctx.userAgent);
    const row = await trx.insertInto('push_approval_requests').values({
      user_id: user.id, purpose: binding.purpose, two_factor_jti: binding.purpose === 'sign_in' ? binding.jti : null, session_id: binding.purpose === 'step_up' ? binding.sessionId : null,
      number, choices, state: 'pending', deny_reason: null,
      country: where?.country ?? null, city: where?.city ?? null, browser: device.browser, system: device.system, channel: ctx.channel,
      requested_at: now, expires_at: new Date(now.getTime() + REQUEST_SECONDS * 1000), answered_at: null,
    }).returning('id').executeTakeFirstOrThrow();
    return { id: row.id, number };
  }

  /** 429 MFA_LOCKED while the account's second factor is locked (`MFA_MAX_FAILURES`, shared with the other factors). */
  private async refuseLocked(userId: number): Promise<void> {
    const row = await this.d.db.selectFrom('mfa_attempts').select('locked_until').where('user_id', '=', userId).where('factor', '=', 'second_factor').executeTakeFirst();
    const until = row?.locked_until ? new Date(row.locked_until).getTime() : 0;
    if (until > this.d.clock.now()) throw retryLater(MfaErrors.MFA_LOCKED, (until - this.d.clock.now()) / 1000);
  }

  private async find(userId: number, id: string): Promise<RequestRow> {
    const row = await this.d.db.selectFrom('push_approval_requests').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    if (!row) throw E.PUSH_APPROVAL_NOT_FOUND();
    return row as RequestRow;
  }

  private stateOf(row: RequestRow): RequestView['state'] {
    return row.state === 'pending' && new Date(row.expires_at).getTime() <= this.d.clock.now() ? 'expired' : row.state;
  }

  /** What the phone shows: a sign-in or a step-up, the three numbers, where and on what the asking page is. Never the number itself. */
  async view(user: UserRow, id: string): Promise<RequestView> {
    const row = await this.find(user.id, id);
    return {
      id: row.id, purpose: row.purpose, choices: row.choices.map(Number), location: { city: row.city, country: row.country }, device: { browser: row.browser, system: row.system },
      channel: row.channel, requested_at: iso(row.requested_at), expires_at: iso(row.expires_at), state: this.stateOf(row),
    };
  }

  /**
   * The phone's answer, signed by the enrolled key. The first valid answer wins (one conditional
   * UPDATE); a wrong number denies the sign-in and counts as a failed second factor; a denial
   * with `report_fraud` ends the step-up's asking session and raises a security alert.
   */
  async answer(user: UserRow, id: string, a: { decision: 'approve' | 'deny'; choice?: number; report_fraud?: boolean; signature: string }, ctx: MfaContext): Promise<{ id: string; state: 'approved' | 'denied'; deny_reason: PushApprovalDenyReason | null }> {
    const row = await this.find(user.id, id);
    // The second factor is locked: no answer, not even the right number, signs in until the lock ends.
    await this.refuseLocked(user.id);
    const key = await this.d.db.selectFrom('push_approval_keys').select('public_key').where('user_id', '=', user.id).where('confirmed_at', 'is not', null).executeTakeFirst();
    const signed: AnswerDecision = a.decision === 'deny' && a.report_fraud === true ? 'deny_fraud' : a.decision;
    if (!key || key.public_key === null || !verifySignature(key.public_key, answerMessage(user.uuid, row.id, signed, a.choice), a.signature)) {
      await this.d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'push_approval', { reason: 'signature', request_id: row.id });
      throw E.PUSH_APPROVAL_SIGNATURE_INVALID();
    }
    const now = this.now();
    const [state, reason]: ['approved' | 'denied', PushApprovalDenyReason | null] = a.decision === 'approve'
      ? (a.choice === Number(row.number) ? ['approved', null] : ['denied', 'wrong_number'])
      : ['denied', a.report_fraud === true ? 'fraud_reported' : 'denied'];
    const won = await this.d.db.updateTable('push_approval_requests').set({ state, deny_reason: reason, answered_at: now })
      .where('id', '=', row.id).where('state', '=', 'pending').where('expires_at', '>', now).returning('id').executeTakeFirst();
    if (!won) {
      if (row.state === 'expired' || (row.state === 'pending' && new Date(row.expires_at).getTime() <= now.getTime())) throw E.PUSH_APPROVAL_EXPIRED();
      throw E.PUSH_APPROVAL_ANSWERED();
    }
    await this.settle([row.id]);
    const details = { request_id: row.id, purpose: AUDIT_PURPOSE[row.purpose] };
    if (state === 'approved') {
      // The failure count is cleared when the sign-in finishes (`complete`), not here.
      await this.d.challenges.audit('MFA_VERIFIED', 'SUCCESS', user, ctx, 'push_approval', { ...details, step: 'phone_approved' });
    } else if (reason === 'wrong_number') {
      const limit = secondFactorLimit(this.d.config);
      const r = await this.d.mfaAttempts.reserve(user.id, 'second_factor', limit);
      await this.d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'push_approval', { ...details, reason: 'wrong_number', failed_count: r.ok ? r.failedCount : undefined });
      if (r.ok && r.failedCount >= limit.max) await this.d.challenges.audit('MFA_LOCKED', 'SUCCESS', user, ctx, 'push_approval', { locked_minutes: limit.lockMinutes });
    } else if (reason === 'fraud_reported') {
      await this.fraudReported(user, row, now, details, ctx);
    } else {
      await this.d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'push_approval', { ...details, reason });
    }
    await this.d.realtime.publish({ userId: user.id }, { type: state === 'approved' ? 'second_factor.approved' : 'second_factor.denied', data: { method: 'push_approval', request_id: row.id, ...(reason ? { reason } : {}) } });
    return { id: row.id, state, deny_reason: reason };
  }

  /**
   * A denial reporting fraud: the session that asked for a step-up ends at once, on every node (the
   * user says it is not theirs: most likely the intruder's); every other pending request of the
   * account is denied; push approval pauses for PUSH_APPROVAL_FRAUD_PAUSE_HOURS; the bank's
   * security team gets a high alert.
   */
  private async fraudReported(user: UserRow, row: RequestRow, now: Date, details: Record<string, unknown>, ctx: MfaContext): Promise<void> {
    const sessionEnded = row.purpose === 'step_up' && row.session_id !== null ? await this.d.sessions.end(row.session_id, 'fraud_reported') : null;
    const others = await this.d.db.updateTable('push_approval_requests').set({ state: 'denied', deny_reason: 'fraud_reported', answered_at: now })
      .where('user_id', '=', user.id).where('state', '=', 'pending').returning('id').execute();
    const until = new Date(now.getTime() + this.d.config.pushApproval.fraudPauseHours * 3_600_000);
    await this.d.db.updateTable('push_approval_keys').set({ paused_until: until }).where('user_id', '=', user.id).execute();
    await this.settle(others.map((r) => r.id));
    for (const o of others) await this.d.realtime.publish({ userId: user.id }, { type: 'second_factor.denied', data: { method: 'push_approval', request_id: o.id, reason: 'fraud_reported' } });
    await this.d.challenges.audit('MFA_FAILED', 'FAILURE', user, ctx, 'push_approval', {
      ...details, reason: 'fraud_reported', paused_until: until.toISOString(), also_denied: others.map((r) => r.id), ...(sessionEnded === null ? {} : { session_ended: sessionEnded }),
    });
    await this.d.alerts.raise(this.d.db, {
      rule: 'push_approval_fraud', severity: 'high', userId: user.uuid, auditId: null, channel: row.channel, ipHash: null,
      location: row.country ? { country: row.country, ...(row.city ? { city: row.city } : {}) } : null, score: null, indicators: [], dedupeKey: `push_approval_fraud:${row.id}`,
    });
  }

  /**
   * Where the request of `binding` stands, for the page finishing a sign-in or a step-up: the
   * approved request; else 409 pending (with `Retry-After`), 403 denied, 410 expired, 404 when it
   * is not this binding's; 429 MFA_LOCKED while the second factor is locked. With `wait.ms`, a
   * pending request is waited for (a long poll): until it leaves `pending`, the wait ends or the
   * client leaves; then answered the same way. The place to wait is taken before the request is
   * read, so an answer landing in between wakes it.
   */
  async outcome(userId: number, binding: RequestBinding, id: string, wait: Wait = { ms: 0 }): Promise<RequestRow> {
    await this.refuseLocked(userId);
    const hold = wait.ms > 0 ? this.d.waiters.hold(id, wait.ms, wait.signal) : null;
    try {
      let row = await this.findBound(userId, binding, id);
      if (hold && this.stateOf(row) === 'pending') {
        hold.limit(new Date(row.expires_at).getTime() - this.d.clock.now()); // no longer than the request lives
        if ((await hold.ended) !== 'aborted') {
          await this.refuseLocked(userId);
          row = await this.findBound(userId, binding, id);
        }
      }
      const state = this.stateOf(row);
      if (state === 'approved') return row;
      if (state === 'pending') throw retryLater(E.PUSH_APPROVAL_PENDING, POLL_SECONDS);
      if (state === 'expired') throw E.PUSH_APPROVAL_EXPIRED();
      throw E.PUSH_APPROVAL_DENIED({ reason: row.deny_reason });
    } finally {
      hold?.release();
    }
  }

  private async findBound(userId: number, binding: RequestBinding, id: string): Promise<RequestRow> {
    const row = await this.d.db.selectFrom('push_approval_requests').selectAll().where('id', '=', id).where('user_id', '=', userId).where(boundTo(binding)).executeTakeFirst();
    if (!row) throw E.PUSH_APPROVAL_NOT_FOUND();
    return row as RequestRow;
  }

  /**
   * Spends the approval `row` (`outcome` found it approved) before the sign-in or step-up it
   * approves is finished: one conditional UPDATE, the very statement the factor's removal races
   * (it denies the approvals not spent yet, `factor_removed`). Refused: 403 PUSH_APPROVAL_DENIED
   * when denied since it was read (the factor removed meanwhile), 409 PUSH_APPROVAL_USED when a
   * parallel completion spent it, 410 PUSH_APPROVAL_EXPIRED when the phone approved more than
   * APPROVAL_USE_SECONDS ago.
   */
  async spend(userId: number, binding: RequestBinding, row: RequestRow): Promise<void> {
    const now = this.now();
    const since = new Date(now.getTime() - APPROVAL_USE_SECONDS * 1000);
    const used = await this.d.db.updateTable('push_approval_requests').set({ completed_at: now })
      .where('id', '=', row.id).where('user_id', '=', userId).where('state', '=', 'approved').where('completed_at', 'is', null).where('answered_at', '>', since)
      .returning('id').executeTakeFirst();
    if (used) return;
    const latest = await this.findBound(userId, binding, row.id);
    if (latest.state === 'denied') throw E.PUSH_APPROVAL_DENIED({ reason: latest.deny_reason });
    if (latest.completed_at !== null) throw E.PUSH_APPROVAL_USED();
    throw E.PUSH_APPROVAL_EXPIRED({ reason: 'approval_stale' });
  }

  /**
   * The sign-in approved on the phone finished (`complete` spent the approval and the 2FA token,
   * and issued the session): like any verified second factor, the failure count is cleared.
   */
  async signInFinished(userId: number): Promise<void> {
    await this.d.mfaAttempts.clear(userId, 'second_factor');
  }

  /**
   * A step-up approved on the phone, completed by the session that asked for it: the approval
   * spent (`spend`: once, within APPROVAL_USE_SECONDS of the tap), the failure count cleared, and
   * the session records the fresh second factor.
   */
  async completeStepUp(user: UserRow, auth: AuthContext, id: string, wait: Wait, ctx: MfaContext): Promise<Awaited<ReturnType<ChallengeService['stepUp']>>> {
    const binding: RequestBinding = { purpose: 'step_up', sessionId: auth.session.sessionId };
    await this.spend(user.id, binding, await this.outcome(user.id, binding, id, wait));
    await this.d.mfaAttempts.clear(user.id, 'second_factor');
    return this.d.challenges.stepUp(auth, user, 'push_approval', ctx);
  }

  /**
   * Tells every node that these requests left `pending` (the bus delivers to this node first), so
   * the pages held on them look again. After the change committed. A lost notice only delays a
   * held page to the end of its wait.
   */
  private async settle(ids: readonly string[]): Promise<void> {
    for (const notice of settledNotices(ids)) {
      await this.d.bus.publish(notice).catch((err: unknown) => this.d.log.warn({ err }, 'push-approval settlement not announced; held pages see it when their wait ends'));
    }
  }

  /**
   * `settle` for a change made in `trx`: every node, this one included, is told when it commits
   * (PostgreSQL's NOTIFY at commit). On PGlite (one process, one connection) this node is told
   * now: a held page's look queues behind the transaction, so it sees what committed.
   */
  async settleIn(trx: Db, ids: readonly string[]): Promise<void> {
    for (const notice of settledNotices(ids)) {
      const sqlNotice = this.d.bus.commitNotice(notice);
      if (sqlNotice) await sql`SELECT ${sqlNotice}`.execute(trx);
      else this.d.waiters.wake(notice.requestIds);
    }
  }

  /**
   * Marks the pending requests past their expiry `expired` (one conditional UPDATE per batch:
   * exactly one node announces each), publishes `second_factor.expired` in the same transaction,
   * and wakes the pages held on them. How many.
   */
  async expire(now: Date, stopping?: AbortSignal): Promise<number> {
    let total = 0;
    for (;;) {
      const { rows, announce } = await this.d.db.transaction().execute(async (trx) => {
        const rows = await trx.updateTable('push_approval_requests').set({ state: 'expired' })
          .where((eb) => eb('id', 'in', eb.selectFrom('push_approval_requests').select('id').where('state', '=', 'pending').where('expires_at', '<=', now)
            .orderBy('expires_at').limit(EXPIRE_BATCH).forUpdate().skipLocked()))
          .where('state', '=', 'pending').returning(['id', 'user_id', 'purpose']).execute();
        const announce = new Set<number>();
        for (const r of rows) {
          const stored = await this.d.realtime.publishIn(trx, { userId: r.user_id }, { type: 'second_factor.expired', data: { method: 'push_approval', request_id: r.id, purpose: r.purpose } });
          if (stored && !stored.noticeOnCommit) announce.add(r.user_id);
        }
        return { rows, announce };
      });
      for (const userId of announce) await this.d.realtime.announce(userId); // PGlite: no notice at commit
      await this.settle(rows.map((r) => r.id));
      total += rows.length;
      if (rows.length < EXPIRE_BATCH || stopping?.aborted) return total;
    }
  }

  /**
   * A device token of the user goes (src/devices calls this in the transaction that makes the
   * change, with the user's row and the device rows locked). When its owner deletes or turns off
   * the enrolled phone's token, the key and the `push_approval` factor go with it (audited
   * PUSH_APPROVAL_REMOVED), and its pending and unused approved requests are denied
   * (`factor_removed`); a new phone's enrolment waiting on a token that goes (or moves) is
   * dropped. The device limit never retires the phone (`pinnedDevices`). Two changes keep the
   * factor (docs/decisions.md): the push provider reporting the token dead, and its registration
   * by another account (anyone holding the token could do that: it must not strip the owner's
   * second factor). The phone is then not reached, so push approval is not offered (the sign-in
   * still asks for a second factor), but nobody with the right to remove it chose to.
   */
  async deviceRemoving(trx: Db, r: DeviceRemoval): Promise<void> {
    if (r.reason === 'push_provider' || r.reason === 'device_limit') return;
    const key = await trx.selectFrom('push_approval_keys').select(['device_token_id', 'pending_device_token_id', 'confirmed_at']).where('user_id', '=', r.userId).forUpdate().executeTakeFirst();
    if (!key) return;
    if (!r.deviceIds.includes(key.device_token_id) || r.reason === 'transferred') {
      if (key.pending_device_token_id !== null && r.deviceIds.includes(key.pending_device_token_id)) {
        await trx.updateTable('push_approval_keys').set({ pending_public_key: null, pending_device_token_id: null, enrol_challenge: null, enrol_expires_at: null }).where('user_id', '=', r.userId).execute();
      }
      return;
    }
    const { denied } = await removePushApprovalFactor(trx, r.userId, this.now());
    const user = await trx.selectFrom('users').select(['id', 'uuid', 'username']).where('id', '=', r.userId).executeTakeFirstOrThrow();
    if (key.confirmed_at !== null) {
      await this.d.audit.record({
        ...(r.context ?? {}), eventType: 'PUSH_APPROVAL_REMOVED', status: 'SUCCESS', userId: user.uuid, username: user.username, mfaMethod: 'push_approval',
        details: { reason: `device_${r.reason}`, denied_requests: denied.length },
      }, trx);
    }
    let announce = false;
    for (const id of denied) {
      const stored = await this.d.realtime.publishIn(trx, { userId: r.userId }, { type: 'second_factor.denied', data: { method: 'push_approval', request_id: id, reason: 'factor_removed' } });
      announce ||= stored !== null && !stored.noticeOnCommit;
    }
    if (announce) await this.d.realtime.announce(r.userId); // PGlite: read after this transaction (one connection)
    await this.settleIn(trx, denied);
  }

  /** The user's device tokens the device limit must never retire: the enrolled phone's, and one being enrolled. */
  async pinnedDevices(trx: Db, userId: number): Promise<number[]> {
    const key = await trx.selectFrom('push_approval_keys').select(['device_token_id', 'pending_device_token_id']).where('user_id', '=', userId).executeTakeFirst();
    return key ? [key.device_token_id, ...(key.pending_device_token_id === null ? [] : [key.pending_device_token_id])] : [];
  }

  /**
   * Before the owner deletes or turns off device tokens, in the transaction that does it (the
   * user's row and the device rows locked, so an enrolment's confirmation cannot make one of them
   * the phone's after this look): when one is the enrolled phone's, the session must have proved
   * a second factor in the last 10 minutes (403 STEP_UP_REQUIRED), as for removing any factor: a
   * stolen session must not strip the account of its second factor.
   */
  async authorizeDeviceRemoval(trx: Db, auth: AuthContext, userId: number, deviceIds: readonly number[]): Promise<void> {
    const key = await trx.selectFrom('push_approval_keys').select('device_token_id').where('user_id', '=', userId).where('confirmed_at', 'is not', null).forUpdate().executeTakeFirst();
    if (!key || !deviceIds.includes(key.device_token_id)) return;
    await this.d.challenges.requireRecentStepUp(auth, await this.d.factors.active(userId, trx), trx);
  }

  /** Deletes requests that expired more than a day ago (the hourly limit looks back one hour). */
  async purge(now: Date): Promise<number> {
    const rows = await this.d.db.deleteFrom('push_approval_requests').where('expires_at', '<', new Date(now.getTime() - REQUESTS_KEPT_MS)).returning('id').execute();
    return rows.length;
  }
}
