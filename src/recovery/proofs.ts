/**
 * The checks behind each proof of account recovery, built on the factors that exist: codes by
 * email and SMS through the one-time code service (purpose `recovery`), the authenticator and
 * backup codes, security answers, the password and the PIN.
 *
 * A workflow without a usable account (a decoy) runs the same checks with nothing to match,
 * never passes, and costs the same work: a dummy bcrypt comparison where a real one would run,
 * the same lookups.
 *
 * Guessable proofs also count on a counter that outlives the workflow, with sign-in's limits, so
 * cancelling and starting again buys no guess: the password on the account's lockout (the
 * request channel's limits), the PIN on its own counter with the USSD channel's limits
 * (src/pins), security answers (a knowledge proof, tried only after a possession proof) on
 * sign-in's counter of them (`SECURITY_QUESTION_ATTEMPTS`): recovery adds no guess to what
 * sign-in allows. Authenticator and backup codes, checked by the MFA module's own check, count on
 * a recovery counter of the account with the second factor's limits (`MFA_MAX_FAILURES`): they
 * are possession proofs anyone who starts a recovery may try first, and on sign-in's counter a
 * stranger could keep the owner's second factor locked at sign-in. A decoy's guesses count on
 * counters of the identifier with the same limits, never on an account's. A code sent for this
 * workflow needs no such counter: it is new, random and dies with its three attempts.
 */
import type { AuditContext } from '../audit/service.js';
import { confirmSecret, type SecretCheckDeps } from '../credentials/reauth.js';
import type { PasswordHasher } from '../credentials/hashing.js';
import type { CredentialService } from '../credentials/service.js';
import type { OtpService } from '../mfa/otp/service.js';
import type { MfaContext } from '../mfa/challenge.js';
import { SecurityQuestionStore } from '../mfa/security-questions/store.js';
import type { SecurityQuestionService } from '../mfa/security-questions/service.js';
import type { MfaAttempts } from '../mfa/attempts.js';
import type { TotpService } from '../mfa/totp/service.js';
import { pinKeyOf, type PinService } from '../pins/service.js';
import type { AccessPolicyEngine } from '../access/engine.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import { AppError, CommonErrors, retryLater } from '../platform/errors.js';
import type { AttemptLimits, LoginAttempts } from '../policy/lockout.js';
import type { UserRow } from '../users/store.js';
import type { Proof } from './matrix.js';
import type { WorkflowRow } from './store.js';

/** What a proof's check came to. */
export type CheckOutcome = { kind: 'ok' } | { kind: 'wrong' } | { kind: 'locked'; retryAfterSec: number };

/** A check of one proof; security answers come in the order of the questions asked (internal ids). */
export type ProofCheck =
  | { proof: 'email_code' | 'sms_code' | 'totp' | 'backup_code'; code: string }
  | { proof: 'password'; password: string }
  | { proof: 'pin'; pin: string }
  | { proof: 'security_questions'; asked: number[]; answers: string[] };

/** Who a check is for: the workflow, and its account when it is a real, usable one (else undefined). */
export interface Subject {
  wf: WorkflowRow;
  /** The account checks are made against: undefined for a decoy, whose checks never pass. */
  user: UserRow | undefined;
  /** The account the workflow names, a decoy's too, for the audit trail only. */
  named: UserRow | undefined;
  /** It holds a role beyond the self-service ones: only an alternative with a branch's approval verifies it. */
  privileged: boolean;
  ctx: MfaContext;
  audit: AuditContext;
}

export interface ProofDeps extends SecretCheckDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'mfa' | 'signin' | 'rateLimits' | 'recovery'>;
  otp: OtpService;
  securityQuestions: SecurityQuestionService;
  credentials: CredentialService;
  hasher: PasswordHasher;
  pins: PinService;
  attempts: LoginAttempts;
  /** Sign-in's counters of security answers (a real account's answers count on them). */
  mfaAttempts: MfaAttempts;
  /** The authenticator and backup codes, checked as at sign-in. */
  totp: Pick<TotpService, 'matchesForRecovery'>;
  /** The channels' failed-attempt limits (the PIN's are the USSD channel's). */
  accessPolicy: Pick<AccessPolicyEngine, 'attemptLimits'>;
  /** Keyed hashes that pick a workflow's questions. */
  seeds: Hasher;
}

/** The one-time code challenge of a workflow's code proof. */
export const codeChallenge = (workflowId: string, proof: 'email_code' | 'sms_code'): string => `recovery:${workflowId}:${proof}`;

