/**
 * `verify-identity`: one proof per call. Without a value, a code proof sends a code and the
 * security-question proof shows its questions; with one, the proof is checked:
 *
 * 1. refusals that cost nothing: a proof the kind does not offer (400), a finished workflow
 *    (409), a verified one (400), a proof given already (409), a knowledge proof before any
 *    possession proof of its alternative (400), a proof out of attempts (429), no code sent or
 *    questions asked yet (400), an expired code (401);
 * 2. one attempt reserved on the proof's row (at most 3 ever pass, however many arrive at once),
 *    then the check (proofs.ts), which a decoy never passes;
 * 3. a pass moves the workflow on (one transaction with the workflow's row locked, so two proofs
 *    passing at once see each other); a failure is audited, and the third locks the proof and,
 *    when no alternative can still be met, rejects the workflow.
 */
import type { AuditContext, AuditEvent } from '../audit/service.js';
import type { MfaContext } from '../mfa/challenge.js';
import { OtpErrors } from '../mfa/otp/errors.js';
import { SecurityQuestionErrors } from '../mfa/security-questions/errors.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/database.js';
import { CommonErrors, retryLater, type AppError } from '../platform/errors.js';
import type { SessionService } from '../sessions/service.js';
import type { UserRow } from '../users/store.js';
import type { RecoveryNotice } from './notices.js';
import { RecoveryErrors as E } from './errors.js';
import { emailMask, phoneMask } from './masks.js';
import { isMet, knowledgeUnlocked, liveAlternatives, OPERATOR_PROOFS, proofsOf, type Alternative, type Proof } from './matrix.js';
import type { CheckOutcome, ProofCheck, ProofChecks, Subject } from './proofs.js';
import { FINISHED_STATES, type ProofRow, type RecoveryStore, type WorkflowRow } from './store.js';
import { lockedOf, passedOf, PROOF_ATTEMPTS, type RecoveryView } from './view.js';

/** The window of an account's code budget: OTP_MAX_SENDS codes of each kind per hour, all its workflows together. */
const ACCOUNT_SEND_WINDOW_SEC = 3600;

/** The proofs a customer gives through `verify-identity` (a branch's approval is an operator's). */
export const CUSTOMER_PROOFS = ['email_code', 'sms_code', 'totp', 'backup_code', 'security_questions', 'password', 'pin'] as const;
export type CustomerProof = (typeof CUSTOMER_PROOFS)[number];

/** A `verify-identity` body less the handle. */
export interface ProofInput {
  proof: CustomerProof;
  code?: string;
  answers?: Array<{ question_id: string; answer: string }>;
  password?: string;
  pin?: string;
}

/** What `verify-identity` answers: the workflow, and what the step produced. */
export type VerifyAnswer = RecoveryView & {
  sent?: { proof: Proof; destination: string; expires_in: number; resend_after: number };
  questions?: Array<{ id: string; text: string }>;
  reset_token?: string;
  reset_token_expires_in?: number;
  reset_with?: string;
};

type ResetToken = { reset_token: string; reset_token_expires_in: number; reset_with: string };

/** What the steps need of the workflow service. */
export interface StepHost {
  /** The alternatives `wf` is judged by: the ones it started with (service.ts). */
  alternatives(wf: WorkflowRow): readonly Alternative[];
  subject(wf: WorkflowRow, ctx: MfaContext): Promise<Subject>;
  viewOf(wf: WorkflowRow, db?: Db): Promise<RecoveryView>;
  reload(wf: WorkflowRow, db?: Db): Promise<WorkflowRow | undefined>;
  record(wf: WorkflowRow, user: UserRow | undefined, eventType: AuditEvent, status: 'SUCCESS' | 'FAILURE', ctx: AuditContext, details: Record<string, unknown>, trx?: Db): Promise<void>;
  resetToken(kind: 'password' | 'pin', user: UserRow): Promise<ResetToken>;
  /** Tells every contact of the account (in the background). */
  notify(user: UserRow, notice: RecoveryNotice, wf: WorkflowRow, extra?: { until?: Date }): Promise<void>;
  /** The cooling-off of the account (customers' or staff's). */
  coolingOff(trx: Db, user: UserRow): Promise<{ hours: number; basis: 'customer' | 'staff' }>;
  track(p: Promise<unknown>): void;
}

export interface StepDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'mfa'>;
  sessions: SessionService;
  proofs: ProofChecks;
  store: RecoveryStore;
  host: StepHost;
}

