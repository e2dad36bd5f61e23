/**
 * Security questions (issue 4 section 4; SPEC "Second factors"): a user picks 3 to 5 questions
 * from the pool and answers them; a verification asks 2 or 3 of them at random.
 *
 * Knowledge-based answers are weak (guessable, often findable): they are never a sign-in factor.
 * They serve step-up for a signed-in session and, with the password, the proof behind an MFA
 * reset request. Design points:
 *
 * - Answers are normalised (normalise.ts), then keyed with HMAC (`codeHasher`, a pepper: a
 *   database dump alone cannot test dictionary guesses) and the 64-hex HMAC is bcrypt-hashed
 *   (never more than bcrypt's 72 bytes, whatever the script of the answer).
 * - The questions asked stay the same until they are answered right: asking again does not
 *   draw new ones, so an attacker who knows some answers cannot shop for the questions they know.
 * - An attempt is reserved before any comparison (burst-safe, attempts.ts); every answer is
 *   compared, so the time taken does not tell which one was wrong.
 */
import { randomInt } from 'node:crypto';
import { lockUserRow, type UserRow } from '../../users/store.js';
import type { MfaContext } from '../challenge.js';
import type { MfaDeps } from '../deps.js';
import { accountLane } from '../../credentials/hashing.js';
import { retryLater } from '../../platform/errors.js';
import { SecurityQuestionErrors as E } from './errors.js';
import { answerLength, MIN_ANSWER_LENGTH, normaliseAnswer } from './normalise.js';
import { SecurityQuestionStore, type PoolQuestion, type QuestionRow, type StoredAnswer } from './store.js';

export const METHOD = 'security_questions';
/** A challenge lives 5 minutes, like a one-time code. */
export const CHALLENGE_TTL_SEC = 300;

/** An answer as a client sends it: `question_id` is the question's public id (a uuid). */
export interface AnswerInput {
  question_id: string;
  answer: string;
}

/** The question ids of answers, as public ids in one spelling (uuids compare without regard to case). */
const questionUuids = (answers: readonly AnswerInput[]): string[] => answers.map((a) => a.question_id.toLowerCase());

export interface ChallengeView {
  challenge_id: string;
  questions: PoolQuestion[];
  expires_in: number;
}

/** Someone acting on another account (an administrator): recorded in the audit entry. */
export interface Operator {
  user: UserRow;
  ctx: MfaContext;
}

/** `count` distinct items of `items`, uniformly at random (partial Fisher-Yates, CSPRNG). */
export function pickRandom<T>(items: readonly T[], count: number, rand: (max: number) => number = randomInt): T[] {
  const a = [...items];
  const n = Math.min(count, a.length);
  for (let i = 0; i < n; i++) {
    const j = i + rand(a.length - i);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, n);
}

export class SecurityQuestionService {
  private readonly store: SecurityQuestionStore;

  constructor(private readonly deps: MfaDeps) {
    this.store = new SecurityQuestionStore(deps.db);
  }

  /** The active question pool. */
  async pool(): Promise<PoolQuestion[]> {
    return this.store.activePool();
  }

  /**
   * Sets the user's questions and answers. `setup`: only when none are set (409 otherwise).
   * `reset`: replaces them (the caller proved the password), and forgets open challenges and
   * the failure count, which were about the old answers.
   */
  async configure(user: UserRow, answers: readonly AnswerInput[], ctx: MfaContext, mode: 'setup' | 'reset'): Promise<{ configured: number; question_ids: string[] }> {
    const d = this.deps;
    if (mode === 'setup' && (await this.store.countAnswers(user.id)) > 0) throw E.SECURITY_QUESTIONS_ALREADY_SET();
    const hashed = await this.prepare(answers, accountLane(user.id)); // bcrypt outside the transaction
    const ids = questionUuids(answers);
    const now = new Date(d.clock.now());
    await d.db.transaction().execute(async (trx) => {
      await lockUserRow(trx, user.id); // concurrent changes to one user's answers, one after another
      if (mode === 'setup' && (await this.store.countAnswers(user.id, trx)) > 0) throw E.SECURITY_QUESTIONS_ALREADY_SET(); // a parallel setup won
      const replaced = await this.store.deleteAnswers(trx, user.id);
      await this.store.insertAnswers(trx, user.id, hashed, now);
      await this.store.dropChallenges(user.id, trx);
      await d.attempts.clear(user.id, METHOD, trx);
      await d.challenges.audit('SECURITY_QUESTIONS_SET', 'SUCCESS', user, ctx, METHOD, { via: mode, question_ids: ids, replaced }, trx);
    });
    return { configured: ids.length, question_ids: ids };
  }

