import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../platform/db/database.js';
import { SEEDED_QUESTIONS } from '../../platform/db/migrations/005-mfa.js';
import { SecurityQuestionStore } from './store.js';

/** The store on an in-memory PGlite migrated like production. */
let h: DatabaseHandle;
let store: SecurityQuestionStore;
let userId: number;
let otherId: number;
const now = new Date('2026-03-01T10:00:00Z');
const later = (sec: number) => new Date(now.getTime() + sec * 1000);

beforeAll(async () => {
  h = await openDatabase({ kind: 'pglite-memory' }, pino({ level: 'silent' }));
  await h.migrate();
  store = new SecurityQuestionStore(h.db);
  const mk = async (username: string) => (await h.db.insertInto('users').values({ username, email: null, email_bidx: null, phone: null, full_name: null, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow()).id;
  userId = await mk('store.user');
  otherId = await mk('store.other');
});
afterAll(async () => h.close());

describe('question pool', () => {
  it('is seeded with the 32 questions of migration 005, all active', async () => {
    const pool = await store.activePool();
    expect(pool.map((q) => q.text)).toEqual([...SEEDED_QUESTIONS]);
    expect(pool.length).toBeGreaterThanOrEqual(30);
    expect(pool).toHaveLength(32);
    expect(new Set(pool.map((q) => q.id)).size).toBe(32);
  });

  it('refuses the same text in another letter case (null), and retiring hides a question from the pool only', async () => {
    const added = await store.addQuestion('What was your first football team?', 'admin-uuid', now);
    expect(added).toMatchObject({ text: 'What was your first football team?' });
    expect(await store.addQuestion('WHAT WAS YOUR FIRST FOOTBALL TEAM?', 'admin-uuid', now)).toBeNull();
    expect(added!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(await store.retire(added!.id)).toBe(added!.id);
    expect((await store.activePool()).map((q) => q.id)).not.toContain(added!.id);
    const [row] = await store.questionsByUuid([added!.id]);
    expect(row).toEqual({ id: expect.any(Number), uuid: added!.id, text: added!.text, isActive: false });
    expect(await store.questions([row!.id])).toEqual([row]);
    expect(await store.retire('00000000-0000-4000-8000-000000000000')).toBeUndefined();
  });
});

describe('challenges', () => {
  it('round-trips question ids through jsonb', async () => {
    const id = await store.createChallenge(userId, [3, 1, 2], now, later(300));
    expect(await store.findChallenge(id)).toEqual({ id, userId, questionIds: [3, 1, 2], expiresAt: later(300).getTime(), consumedAt: null });
  });

  it('is spent once even by parallel uses, never by another user, never after expiry', async () => {
    const id = await store.createChallenge(userId, [1, 2], now, later(300));
    expect(await store.consumeChallenge(id, otherId, now)).toBe(false);
    expect(await store.consumeChallenge(id, userId, later(300))).toBe(false); // expires_at is exclusive
    const wins = await Promise.all(Array.from({ length: 5 }, () => store.consumeChallenge(id, userId, now)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('pruning keeps only the open challenges (and the one just made)', async () => {
    await store.dropChallenges(userId);
    const spent = await store.createChallenge(userId, [1, 2], now, later(300));
    await store.consumeChallenge(spent, userId, now);
    const expired = await store.createChallenge(userId, [1, 2], later(-600), later(-300));
    const open = await store.createChallenge(userId, [1, 2], now, later(300));
    const keep = await store.createChallenge(userId, [1, 2], later(1), later(301));
    await store.pruneChallenges(userId, keep, now);
    const left = await h.db.selectFrom('security_question_challenges').select('id').where('user_id', '=', userId).execute();
    expect(left.map((r) => r.id).sort()).toEqual([open, keep].sort());
    expect(await store.findChallenge(expired)).toBeUndefined();
    expect((await store.latestChallenge(userId))?.id).toBe(keep);
  });
});
