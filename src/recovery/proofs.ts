/**
 * The checks behind each proof of account recovery, built on the factors that exist: codes by
 * email and SMS through the one-time code service (purpose `recovery`), the authenticator and
 * backup codes, security answers, the password and the PIN.
 *
 * A workflow without a usable account (a decoy) runs the same checks with nothing to match,
 * never passes, and costs the same work: a dummy bcrypt comparison where a real one would run,
 * the same lookups. Guessable proofs also count on a counter of the account (or of the
 * identifier, for a decoy) that outlives the workflow, so cancelling and starting again buys no
 * extra guesses: the password and the PIN on their sign-in counters (their lockout), security
 * answers and authenticator or backup codes on counters of their own with the limits those
 * factors have at sign-in. A code sent for this workflow needs no such counter: it is new,
 * random and dies with its three attempts.
 */
import type { AuditContext } from '../audit/service.js';
import { confirmSecret, type SecretCheckDeps } from '../credentials/reauth.js';
import type { PasswordHasher } from '../credentials/hashing.js';
import type { CredentialService } from '../credentials/service.js';
import type { OtpService } from '../mfa/otp/service.js';
import type { MfaContext } from '../mfa/challenge.js';
import { SecurityQuestionStore } from '../mfa/security-questions/store.js';
import type { SecurityQuestionService } from '../mfa/security-questions/service.js';
import type { BackupCodes } from '../mfa/totp/backup-codes.js';
import { consumeStep, findTotp } from '../mfa/totp/store.js';
import { verifyCode } from '../mfa/totp/totp.js';
import { pinKeyOf, type PinService } from '../pins/service.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';
import type { FieldCipher, Hasher } from '../platform/crypto/field-cipher.js';
import type { Db } from '../platform/db/database.js';
import { AppError, CommonErrors, retryLater } from '../platform/errors.js';
import type { AttemptLimits, LoginAttempts } from '../policy/lockout.js';
import type { UserRow } from '../users/store.js';
import type { Proof } from './matrix.js';
import type { WorkflowRow } from './store.js';

/** How many security questions a workflow asks. */
export const QUESTIONS_ASKED = 2;

/** No account has this id (identities start at 1): a decoy's lookups run against it and find nothing. */
const NO_USER = 0;

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
  config: Pick<Config, 'mfa' | 'signin' | 'rateLimits'>;
  otp: OtpService;
  securityQuestions: SecurityQuestionService;
  credentials: CredentialService;
  hasher: PasswordHasher;
  pins: PinService;
  attempts: LoginAttempts;
  /** Decrypts TOTP secrets (ENCRYPTED_COLUMNS.totpSecret). */
  totpCipher: FieldCipher;
  backupCodes: BackupCodes;
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
   * The counter of the account (or identifier) that a guessable proof also counts on, beside the
   * workflow's own attempts; null for a code this workflow sent.
   */
  guard(wf: WorkflowRow, proof: Proof): { key: string; limits: AttemptLimits } | null {
    const mfa = this.deps.config.mfa;
    if (proof === 'password') return { key: wf.login_key, limits: {} };
    if (proof === 'pin') return { key: pinKeyOf(wf.login_key), limits: {} };
    if (proof === 'security_questions') return { key: `r:sq:${wf.account_hash}`, limits: { maxAttempts: mfa.securityQuestionAttempts, lockoutMinutes: mfa.securityQuestionLockoutMinutes } };
    if (proof === 'totp' || proof === 'backup_code') return { key: `r:mfa:${wf.account_hash}`, limits: { maxAttempts: mfa.maxFailures, lockoutMinutes: mfa.lockoutMinutes } };
    return null;
  }

  /** Seconds until the proof's account counter unlocks (0: not locked). */
  async lockedFor(wf: WorkflowRow, proof: Proof): Promise<number> {
    const g = this.guard(wf, proof);
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
        return this.guarded(s.wf, c.proof, () => this.totp(s.user, c.code));
      case 'backup_code':
        // A decoy's lookup runs for an id no account has: the same statement, no row.
        return this.guarded(s.wf, c.proof, () => d.backupCodes.use(d.db, s.user?.id ?? NO_USER, c.code, new Date(d.clock.now())));
      case 'security_questions':
        return this.guarded(s.wf, c.proof, () => d.securityQuestions.answersMatch(s.user, c.asked, c.answers, s.wf.login_key));
      case 'password':
        return this.secret(s, 'password', c.password);
      case 'pin':
        return this.secret(s, 'pin', c.pin);
    }
  }

  /**
   * Sends a code to the account's contact on file; resolves with the delivery under way, or null
   * when there is nothing to send to (a decoy, or no such contact): the caller answers alike.
   */
  async sendCode(s: Subject, proof: 'email_code' | 'sms_code'): Promise<Promise<void> | null> {
    const contact = proof === 'email_code' ? s.user?.email : s.user?.phone;
    if (!s.user || !contact) return null;
    const { delivered } = await this.deps.otp.sendRecovery(s.user, proof === 'email_code' ? 'email' : 'sms', codeChallenge(s.wf.id, proof), s.ctx);
    return delivered;
  }

  /**
   * The questions to ask (internal ids): `QUESTIONS_ASKED` of the account's own, or, for a
   * decoy or an account without answers, of the active pool. Ordered by a keyed hash of the
   * account, so every workflow of an account asks the same ones (no shopping for questions
   * one knows by starting again), and a made-up account gets its own stable set too.
   */
  async pickQuestions(s: Subject): Promise<number[]> {
    const answered = s.user ? (await this.questionStore.answers(s.user.id)).map((a) => a.questionId) : [];
    const candidates = answered.length >= QUESTIONS_ASKED ? answered : await this.activePoolIds();
    const rank = (id: number): string => this.deps.seeds.hex(`question:${s.wf.account_hash}:${id}`);
    return [...candidates].sort((a, b) => (rank(a) < rank(b) ? -1 : 1)).slice(0, QUESTIONS_ASKED);
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

  /** The enrolled authenticator's code, accepted once (RFC 6238 5.2); a decoy reads a factor no account has. */
  private async totp(user: UserRow | undefined, code: string): Promise<boolean> {
    const d = this.deps;
    const factor = await findTotp(d.db, user?.id ?? NO_USER);
    if (!user || factor?.status !== 'active') return false;
    const secret = d.totpCipher.decrypt(factor.secretEnc, ENCRYPTED_COLUMNS.totpSecret.context);
    const step = verifyCode(secret, code, d.clock.now(), d.config.mfa.totpWindow, { algorithm: factor.algorithm });
    return step !== null && consumeStep(d.db, user.id, factor, step);
  }

  /** Runs `check` under a reserved attempt of the proof's account counter. */
  private async guarded(wf: WorkflowRow, proof: Proof, check: () => Promise<boolean>): Promise<CheckOutcome> {
    const g = this.guard(wf, proof)!;
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
    const verify = proof === 'password'
      ? async () => (s.user ? d.credentials.verifyCurrent(s.user.id, value, lane) : d.hasher.dummyVerify(value, lane).then(() => false))
      : () => d.pins.verify(s.user, value, lane);
    const who = { userId: s.user?.uuid, username: s.user?.username ?? s.wf.subject_masked };
    try {
      await confirmSecret(d, {
        who, key: this.guard(s.wf, proof)!.key, verify, boundKey: false, rateCountedByRoute: true,
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