/** The field each proof's check takes (none: the proof has no request step). */
const VALUE_FIELD: Record<CustomerProof, { field: 'code' | 'answers' | 'password' | 'pin'; optional: boolean }> = {
  email_code: { field: 'code', optional: true },
  sms_code: { field: 'code', optional: true },
  totp: { field: 'code', optional: false },
  backup_code: { field: 'code', optional: false },
  security_questions: { field: 'answers', optional: true },
  password: { field: 'password', optional: false },
  pin: { field: 'pin', optional: false },
};

/** 422 VALIDATION_ERROR unless the body carries exactly the field its proof takes (or none, where a request is allowed). */
export function assertProofFields(input: ProofInput): void {
  const { field, optional } = VALUE_FIELD[input.proof];
  const problems = (['code', 'answers', 'password', 'pin'] as const).flatMap((f) => {
    if (f === field) return input[f] === undefined && !optional ? [{ location: 'body', field: f, message: `is required for ${input.proof}` }] : [];
    return input[f] === undefined ? [] : [{ location: 'body', field: f, message: `is not taken by ${input.proof}` }];
  });
  if (problems.length > 0) throw CommonErrors.VALIDATION_ERROR({ fields: problems });
}

const proving = (wf: WorkflowRow): boolean => wf.state === 'initiated' || wf.state === 'verifying';

/** A lost password or PIN verified by an operator's approval given last: its reset token waits for the holder (`collect`). */
export const collectable = (wf: WorkflowRow): boolean => wf.state === 'verified' && (wf.kind === 'password' || wf.kind === 'pin');

function lockedError(proof: Proof, seconds: number, attemptsLeft: number): AppError {
  const s = Math.max(1, Math.ceil(seconds));
  return E.RECOVERY_PROOF_LOCKED({ proof, attempts_left: attemptsLeft, retry_after_seconds: s }, { headers: { 'retry-after': String(s) } });
}

export class ProofSteps {
  constructor(private readonly deps: StepDeps) {}

  /** One `verify-identity` call on a loaded (and, when due, expired) workflow. */
  async verify(wf: WorkflowRow, input: ProofInput, ctx: MfaContext): Promise<VerifyAnswer> {
    const d = this.deps;
    const alternatives = d.host.alternatives(wf);
    const proof: Proof = input.proof;
    if (!proofsOf(alternatives).includes(proof)) throw E.RECOVERY_PROOF_NOT_OFFERED({ proof, options: proofsOf(alternatives) });
    if (FINISHED_STATES.includes(wf.state)) throw E.RECOVERY_STALE({ state: wf.state });
    if (collectable(wf)) return this.collect(wf, ctx);
    if (!proving(wf)) throw E.RECOVERY_INVALID_STATE({ state: wf.state, reason: 'already_verified' });
    const rows = await d.store.proofs(d.db, wf.id);
    const row = rows.get(proof);
    // A proof the bank added to the matrix after this workflow started: not one of its proofs.
    if (row === undefined) throw E.RECOVERY_PROOF_NOT_OFFERED({ proof, options: [...rows.keys()] });
    if (row.passed_at !== null) throw E.RECOVERY_PROOF_ALREADY_GIVEN({ proof });
    if (!knowledgeUnlocked(alternatives, proof, passedOf(rows))) throw E.RECOVERY_INVALID_STATE({ state: wf.state, reason: 'possession_proof_first' });
    if (row.attempts >= PROOF_ATTEMPTS) throw E.RECOVERY_PROOF_LOCKED({ proof, attempts_left: 0 });
    const s = await d.host.subject(wf, ctx);
    const value = input[VALUE_FIELD[input.proof].field];
    if (value === undefined && (proof === 'email_code' || proof === 'sms_code')) return this.sendCode(s, row, proof);
    if (value === undefined) return this.questions(s, row); // security_questions: the only other proof with a request step
    return this.attempt(s, row, await this.prepare(s, row, input));
  }

