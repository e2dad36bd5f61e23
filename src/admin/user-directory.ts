/**
 * The administrators' view of users: one user by uuid, or a page of users found by search and
 * filters, with their roles, branches and state. Pages are keyset pages in username order
 * (`lower(username)`, unique, indexed): the opaque cursor holds the last username of a page and
 * the next page starts after it, so no page costs an OFFSET scan over the ones before it.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { decodeCursor, encodeCursor } from '../platform/http/cursor.js';
import type { UserRow, UserStore } from '../users/store.js';

/** What an account is now: `deleted` wins over `disabled`, which wins over `locked`. */
export type UserStatus = 'active' | 'disabled' | 'locked' | 'deleted';

export interface DirectoryUser extends UserRow {
  roles: string[];
  /** The codes of the user's branches. */
  entities: string[];
  /** Until when the password or the PIN is locked after failed attempts; null: not locked. */
  locked_until: Date | string | null;
  updated_at: Date | string;
  status: UserStatus;
}

export interface DirectoryQuery {
  /** Username or full name by substring, or the whole email address or phone number (blind indexes). */
  search?: string;
  role?: string;
  /** A branch code, in any case. */
  entity?: string;
  status?: UserStatus;
  cursor?: string;
  limit: number;
}

/** The opaque cursor after `username`. */
function encodeUserCursor(username: string): string {
  return encodeCursor({ after: username.toLowerCase() });
}

export class UserDirectory {
  constructor(private readonly deps: { db: Db; clock: Clock; users: UserStore }) {}

  /** One user by uuid, deleted or not; undefined when there is none. */
  async byUuid(uuid: string, trx: Db = this.deps.db): Promise<DirectoryUser | undefined> {
    const rows = await this.select(trx, sql`u.uuid = ${uuid}`, 1);
    return rows[0];
  }

  /** A page, and the cursor of the next one (null: this is the last). */
  async page(q: DirectoryQuery): Promise<{ users: DirectoryUser[]; nextCursor: string | null }> {
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, ['after']).after;
    const rows = await this.select(this.deps.db, this.where(q, after), q.limit + 1);
    const more = rows.length > q.limit;
    const users = more ? rows.slice(0, q.limit) : rows;
    return { users, nextCursor: more ? encodeUserCursor(users.at(-1)!.username) : null };
  }

  private where(q: DirectoryQuery, after: string | undefined): RawBuilder<unknown> {
    const { users } = this.deps;
    const now = new Date(this.deps.clock.now());
    const conds: RawBuilder<unknown>[] = [];
    if (q.search) {
      const like = `%${q.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      conds.push(sql`(lower(u.username) LIKE ${like} OR lower(coalesce(u.full_name, '')) LIKE ${like} OR ${users.emailIs(q.search)} OR ${users.phoneIs(q.search)})`);
    }
    if (q.role) conds.push(sql`EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = u.id AND r.name = ${q.role})`);
    if (q.entity) conds.push(sql`EXISTS (SELECT 1 FROM user_entities ue JOIN entities e ON e.id = ue.entity_id WHERE ue.user_id = u.id AND lower(e.code) = ${q.entity.toLowerCase()})`);
    const locked = sql`EXISTS (SELECT 1 FROM login_attempts la WHERE la.subject_key IN ('u:' || u.id, 'p:u:' || u.id) AND la.locked_until > ${now})`;
    if (q.status === 'deleted') conds.push(sql`u.deleted_at IS NOT NULL`);
    else conds.push(sql`u.deleted_at IS NULL`); // deleted accounts are listed only when asked for
    if (q.status === 'active') conds.push(sql`u.is_active AND NOT ${locked}`);
    if (q.status === 'disabled') conds.push(sql`NOT u.is_active`);
    if (q.status === 'locked') conds.push(sql`u.is_active AND ${locked}`);
    if (after !== undefined) conds.push(sql`lower(u.username) > ${after}`);
    return sql.join(conds, sql` AND `);
  }

  private async select(db: Db, where: RawBuilder<unknown>, limit: number): Promise<DirectoryUser[]> {
    const now = new Date(this.deps.clock.now());
    const rows = (await sql<Omit<DirectoryUser, 'status'>>`
      SELECT u.id, u.uuid, u.username, u.email, u.phone, u.full_name, u.language, u.is_active, u.is_service_account,
             u.must_change_password, u.last_login_at, u.created_at, u.updated_at, u.deleted_at,
             ARRAY(SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = u.id ORDER BY r.name) AS roles,
             ARRAY(SELECT e.code FROM user_entities ue JOIN entities e ON e.id = ue.entity_id WHERE ue.user_id = u.id ORDER BY e.code) AS entities,
             (SELECT max(la.locked_until) FROM login_attempts la WHERE la.subject_key IN ('u:' || u.id, 'p:u:' || u.id) AND la.locked_until > ${now}) AS locked_until
      FROM users u WHERE ${where}
      ORDER BY lower(u.username) LIMIT ${limit}`.execute(db)).rows;
    return rows.map((r) => {
      const row = this.deps.users.reveal(r);
      const status: UserStatus = row.deleted_at !== null ? 'deleted' : !row.is_active ? 'disabled' : row.locked_until !== null ? 'locked' : 'active';
      return { ...row, status };
    });
  }
}