const ok: CheckOutcome = { kind: 'ok' };
const wrong: CheckOutcome = { kind: 'wrong' };

export class ProofChecks {
  private readonly questionStore: SecurityQuestionStore;

  constructor(private readonly deps: ProofDeps) {
    this.questionStore = new SecurityQuestionStore(deps.db);
  }

  /**
   * The lockout counter (src/policy/lockout.ts) a guessable proof also counts on, beside the
   * workflow's own attempts, with the limits sign-in applies to it: the password's and the PIN's
   * sign-in counters (the account's, or an unknown identifier's); for authenticator and backup
   * codes a counter of recovery's own with the second factor's limits (they are possession
   * proofs a stranger may try before anything else: on sign-in's counter, starting recoveries
   * would lock the owner's second factor at sign-in); for a decoy's security answers a stand-in
   * (a real account's count on sign-in's counter of answers: `countedAnswers`). Null for a code
   * this workflow sent.
   */
  guard(s: Pick<Subject, 'wf' | 'user' | 'ctx'>, proof: Proof): { key: string; limits: AttemptLimits } | null {
    const mfa = this.deps.config.mfa;
    if (proof === 'password') return { key: s.wf.login_key, limits: this.deps.accessPolicy.attemptLimits(s.ctx.channel) };
    if (proof === 'pin') return { key: pinKeyOf(s.wf.login_key), limits: this.deps.accessPolicy.attemptLimits('ussd') }; // as at USSD sign-in
    if (proof === 'totp' || proof === 'backup_code') return { key: `r:mfa:${s.wf.account_hash}`, limits: { maxAttempts: mfa.maxFailures, lockoutMinutes: mfa.lockoutMinutes } };
    if (proof === 'security_questions' && !s.user) return { key: `r:sq:${s.wf.account_hash}`, limits: { maxAttempts: mfa.securityQuestionAttempts, lockoutMinutes: mfa.securityQuestionLockoutMinutes } };
    return null;
  }

  /** Seconds until the proof's counter unlocks (0: not locked). */
  async lockedFor(s: Pick<Subject, 'wf' | 'user' | 'ctx'>, proof: Proof): Promise<number> {
    if (s.user && proof === 'security_questions') return this.deps.mfaAttempts.retryAfter(s.user.id, 'security_questions');
    const g = this.guard(s, proof);
    const until = g ? await this.deps.attempts.lockedUntil(g.key) : null;
    return until === null ? 0 : Math.max(1, Math.ceil((until - this.deps.clock.now()) / 1000));
  }

  /** Runs one check. Only a usable account can pass; a decoy does the same work and fails. */
  async check(s: Subject, c: ProofCheck): Promise<CheckOutcome> {
    const d = this.deps;
    switch (c.proof) {
      case 'email_code':
      case 'sms_code': {
        const right = await d.otp.checkRecovery(codeChallenge(s.wf.id, c.proof), c.code);
        return right && s.user ? ok : wrong;
      }
      case 'totp':
      case 'backup_code': {
        // The MFA module's own check, on recovery's counter of the account (or identifier) with sign-in's limits.
        const method = c.proof;
        return this.guarded(s, method, () => d.totp.matchesForRecovery(s.user, method, c.code, s.ctx));
      }
      case 'security_questions': {
        const match = () => d.securityQuestions.answersMatch(s.user, c.asked, c.answers, s.wf.login_key);
        return s.user ? this.countedAnswers(s.user, match) : this.guarded(s, c.proof, match);
      }
      case 'password':
        return this.secret(s, 'password', c.password);
      case 'pin':
        return this.secret(s, 'pin', c.pin);
    }
  }

  /**
   * Sends a code to the account's contact on file; resolves with the delivery under way (not
   * awaited: the answer must not wait for a mail server a decoy never talks to). With
   * nothing to send to (a decoy, or no such contact) the same statements run: a code row under
   * the workflow's challenge that nothing matches, and nothing is delivered (otp.sendRecovery),
   * so the answer's time tells neither apart from a real request.
   */
  async sendCode(s: Subject, proof: 'email_code' | 'sms_code'): Promise<{ delivered: Promise<void> }> {
    const contact = proof === 'email_code' ? s.user?.email : s.user?.phone;
    const to = s.user && contact ? s.user : undefined;
    // Wrapped, not returned: an async function returning the delivery's promise would wait for it.
    return this.deps.otp.sendRecovery(to, proof === 'email_code' ? 'email' : 'sms', codeChallenge(s.wf.id, proof), s.ctx);
  }