  /** Sends a code (or, for a decoy, says it did), throttled per proof: OTP_RESEND_SECONDS apart, OTP_MAX_SENDS in all. */
  private async sendCode(s: Subject, row: ProofRow, proof: 'email_code' | 'sms_code'): Promise<VerifyAnswer> {
    const d = this.deps;
    const cfg = d.config.mfa;
    const now = new Date(d.clock.now());
    // What the answer shows was fixed at initiate from the identifier typed (service.ts
    // `destinations`); the audit trail, which the caller never sees, keeps the real contact's mask.
    const destination = row.destination_masked ?? '***';
    const live = proof === 'email_code' ? s.user?.email && emailMask(s.user.email) : s.user?.phone && phoneMask(s.user.phone);
    const send = {
      now, resendSec: cfg.otpResendSec, maxSends: cfg.otpMaxSends, codeExpiresAt: new Date(now.getTime() + cfg.otpValiditySec * 1000), destination,
      since: new Date(now.getTime() - ACCOUNT_SEND_WINDOW_SEC * 1000),
    };
    // The account's budget across workflows, reserved atomically with the workflow's own:
    // starting again, or a burst over several workflows (a stranger's too), sends no more.
    const reserved = await d.store.reserveAccountSend(d.db, s.wf.account_hash, s.wf.id, proof, send);
    if (reserved === 'budget_spent') throw retryLater(OtpErrors.OTP_SEND_LIMIT, ACCOUNT_SEND_WINDOW_SEC);
    if (reserved === 'refused') throw await this.sendRefusal(s.wf, proof, now);
    d.host.track((await d.proofs.sendCode(s, proof)).delivered);
    await d.host.record(s.wf, s.named, 'RECOVERY_CODE_SENT', 'SUCCESS', s.audit, { proof, destination: live || destination });
    return { ...(await d.host.viewOf(s.wf)), sent: { proof, destination, expires_in: cfg.otpValiditySec, resend_after: cfg.otpResendSec } };
  }

  private async sendRefusal(wf: WorkflowRow, proof: Proof, now: Date): Promise<AppError> {
    const d = this.deps;
    const current = await d.store.find(d.db, wf.id);
    if (!current || FINISHED_STATES.includes(current.state) || current.expires_at.getTime() <= now.getTime()) return E.RECOVERY_STALE({ state: current?.state ?? 'expired' });
    const row = (await d.store.proofs(d.db, wf.id)).get(proof)!;
    if (row.passed_at !== null) return E.RECOVERY_PROOF_ALREADY_GIVEN({ proof });
    if (row.sends >= d.config.mfa.otpMaxSends) return retryLater(OtpErrors.OTP_SEND_LIMIT, (wf.expires_at.getTime() - now.getTime()) / 1000);
    const next = (row.last_sent_at?.getTime() ?? now.getTime()) + d.config.mfa.otpResendSec * 1000;
    return retryLater(OtpErrors.OTP_RESEND_THROTTLED, (next - now.getTime()) / 1000);
  }

  /** The security questions of this workflow: chosen once, the same on every call. */
  private async questions(s: Subject, row: ProofRow): Promise<VerifyAnswer> {
    const d = this.deps;
    const ids = row.question_ids ?? (await d.store.setQuestions(d.db, s.wf.id, await d.proofs.pickQuestions(s)));
    return { ...(await d.host.viewOf(s.wf)), questions: await d.proofs.questionViews(ids) };
  }

  /** The check to run, once what it needs is there (a code sent and alive, the questions asked and answered each once). */
  private async prepare(s: Subject, row: ProofRow, input: ProofInput): Promise<ProofCheck> {
    const d = this.deps;
    switch (input.proof) {
      case 'email_code':
      case 'sms_code':
        if (row.code_expires_at === null) throw E.RECOVERY_INVALID_STATE({ state: s.wf.state, reason: 'no_code_sent' });
        if (row.code_expires_at.getTime() <= d.clock.now()) throw E.RECOVERY_CODE_EXPIRED();
        return { proof: input.proof, code: input.code! };
      case 'totp':
      case 'backup_code':
        return { proof: input.proof, code: input.code! };
      case 'password':
        return { proof: 'password', password: input.password! };
      case 'pin':
        return { proof: 'pin', pin: input.pin! };
      case 'security_questions': {
        if (row.question_ids === null) throw E.RECOVERY_INVALID_STATE({ state: s.wf.state, reason: 'questions_not_asked' });
        const asked = (await d.proofs.questionViews(row.question_ids)).map((q) => q.id.toLowerCase());
        const byId = new Map(input.answers!.map((a) => [a.question_id.toLowerCase(), a.answer]));
        if (input.answers!.length !== asked.length || byId.size !== asked.length || !asked.every((q) => byId.has(q))) {
          throw SecurityQuestionErrors.SECURITY_ANSWERS_MISMATCH({ question_ids: asked });
        }
        return { proof: 'security_questions', asked: row.question_ids, answers: asked.map((q) => byId.get(q)!) };
      }
    }
  }