  /** Starts a verification: 2 or 3 of the user's questions (the same ones until answered right). */
  async start(user: UserRow): Promise<ChallengeView> {
    const d = this.deps;
    await this.refuseIfLocked(user);
    const answered = (await this.store.answers(user.id)).map((a) => a.questionId);
    if (answered.length === 0) throw E.SECURITY_QUESTIONS_NOT_SET();
    const previous = await this.store.latestChallenge(user.id);
    const ids = previous && previous.questionIds.every((id) => answered.includes(id))
      ? previous.questionIds
      : pickRandom(answered, 2 + randomInt(2)); // 2 or 3 (SPEC)
    const now = d.clock.now();
    const id = await this.store.createChallenge(user.id, ids, new Date(now), new Date(now + CHALLENGE_TTL_SEC * 1000));
    await this.store.pruneChallenges(user.id, id, new Date(now));
    const rows = new Map((await this.store.questions(ids)).map((q) => [q.id, q]));
    const questions = ids.map((q) => rows.get(q)!).map((q) => ({ id: q.uuid, text: q.text }));
    return { challenge_id: id, questions, expires_in: CHALLENGE_TTL_SEC };
  }

  /**
   * Checks the answers to a challenge; returns normally only when every one is right. The
   * challenge is spent whatever the outcome (a wrong try needs a new challenge).
   */
  async verify(user: UserRow, challengeId: string, answers: readonly AnswerInput[], ctx: MfaContext): Promise<void> {
    const d = this.deps;
    const now = new Date(d.clock.now());
    const challenge = await this.store.findChallenge(challengeId);
    if (!challenge || challenge.userId !== user.id) throw E.SECURITY_CHALLENGE_INVALID({ reason: 'unknown' });
    if (challenge.consumedAt !== null) throw E.SECURITY_CHALLENGE_INVALID({ reason: 'used' });
    if (challenge.expiresAt <= now.getTime()) throw E.SECURITY_CHALLENGE_INVALID({ reason: 'expired' });
    const given = await this.internalIds(questionUuids(answers));
    if (given.length !== challenge.questionIds.length || new Set(given).size !== given.length || !given.every((q) => q !== undefined && challenge.questionIds.includes(q))) {
      const asked = new Map((await this.store.questions(challenge.questionIds)).map((q) => [q.id, q.uuid]));
      throw E.SECURITY_ANSWERS_MISMATCH({ question_ids: challenge.questionIds.map((q) => asked.get(q)) });
    }
    if (!(await this.store.consumeChallenge(challengeId, user.id, now))) throw E.SECURITY_CHALLENGE_INVALID({ reason: 'used' });

    const limit = { max: d.config.mfa.securityQuestionAttempts, lockMinutes: d.config.mfa.securityQuestionLockoutMinutes };
    const reservation = await d.attempts.reserve(user.id, METHOD, limit);
    if (!reservation.ok) throw this.lockedError(reservation.retryAfterSec);

    const stored = new Map((await this.store.answers(user.id)).map((a) => [a.questionId, a.hash]));
    // Every answer is compared, in parallel, with no early exit: timing does not say which was wrong.
    const results = await Promise.all(answers.map((a, i) => d.hasher.verify(this.pepper(normaliseAnswer(a.answer)), stored.get(given[i]!) ?? null, accountLane(user.id))));
    if (results.every(Boolean)) {
      await d.db.transaction().execute(async (trx) => {
        await d.attempts.clear(user.id, METHOD, trx);
        await this.store.dropChallenges(user.id, trx); // the next verification draws new questions
        await d.challenges.audit('SECURITY_QUESTIONS_VERIFIED', 'SUCCESS', user, ctx, METHOD, { challenge_id: challengeId, question_ids: questionUuids(answers) }, trx);
      });
      return;
    }
    await d.challenges.audit('SECURITY_QUESTIONS_FAILED', 'FAILURE', user, ctx, METHOD, { challenge_id: challengeId, failed_count: reservation.failedCount });
    if (reservation.failedCount >= limit.max) {
      const retryAfter = limit.lockMinutes * 60; // this very failure set the lock
      await d.challenges.audit('SECURITY_QUESTIONS_LOCKED', 'SUCCESS', user, ctx, METHOD, { locked_for_seconds: retryAfter });
      throw this.lockedError(retryAfter);
    }
    throw E.SECURITY_ANSWERS_INVALID({ attempts_remaining: limit.max - reservation.failedCount });
  }

  /**
   * Account recovery (src/recovery): whether `answers` (one per question of `asked`, internal
   * ids, in that order) are the user's. Every answer is compared, in parallel, with no early
   * exit; a question the user has no answer for, or no user at all (a made-up account), costs a
   * dummy comparison, so the time taken tells none of them apart. No counter, no audit: the
   * workflow reserves its attempts before calling this, and audits the outcome.
   */
  async answersMatch(user: UserRow | undefined, asked: readonly number[], answers: readonly string[], lane: string): Promise<boolean> {
    const d = this.deps;
    const stored = new Map(user ? (await this.store.answers(user.id)).map((a) => [a.questionId, a.hash]) : []);
    const results = await Promise.all(asked.map(async (q, i) => {
      const hash = stored.get(q);
      const given = this.pepper(normaliseAnswer(answers[i] ?? ''));
      if (hash === undefined) return d.hasher.dummyVerify(given, lane).then(() => false);
      return d.hasher.verify(given, hash, lane);
    }));
    return user !== undefined && results.length > 0 && results.every(Boolean);
  }

