/**
 * The request log (migration 036): one row per answered export or portability document (and,
 * later, erasure), with what was sent as `{section: row count}`, never the data. Newest first,
 * paged by an opaque keyset cursor.
 */
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import { decodeCursor, encodeCursor, isCursorTime } from '../../platform/http/cursor.js';

export interface RequestRecord {
  userId: number;
  userUuid: string;
  kind: 'export' | 'portability';
  format: 'json' | 'csv' | 'scim';
  channel: string | null;
  encrypted: boolean;
  sections: Record<string, number>;
  bytes: number;
  at: Date;
}

export interface LoggedRequest {
  id: string;
  user_id: string;
  username: string | null;
  kind: string;
  format: string;
  channel: string | null;
  encrypted: boolean;
  sections: Record<string, number>;
  bytes: number;
  requested_at: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class GdprRequestStore {
  constructor(private readonly db: Db) {}

  async record(trx: Db, r: RequestRecord): Promise<string> {
    const row = await trx.insertInto('gdpr_requests').values({
      user_id: r.userId, user_uuid: r.userUuid, kind: r.kind, format: r.format, channel: r.channel, encrypted: r.encrypted,
      sections: JSON.stringify(r.sections), bytes: r.bytes, requested_at: r.at,
    }).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  /** Newest first; `userUuid` narrows to one person; `cursor` is the previous page's `next_cursor`. */
  async list(f: { userUuid?: string; limit: number; cursor?: string }): Promise<{ requests: LoggedRequest[]; nextCursor: string | null }> {
    let q = this.db.selectFrom('gdpr_requests as g').leftJoin('users as u', 'u.id', 'g.user_id')
      .select(['g.id', 'g.user_uuid', 'u.username', 'g.kind', 'g.format', 'g.channel', 'g.encrypted', 'g.sections', 'g.bytes', 'g.requested_at'])
      .select(sql<string>`to_char(g.requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'));
    if (f.userUuid !== undefined) q = q.where('g.user_uuid', '=', f.userUuid);
    if (f.cursor !== undefined) {
      const after = decodeCursor(f.cursor, ['at', 'id'], (c) => UUID.test(c.id) && isCursorTime(c.at));
      q = q.where((eb) => eb.or([
        eb('g.requested_at', '<', sql<Date>`${after.at}::timestamptz`),
        eb.and([eb('g.requested_at', '=', sql<Date>`${after.at}::timestamptz`), eb('g.id', '>', after.id)]),
      ]));
    }
    const rows = await q.orderBy('g.requested_at', 'desc').orderBy('g.id').limit(f.limit + 1).execute();
    const shown = rows.slice(0, f.limit);
    const last = shown.at(-1);
    return {
      nextCursor: rows.length > f.limit && last ? encodeCursor({ at: last.cursor_at, id: last.id }) : null,
      requests: shown.map((r) => ({
        id: r.id, user_id: r.user_uuid, username: r.username ?? null, kind: r.kind, format: r.format, channel: r.channel, encrypted: r.encrypted,
        sections: (typeof r.sections === 'string' ? JSON.parse(r.sections) : r.sections) as Record<string, number>, bytes: r.bytes, requested_at: new Date(r.requested_at).toISOString(),
      })),
    };
  }
}