  /** Reserves an attempt, checks, and moves the workflow on or counts the failure. */
  private async attempt(s: Subject, row: ProofRow, check: ProofCheck): Promise<VerifyAnswer> {
    const d = this.deps;
    const lockedFor = await d.proofs.lockedFor(s, row.proof);
    if (lockedFor > 0) throw lockedError(row.proof, lockedFor, PROOF_ATTEMPTS - row.attempts); // nothing reserved: the account's counter is locked
    const attempts = await d.store.reserveAttempt(d.db, s.wf.id, row.proof, PROOF_ATTEMPTS);
    if (attempts === undefined) {
      const again = (await d.store.proofs(d.db, s.wf.id)).get(row.proof)!; // a parallel request used the last attempt, or passed
      throw again.passed_at !== null ? E.RECOVERY_PROOF_ALREADY_GIVEN({ proof: row.proof }) : E.RECOVERY_PROOF_LOCKED({ proof: row.proof, attempts_left: 0 });
    }
    const outcome = await d.proofs.check(s, check);
    return outcome.kind === 'ok' ? this.pass(s, row.proof) : this.fail(s, row.proof, attempts, outcome);
  }

  /**
   * A proof passed: recorded; an alternative met verifies the workflow (and completes a password
   * or PIN one). `also`: an event recorded in the same transaction (an operator's approval).
   * 409 RECOVERY_PROOF_ALREADY_GIVEN when a parallel step gave it first.
   */
  async pass(s: Subject, proof: Proof, also?: { event: AuditEvent; details: Record<string, unknown> }): Promise<VerifyAnswer> {
    const d = this.deps;
    const now = new Date(d.clock.now());
    const all = d.host.alternatives(s.wf);
    const alternatives = s.privileged ? all.filter((a) => a.includes('branch_approval')) : all;
    const out = await d.db.transaction().execute(async (trx): Promise<{ stale?: string; given?: true; ended: string[]; token?: ResetToken; waiting?: Date }> => {
      const wf = await d.store.lock(trx, s.wf.id);
      if (!wf || !proving(wf) || wf.expires_at.getTime() <= now.getTime()) return { stale: wf && proving(wf) ? 'expired' : wf?.state ?? 'expired', ended: [] };
      if (!(await d.store.markPassed(trx, wf.id, proof, now))) return { given: true, ended: [] }; // a parallel right answer recorded it first
      await d.host.record(wf, s.named, 'RECOVERY_PROOF_PASSED', 'SUCCESS', s.audit, { proof }, trx);
      if (also) await d.host.record(wf, s.named, also.event, 'SUCCESS', s.audit, also.details, trx);
      if (!isMet(alternatives, passedOf(await d.store.proofs(trx, wf.id)))) {
        await d.store.transition(trx, wf.id, ['initiated'], 'verifying', now);
        return { ended: [] };
      }
      return this.verified(trx, wf, s.user!, s.audit, now, OPERATOR_PROOFS.has(proof));
    });
    if (out.stale !== undefined) throw E.RECOVERY_STALE({ state: out.stale });
    if (out.given) throw E.RECOVERY_PROOF_ALREADY_GIVEN({ proof });
    await d.sessions.announce(out.ended);
    if (out.token) await d.host.notify(s.user!, 'completed', s.wf);
    if (out.waiting) await d.host.notify(s.user!, 'waiting', s.wf, { until: out.waiting });
    return { ...(await d.host.viewOf((await d.host.reload(s.wf))!)), ...out.token };
  }

  /**
   * An alternative is met. A lost password or PIN completes at once: every session (and its
   * refresh family) of the account ends, and the reset token is handed out, this once; but when
   * the proof that met it was an operator's (a branch's approval given last), the operator's
   * request must not carry the token: the workflow is `verified` and waits for the holder of the
   * `recovery_id` to collect it (`collect`). Lost factors or a device start their cooling-off
   * (`waiting`, cooling-off.ts): nothing changes yet, and every contact is told when it will.
   */
  private async verified(trx: Db, wf: WorkflowRow, user: UserRow, audit: AuditContext, now: Date, byOperator: boolean): Promise<{ ended: string[]; token?: ResetToken; waiting?: Date }> {
    const d = this.deps;
    await d.host.record(wf, user, 'RECOVERY_VERIFIED', 'SUCCESS', audit, byOperator ? { by: 'operator' } : {}, trx);
    if (wf.kind !== 'password' && wf.kind !== 'pin') {
      const { hours, basis } = await d.host.coolingOff(trx, user);
      const until = new Date(now.getTime() + hours * 3_600_000);
      await d.store.startWaiting(trx, wf.id, now, until, hours);
      await d.host.record(wf, user, 'RECOVERY_WAITING', 'SUCCESS', audit, { waiting_until: until.toISOString(), cooling_off_hours: hours, basis }, trx);
      return { ended: [], waiting: until };
    }
    if (byOperator) {
      await d.store.transition(trx, wf.id, ['initiated', 'verifying'], 'verified', now);
      return { ended: [] };
    }
    return this.complete(trx, wf, wf.kind, user, audit, now, {});
  }

