import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../platform/clock.js';
import { openDatabase, type DatabaseHandle } from '../platform/db/database.js';
import { MfaAttempts } from './attempts.js';

/** Attempt reservation on an in-memory PGlite: the limit holds under a burst, and a lock ends. */
let h: DatabaseHandle;
let userId: number;
const start = new Date('2026-03-01T10:00:00Z');

beforeAll(async () => {
  h = await openDatabase({ kind: 'pglite-memory' }, pino({ level: 'silent' }));
  await h.migrate();
  userId = (await h.db.insertInto('users').values({ username: `u-${randomUUID()}`, email: null, phone: null, full_name: null, created_at: start, updated_at: start }).returning('id').executeTakeFirstOrThrow()).id;
});
afterAll(async () => h.close());

describe('MfaAttempts', () => {
  it('20 parallel reservations buy exactly `max` attempts; the rest wait for the lock to end', async () => {
    const clock = new ManualClock(start.getTime());
    const attempts = new MfaAttempts({ db: h.db, clock });
    const limit = { max: 3, lockMinutes: 30 };
    const results = await Promise.all(Array.from({ length: 20 }, () => attempts.reserve(userId, 'security_questions', limit)));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results.find((r) => !r.ok)).toEqual({ ok: false, retryAfterSec: 1800 });
    clock.advance(30 * 60_000 - 1000);
    expect(await attempts.reserve(userId, 'security_questions', limit)).toEqual({ ok: false, retryAfterSec: 1 });
    clock.advance(1000);
    expect(await attempts.reserve(userId, 'security_questions', limit)).toEqual({ ok: true, failedCount: 1 });
  });

  it('a success clears the count; counters of different factors are separate', async () => {
    const clock = new ManualClock(start.getTime());
    const attempts = new MfaAttempts({ db: h.db, clock });
    const limit = { max: 2, lockMinutes: 15 };
    expect(await attempts.reserve(userId, 'second_factor', limit)).toEqual({ ok: true, failedCount: 1 });
    await attempts.clear(userId, 'second_factor');
    expect(await attempts.reserve(userId, 'second_factor', limit)).toEqual({ ok: true, failedCount: 1 });
    expect(await attempts.reserve(userId, 'second_factor', limit)).toEqual({ ok: true, failedCount: 2 });
    expect((await attempts.reserve(userId, 'second_factor', limit)).ok).toBe(false);
    await attempts.clear(userId, 'security_questions');
    expect((await attempts.reserve(userId, 'second_factor', limit)).ok).toBe(false);
  });

  it('failures older than the window start the count again', async () => {
    const clock = new ManualClock(start.getTime() + 86_400_000);
    const attempts = new MfaAttempts({ db: h.db, clock });
    const limit = { max: 3, lockMinutes: 10 };
    await attempts.clear(userId, 'second_factor');
    await attempts.reserve(userId, 'second_factor', limit);
    await attempts.reserve(userId, 'second_factor', limit);
    clock.advance(10 * 60_000 + 1);
    expect(await attempts.reserve(userId, 'second_factor', limit)).toEqual({ ok: true, failedCount: 1 });
  });
});
