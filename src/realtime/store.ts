/**
 * The stored events of the real-time channel (table `realtime_events`, migration 044): written
 * once by the node that publishes, read by every node that holds a socket of the user, and by a
 * resume; deleted once older than REALTIME_RESUME_MINUTES.
 */
import { sql } from 'kysely';
import type { Db } from '../platform/db/database.js';
import { purgeInBatches } from '../platform/db/purge.js';
import type { RealtimeEventType, StoredEvent } from './types.js';

type Row = { id: string | number | bigint; user_id: number; session_id: string | null; type: string; data: unknown; created_at: Date | string };

function toEvent(r: Row): StoredEvent {
  const data = typeof r.data === 'string' ? (JSON.parse(r.data) as Record<string, unknown>) : (r.data as Record<string, unknown>);
  return { id: Number(r.id), userId: r.user_id, sessionId: r.session_id, type: r.type as RealtimeEventType, data, createdAt: new Date(r.created_at).getTime() };
}

export class RealtimeStore {
  constructor(private readonly db: Db) {}

  /**
   * Stores an event for `userId` (or, with `sessionId`, for that session of its user; null when
   * the session names no user any more), in `db` (a caller's transaction) when given. Returns the
   * row's id and user.
   */
  async insert(input: { userId?: number; sessionId?: string; type: RealtimeEventType; data: Record<string, unknown>; at: Date }, db: Db = this.db): Promise<{ id: number; userId: number } | null> {
    const data = JSON.stringify(input.data);
    const row = input.sessionId !== undefined
      ? (await sql<{ id: string; user_id: number }>`INSERT INTO realtime_events (user_id, session_id, type, data, created_at)
          SELECT user_id, session_id, ${input.type}, ${data}::jsonb, ${input.at} FROM sessions WHERE session_id = ${input.sessionId}::uuid
          RETURNING id, user_id`.execute(db)).rows[0]
      : await db.insertInto('realtime_events').values({ user_id: input.userId!, session_id: null, type: input.type, data, created_at: input.at })
        .returning(['id', 'user_id']).executeTakeFirst();
    return row ? { id: Number(row.id), userId: row.user_id } : null;
  }

  /** A user's events after `afterId` and not older than `since`, oldest first, at most `limit`. */
  async after(userId: number, afterId: number, since: Date, limit: number): Promise<StoredEvent[]> {
    const rows = await this.db.selectFrom('realtime_events').select(['id', 'user_id', 'session_id', 'type', 'data', 'created_at'])
      .where('user_id', '=', userId).where(sql<boolean>`id > ${afterId}`).where('created_at', '>=', since)
      .orderBy('id').limit(limit).execute();
    return rows.map(toEvent);
  }

  /**
   * A user's events at or below `upToId` stored since `recent`, oldest first, at most `limit`: ids
   * are taken when a row is written but become visible when it commits, so two nodes (or two
   * transactions) may make a lower id visible after a higher one; delivery looks back this far.
   */
  async recent(userId: number, upToId: number, recent: Date, limit: number): Promise<StoredEvent[]> {
    const rows = await this.db.selectFrom('realtime_events').select(['id', 'user_id', 'session_id', 'type', 'data', 'created_at'])
      .where('user_id', '=', userId).where(sql<boolean>`id <= ${upToId}`).where('created_at', '>=', recent)
      .orderBy('id').limit(limit).execute();
    return rows.map(toEvent);
  }

  /** The id of the user's newest event (0 when none): a new socket receives what comes after it. */
  async latest(userId: number): Promise<number> {
    const row = await this.db.selectFrom('realtime_events').select(sql<string | null>`max(id)`.as('id')).where('user_id', '=', userId).executeTakeFirst();
    return row?.id === null || row?.id === undefined ? 0 : Number(row.id);
  }

  /** Deletes the events older than `cutoff`, in batches. */
  purge(cutoff: Date, stopping?: AbortSignal): Promise<number> {
    return purgeInBatches(async (limit) => {
      const r = await this.db.deleteFrom('realtime_events').where('id', 'in', (eb) => eb.selectFrom('realtime_events').select('id')
        .where('created_at', '<', cutoff).orderBy('created_at').limit(limit)).executeTakeFirst();
      return Number(r.numDeletedRows);
    }, stopping);
  }
}