  /** A lost password or PIN completes: every session of the account ends; the reset token, this once. */
  private async complete(trx: Db, wf: WorkflowRow, kind: 'password' | 'pin', user: UserRow, audit: AuditContext, now: Date, details: Record<string, unknown>): Promise<{ ended: string[]; token: ResetToken }> {
    const d = this.deps;
    await d.store.transition(trx, wf.id, ['initiated', 'verifying', 'verified'], 'completed', now);
    const ended = await d.sessions.endAllForUser(trx, user.id, 'account_recovery');
    const token = await d.host.resetToken(kind, user);
    await d.host.record(wf, user, 'RECOVERY_COMPLETED', 'SUCCESS', audit, { sessions_ended: ended.length, reset_with: token.reset_with, ...details }, trx);
    return { ended, token };
  }

  /**
   * The holder of the `recovery_id` collects the reset token of a password or PIN workflow an
   * operator's approval verified (`status` or `verify-identity`): once (the row locked, a
   * conditional transition), audited RECOVERY_COMPLETED `by: holder`; a parallel call, or one
   * for an account that can no longer sign in, gets the workflow as it stands, without a token.
   */
  async collect(wf: WorkflowRow, ctx: MfaContext): Promise<VerifyAnswer> {
    const d = this.deps;
    const s = await d.host.subject(wf, ctx);
    const now = new Date(d.clock.now());
    const out = await d.db.transaction().execute(async (trx) => {
      const locked = await d.store.lock(trx, wf.id);
      if (!locked || !collectable(locked) || !s.user || locked.expires_at.getTime() <= now.getTime()) return undefined;
      return this.complete(trx, locked, locked.kind as 'password' | 'pin', s.user, s.audit, now, { by: 'holder' });
    });
    const after = (await d.host.reload(wf))!;
    if (!out) return d.host.viewOf(after);
    await d.sessions.announce(out.ended);
    await d.host.notify(s.user!, 'completed', after);
    return { ...(await d.host.viewOf(after)), ...out.token };
  }

  /** A failed check: audited; the last attempt locks the proof, and may reject the workflow. */
  private async fail(s: Subject, proof: Proof, attempts: number, outcome: Exclude<CheckOutcome, { kind: 'ok' }>): Promise<never> {
    const d = this.deps;
    const left = PROOF_ATTEMPTS - attempts;
    await d.host.record(s.wf, s.named, 'RECOVERY_PROOF_FAILED', 'FAILURE', s.audit, { proof, attempts_left: left, reason: outcome.kind === 'locked' ? 'account_counter_locked' : 'wrong' });
    const state = left === 0 ? await this.exhausted(s, proof) : s.wf.state;
    if (outcome.kind === 'locked') throw lockedError(proof, outcome.retryAfterSec, left);
    throw E.RECOVERY_PROOF_INVALID({ attempts_left: left, state });
  }

  /** A proof out of attempts: audited; with no alternative left to meet, the workflow is rejected. Its state after. */
  private async exhausted(s: Subject, proof: Proof): Promise<string> {
    const d = this.deps;
    await d.host.record(s.wf, s.named, 'RECOVERY_PROOF_LOCKED', 'SUCCESS', s.audit, { proof });
    const alternatives = d.host.alternatives(s.wf);
    return d.db.transaction().execute(async (trx) => {
      const wf = await d.store.lock(trx, s.wf.id);
      if (!wf || !proving(wf)) return wf?.state ?? s.wf.state;
      const rows = await d.store.proofs(trx, wf.id);
      if (liveAlternatives(alternatives, passedOf(rows), lockedOf(rows)).length > 0) return wf.state;
      await d.store.transition(trx, wf.id, ['initiated', 'verifying'], 'rejected', new Date(d.clock.now()));
      await d.host.record(wf, s.named, 'RECOVERY_REJECTED', 'SUCCESS', s.audit, { locked: [...lockedOf(rows)] }, trx);
      return 'rejected';
    });
  }
}
