/**
 * Rows of the security-question factor: the question pool (`security_questions`), each user's
 * hashed answers (`user_security_answers`) and verification challenges
 * (`security_question_challenges`). Only hashes reach this layer; answers never do.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';

/** A question as clients see it: `id` is its public id (the uuid). */
export interface PoolQuestion {
  id: string;
  text: string;
}

/** A question with its internal id (the key of answers and challenges) and its public one. */
export interface QuestionRow {
  id: number;
  uuid: string;
  text: string;
  isActive: boolean;
}

export interface StoredAnswer {
  questionId: number;
  hash: string;
}

export interface ChallengeRow {
  id: string;
  userId: number;
  questionIds: number[];
  expiresAt: number;
  consumedAt: number | null;
}

/** Open challenges kept per user; older ones beyond this go when a new one is made. */
export const MAX_OPEN_CHALLENGES = 30;

const time = (d: Date | string): number => new Date(d).getTime();

function toChallenge(r: { id: string; user_id: number; question_ids: unknown; expires_at: Date | string; consumed_at: Date | string | null }): ChallengeRow {
  const ids = typeof r.question_ids === 'string' ? (JSON.parse(r.question_ids) as unknown) : r.question_ids;
  return { id: r.id, userId: r.user_id, questionIds: (ids as number[]).map(Number), expiresAt: time(r.expires_at), consumedAt: r.consumed_at === null ? null : time(r.consumed_at) };
}

export class SecurityQuestionStore {
  constructor(private readonly db: Db) {}

  /** The active pool, oldest first (what a user may choose from), by public id. */
  async activePool(trx: Db = this.db): Promise<PoolQuestion[]> {
    return trx.selectFrom('security_questions').select(['uuid as id', 'text']).where('is_active', '=', true).orderBy('security_questions.id').execute();
  }

  /** Questions by internal id, active or retired (a retired question is still asked of who chose it). */
  async questions(ids: readonly number[], trx: Db = this.db): Promise<QuestionRow[]> {
    if (ids.length === 0) return [];
    return this.rows(trx.selectFrom('security_questions').select(['id', 'uuid', 'text', 'is_active']).where('id', 'in', [...ids]));
  }

  /** Questions by public id (the uuids clients send), active or retired; unknown ones are absent. */
  async questionsByUuid(uuids: readonly string[], trx: Db = this.db): Promise<QuestionRow[]> {
    if (uuids.length === 0) return [];
    return this.rows(trx.selectFrom('security_questions').select(['id', 'uuid', 'text', 'is_active']).where('uuid', 'in', [...uuids]));
  }

  private async rows(q: { execute(): Promise<Array<{ id: number; uuid: string; text: string; is_active: boolean }>> }): Promise<QuestionRow[]> {
    return (await q.execute()).map((r) => ({ id: r.id, uuid: r.uuid, text: r.text, isActive: r.is_active }));
  }

  /** Adds a question; null when the pool already has the same text (any letter case). */
  async addQuestion(text: string, createdBy: string | null, now: Date, trx: Db = this.db): Promise<PoolQuestion | null> {
    const row = await trx.insertInto('security_questions')
      .values({ text, is_active: true, created_at: now, created_by: createdBy })
      .onConflict((oc) => oc.expression(sql`lower(text)`).doNothing())
      .returning(['uuid as id', 'text'])
      .executeTakeFirst();
    return row ?? null;
  }

  /** Takes the question whose public id is `uuid` out of the pool; its uuid, or undefined when there is no such question. */
  async retire(uuid: string, trx: Db = this.db): Promise<string | undefined> {
    const r = await trx.updateTable('security_questions').set({ is_active: false }).where('uuid', '=', uuid).returning('uuid').executeTakeFirst();
    return r?.uuid;
  }

  async answers(userId: number, trx: Db = this.db): Promise<StoredAnswer[]> {
    const rows = await trx.selectFrom('user_security_answers').select(['question_id', 'answer_hash']).where('user_id', '=', userId).orderBy('question_id').execute();
    return rows.map((r) => ({ questionId: r.question_id, hash: r.answer_hash }));
  }

  async countAnswers(userId: number, trx: Db = this.db): Promise<number> {
    const r = await trx.selectFrom('user_security_answers').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async insertAnswers(trx: Db, userId: number, answers: readonly StoredAnswer[], now: Date): Promise<void> {
    await trx.insertInto('user_security_answers')
      .values(answers.map((a) => ({ user_id: userId, question_id: a.questionId, answer_hash: a.hash, created_at: now })))
      .execute();
  }

  /** Removes every answer of the user; how many there were. */
  async deleteAnswers(trx: Db, userId: number): Promise<number> {
    const r = await trx.deleteFrom('user_security_answers').where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async createChallenge(userId: number, questionIds: readonly number[], now: Date, expiresAt: Date, trx: Db = this.db): Promise<string> {
    const row = await trx.insertInto('security_question_challenges')
      .values({ user_id: userId, question_ids: JSON.stringify(questionIds), created_at: now, expires_at: expiresAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async findChallenge(id: string, trx: Db = this.db): Promise<ChallengeRow | undefined> {
    const r = await trx.selectFrom('security_question_challenges').select(['id', 'user_id', 'question_ids', 'expires_at', 'consumed_at']).where('id', '=', id).executeTakeFirst();
    return r ? toChallenge(r) : undefined;
  }

  /** The user's most recent challenge in any state (answered ones are deleted on success). */
  async latestChallenge(userId: number, trx: Db = this.db): Promise<ChallengeRow | undefined> {
    const r = await trx.selectFrom('security_question_challenges').select(['id', 'user_id', 'question_ids', 'expires_at', 'consumed_at'])
      .where('user_id', '=', userId).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
    return r ? toChallenge(r) : undefined;
  }

  /**
   * Spends a challenge: one statement, so of two parallel uses exactly one wins. False when it
   * is not the user's, expired or already spent.
   */
  async consumeChallenge(id: string, userId: number, now: Date, trx: Db = this.db): Promise<boolean> {
    const r = await trx.updateTable('security_question_challenges').set({ consumed_at: now })
      .where('id', '=', id).where('user_id', '=', userId).where('consumed_at', 'is', null).where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Drops the user's spent and expired challenges and open ones beyond the newest few. */
  async pruneChallenges(userId: number, keepId: string, now: Date, trx: Db = this.db): Promise<void> {
    await trx.deleteFrom('security_question_challenges')
      .where('user_id', '=', userId).where('id', '!=', keepId)
      .where((eb) => eb.or([
        eb('consumed_at', 'is not', null),
        eb('expires_at', '<=', now),
        eb('id', 'not in', eb.selectFrom('security_question_challenges').select('id').where('user_id', '=', userId).orderBy('created_at', 'desc').limit(MAX_OPEN_CHALLENGES)),
      ]))
      .execute();
  }

  /** Forgets every challenge of the user (after a success, or when the answers change). */
  async dropChallenges(userId: number, trx: Db = this.db): Promise<void> {
    await trx.deleteFrom('security_question_challenges').where('user_id', '=', userId).execute();
  }

  /** Deletes challenges that can no longer be answered. */
  async purgeExpiredChallenges(nowMs: number): Promise<void> {
    await this.db.deleteFrom('security_question_challenges').where('expires_at', '<', new Date(nowMs)).execute();
  }
}