  /** An administrator removes every question and answer of `target`; how many there were. */
  async removeForUser(target: UserRow, by: Operator): Promise<number> {
    const d = this.deps;
    return d.db.transaction().execute(async (trx) => {
      await lockUserRow(trx, target.id);
      const deleted = await this.store.deleteAnswers(trx, target.id);
      await this.store.dropChallenges(target.id, trx);
      await d.attempts.clear(target.id, METHOD, trx);
      await d.challenges.audit('SECURITY_QUESTIONS_DELETED', 'SUCCESS', target, by.ctx, METHOD, { deleted, actor_id: by.user.uuid, actor_username: by.user.username }, trx);
      return deleted;
    });
  }

  /** Takes a question (by public id) out of the pool; users who chose it keep it until they reset theirs. Its uuid. */
  async retire(questionUuid: string, by: Operator): Promise<string> {
    const d = this.deps;
    return d.db.transaction().execute(async (trx) => {
      const retired = await this.store.retire(questionUuid, trx);
      if (retired === undefined) throw E.SECURITY_QUESTION_NOT_FOUND();
      await d.challenges.audit('SECURITY_QUESTION_RETIRED', 'SUCCESS', by.user, by.ctx, null, { question_id: retired }, trx);
      return retired;
    });
  }

  /** Adds a question to the pool (409 when the same text is there, in any letter case). */
  async add(text: string, by: Operator): Promise<PoolQuestion> {
    const d = this.deps;
    const clean = text.normalize('NFC').replace(/\s+/gu, ' ').trim();
    return d.db.transaction().execute(async (trx) => {
      const added = await this.store.addQuestion(clean, by.user.uuid, new Date(d.clock.now()), trx);
      if (!added) throw E.SECURITY_QUESTION_EXISTS();
      await d.challenges.audit('SECURITY_QUESTION_ADDED', 'SUCCESS', by.user, by.ctx, null, { question_id: added.id }, trx);
      return added;
    });
  }

  /** Validates a set of answers and hashes them (422 with a specific code for each rule). */
  private async prepare(answers: readonly AnswerInput[], lane: string): Promise<StoredAnswer[]> {
    const ids = questionUuids(answers);
    if (new Set(ids).size !== ids.length) throw E.SECURITY_QUESTIONS_DUPLICATE();
    const normalised = answers.map((a) => normaliseAnswer(a.answer));
    const short = ids.filter((_, i) => answerLength(normalised[i]!) < MIN_ANSWER_LENGTH);
    if (short.length > 0) throw E.SECURITY_ANSWER_TOO_SHORT({ question_ids: short, min_length: MIN_ANSWER_LENGTH });
    if (new Set(normalised).size !== normalised.length) throw E.SECURITY_ANSWERS_DUPLICATE();
    const active = new Map((await this.store.questionsByUuid(ids)).filter((q) => q.isActive).map((q) => [q.uuid, q.id]));
    const unknown = ids.filter((id) => !active.has(id));
    if (unknown.length > 0) throw E.SECURITY_QUESTION_UNKNOWN({ question_ids: unknown });
    const hashes = await Promise.all(normalised.map((n) => this.deps.hasher.hash(this.pepper(n), lane)));
    return ids.map((uuid, i) => ({ questionId: active.get(uuid)!, hash: hashes[i]! }));
  }

  /** The internal ids of questions named by public id, in order (undefined for an unknown one). */
  private async internalIds(uuids: readonly string[]): Promise<Array<number | undefined>> {
    const rows: QuestionRow[] = await this.store.questionsByUuid([...new Set(uuids)]);
    const byUuid = new Map(rows.map((q) => [q.uuid, q.id]));
    return uuids.map((u) => byUuid.get(u));
  }

  /** HMAC of the normalised answer under a server key: what bcrypt hashes (see the file head). */
  private pepper(normalised: string): string {
    return this.deps.codeHasher.hex(`security-answer:${normalised}`);
  }

  private async refuseIfLocked(user: UserRow): Promise<void> {
    const retryAfter = await this.deps.attempts.retryAfter(user.id, METHOD);
    if (retryAfter > 0) throw this.lockedError(retryAfter);
  }

  private lockedError(retryAfterSec: number) {
    return retryLater(E.SECURITY_QUESTIONS_LOCKED, retryAfterSec);
  }

  /** Clean-up job: challenges past their expiry. */
  purgeExpiredChallenges(): Promise<void> {
    return this.store.purgeExpiredChallenges(this.deps.clock.now());
  }
}