  /**
   * The questions to ask (internal ids): RECOVERY_SECURITY_QUESTIONS (2 or 3) of the account's own, or, for a
   * decoy or an account without answers, of the active pool. Ordered by a keyed hash of the
   * account, so every workflow of an account asks the same ones (no shopping for questions
   * one knows by starting again), and a made-up account gets its own stable set too.
   */
  async pickQuestions(s: Subject): Promise<number[]> {
    const asked = this.deps.config.recovery.securityQuestions;
    const answered = s.user ? (await this.questionStore.answers(s.user.id)).map((a) => a.questionId) : [];
    const candidates = answered.length >= asked ? answered : await this.activePoolIds();
    const rank = (id: number): string => this.deps.seeds.hex(`question:${s.wf.account_hash}:${id}`);
    return [...candidates].sort((a, b) => (rank(a) < rank(b) ? -1 : 1)).slice(0, asked);
  }

  /** The questions of `ids`, in that order, as clients see them (public id and text). */
  async questionViews(ids: readonly number[]): Promise<Array<{ id: string; text: string }>> {
    const rows = new Map((await this.questionStore.questions(ids)).map((q) => [q.id, q]));
    return ids.flatMap((id) => {
      const q = rows.get(id);
      return q ? [{ id: q.uuid, text: q.text }] : [];
    });
  }

  private async activePoolIds(): Promise<number[]> {
    const pool = await this.questionStore.activePool();
    return (await this.questionStore.questionsByUuid(pool.map((q) => q.id))).map((q) => q.id);
  }

  /**
   * Runs `check` of security answers under a reserved attempt of the account's counter of them,
   * as sign-in's check does (src/mfa/security-questions: the same counter, limit and lock): a
   * success clears it.
   */
  private async countedAnswers(user: UserRow, check: () => Promise<boolean>): Promise<CheckOutcome> {
    const d = this.deps;
    const mfa = d.config.mfa;
    const reservation = await d.mfaAttempts.reserve(user.id, 'security_questions', { max: mfa.securityQuestionAttempts, lockMinutes: mfa.securityQuestionLockoutMinutes });
    if (!reservation.ok) return { kind: 'locked', retryAfterSec: reservation.retryAfterSec };
    if (!(await check())) return wrong;
    await d.mfaAttempts.clear(user.id, 'security_questions');
    return ok;
  }

  /** Runs `check` under a reserved attempt of the proof's lockout counter (`guard`). */
  private async guarded(s: Subject, proof: Proof, check: () => Promise<boolean>): Promise<CheckOutcome> {
    const g = this.guard(s, proof)!;
    const r = await this.deps.attempts.attempt(g.key, async () => ((await check()) ? true : null), g.limits);
    if (r.kind === 'ok') return ok;
    if (r.kind === 'failed') return wrong;
    if (r.kind === 'locked') return { kind: 'locked', retryAfterSec: Math.max(1, Math.ceil((r.lockedUntil - this.deps.clock.now()) / 1000)) };
    throw retryLater(CommonErrors.RATE_LIMITED, 1); // every allowed attempt still comparing: nothing was compared
  }

  /**
   * The password or the PIN, checked as re-authentication checks them: on their own sign-in
   * counter (a wrong one counts toward the lockout, ACCOUNT_LOCKED once locked), bounded in
   * flight, one bcrypt comparison (a dummy one without an account).
   */
  private async secret(s: Subject, proof: 'password' | 'pin', value: string): Promise<CheckOutcome> {
    const d = this.deps;
    const lane = s.wf.login_key;
    const { key, limits } = this.guard(s, proof)!;
    const verify = proof === 'password'
      ? async () => (s.user ? d.credentials.verifyCurrent(s.user.id, value, lane) : d.hasher.dummyVerify(value, lane).then(() => false))
      : () => d.pins.verify(s.user, value, lane);
    const who = { userId: s.user?.uuid, username: s.user?.username ?? s.wf.subject_masked };
    try {
      await confirmSecret(d, {
        who, key, limits, verify, boundKey: false, rateCountedByRoute: true,
        reason: `recovery_${proof}`, message: 'The code or answer is not correct.',
      }, s.audit, 'account_recovery');
      return ok;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.code === 'INVALID_CREDENTIALS') return wrong;
      if (err.code === 'ACCOUNT_LOCKED') return { kind: 'locked', retryAfterSec: Number(err.details.retry_after_seconds) || 1 };
      throw err;
    }
  }
}
