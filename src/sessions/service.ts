/**
 * Sessions (SPEC "Session", Authentication 5 and 6).
 *
 * Validation runs on every authenticated request, so each node caches session rows. Ending a
 * session reaches other nodes by NOTIFY at once; a periodic re-sync of recently ended sessions
 * bounds staleness to `CACHE_SYNC_MS` if a notification is lost. `last_activity` is written at
 * most once per `SESSION_ACTIVITY_WRITE_SECONDS` per session, not on every request; before a
 * session is declared inactive the row is re-read, so activity seen by another node counts.
 */
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Config } from '../platform/config.js';
import type { Clock } from '../platform/clock.js';
import type { EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import { safeEqual } from '../platform/crypto/field-cipher.js';
import type { SensitiveColumns } from '../platform/crypto/sensitive.js';
import { newAesKey } from '../transport/crypto.js';
import { TokenErrors } from '../tokens/errors.js';
import { SessionErrors } from './errors.js';
import { ENCRYPTED_COLUMNS } from '../platform/crypto/columns.js';

export type EndReason =
  | 'logout' | 'logout_all' | 'inactivity' | 'expired' | 'superseded' | 'concurrency_limit'
  | 'refresh_reuse' | 'password_changed' | 'pin_changed' | 'admin' | 'device_revoked' | 'idp_logout' | 'account_recovery' | 'erasure_requested' | 'reported_not_me'
  | 'fraud_reported';

export interface Session {
  sessionId: string;
  userId: number;
  createdAt: number;
  lastActivity: number;
  expiresAt: number;
  deviceFingerprint: string;
  ipAddress: string;
  userAgent: string;
  isActive: boolean;
  mfaCompleted: boolean;
  channel: string;
  /** This session's inactivity timeout (its channel policy's when it was opened); null: SESSION_INACTIVITY_MINUTES. */
  idleTimeoutSec: number | null;
  /** The 256-bit transport session key (SPEC "Session" aes_key), and when it stops working. */
  aesKey: Buffer | null;
  aesKeyExpiresAt: number | null;
}

/** What the channel's access policy sets for a new session; absent: the server's settings. */
export interface SessionLimits {
  inactivitySec?: number;
  /** Sessions the user may hold on this channel; MAX_CONCURRENT_SESSIONS still bounds every channel together. */
  maxConcurrent?: number;
}

export interface NewSession {
  userId: number;
  deviceFingerprint: string;
  ipAddress: string;
  userAgent: string;
  channel: string;
  mfaCompleted: boolean;
  limits?: SessionLimits;
}

interface CacheEntry {
  session: Session;
  /** last_activity as the database holds it. */
  dbLastActivity: number;
  fetchedAt: number;
}

/** How long a cached row is trusted for fields other than revocation (which is pushed). */
const CACHE_TTL_MS = 30_000;
const SYNC_SLACK_MS = 60_000;

type Row = {
  session_id: string; user_id: number; created_at: Date | string; last_activity: Date | string; expires_at: Date | string;
  device_fingerprint: string; ip_address: string; user_agent: string; is_active: boolean; mfa_completed: boolean; channel: string;
  idle_timeout_sec: number | null; aes_key: string | null; aes_key_expires_at: Date | string | null;
};

const AES_KEY_COLUMN = ENCRYPTED_COLUMNS.sessionKey.context;

const ms = (d: Date | string): number => new Date(d).getTime();

function toSession(r: Row, sensitive: SensitiveColumns): Session {
  return {
    aesKey: r.aes_key === null ? null : Buffer.from(sensitive.reveal(r.aes_key, AES_KEY_COLUMN), 'hex'),
    aesKeyExpiresAt: r.aes_key_expires_at === null ? null : ms(r.aes_key_expires_at),
    sessionId: r.session_id, userId: r.user_id, createdAt: ms(r.created_at), lastActivity: ms(r.last_activity),
    expiresAt: ms(r.expires_at), deviceFingerprint: r.device_fingerprint, ipAddress: r.ip_address, userAgent: r.user_agent,
    isActive: r.is_active, mfaCompleted: r.mfa_completed, channel: r.channel, idleTimeoutSec: r.idle_timeout_sec,
  };
}

const COLUMNS = [
  'session_id', 'user_id', 'created_at', 'last_activity', 'expires_at', 'device_fingerprint', 'ip_address',
  'user_agent', 'is_active', 'mfa_completed', 'channel', 'idle_timeout_sec', 'aes_key', 'aes_key_expires_at',
] as const;

/** A session that ended, as `onEnded` listeners hear of it on the node that ended it. */
export interface EndedSession {
  sessionId: string;
  userId: number;
  reason: string | null;
}

export class SessionService {
  private readonly cache = new Map<string, CacheEntry>();
  private syncedUpTo = 0;
  private readonly endedListeners: Array<(ended: EndedSession[]) => void> = [];
  private readonly rekeyListeners: Array<(session: Session) => void> = [];

  constructor(
    private readonly deps: { db: Db; clock: Clock; bus: EventBus; config: Config['sessions']; maxLifetimeSec: number; sessionKeyTtlSec: number; sensitive: SensitiveColumns },
  ) {
    deps.bus.subscribe((e) => {
      if (e.type === 'session.ended' || e.type === 'session.changed') this.cache.delete(e.sessionId);
    });
    deps.bus.onReconnect(() => this.cache.clear());
  }

  /** How long a session whose own timeout is `ownSec` (null: the server's) may go without a request. */
  private idleMs(ownSec: number | null): number {
    return (ownSec ?? this.deps.config.inactivitySec) * 1000;
  }

  /**
   * Creates a session inside `trx`, ending others as the mode requires: single mode ends every
   * other session; multi mode ends the oldest beyond `MAX_CONCURRENT_SESSIONS` (ruling 7), and
   * the oldest on this channel beyond the channel policy's limit. Returns the ids it ended so
   * the caller can announce them after commit.
   */
  async create(trx: Db, input: NewSession): Promise<{ session: Session; ended: string[] }> {
    const now = this.deps.clock.now();
    // Serialise sign-ins of one user so two parallel ones cannot both slip under the limit.
    await sql`SELECT id FROM users WHERE id = ${input.userId} FOR UPDATE`.execute(trx);
    const active = await trx
      .selectFrom('sessions')
      .select(['session_id', 'last_activity', 'expires_at', 'channel', 'idle_timeout_sec'])
      .where('user_id', '=', input.userId)
      .where('is_active', '=', true)
      .orderBy('created_at', 'asc')
      .execute();
    const stale = active.filter((s) => ms(s.expires_at) <= now || now - ms(s.last_activity) > this.idleMs(s.idle_timeout_sec));
    const live = active.filter((s) => !stale.includes(s));
    const overall = this.deps.config.mode === 'single' ? live : live.slice(0, Math.max(0, live.length - this.deps.config.maxConcurrent + 1));
    const channelLimit = input.limits?.maxConcurrent;
    const sameChannel = live.filter((s) => !overall.includes(s) && s.channel === input.channel);
    const overChannel = channelLimit === undefined ? [] : sameChannel.slice(0, Math.max(0, sameChannel.length - channelLimit + 1));
    const excess = [...overall, ...overChannel];
    await this.endMany(trx, stale.map((s) => s.session_id), 'inactivity', input.userId);
    await this.endMany(trx, excess.map((s) => s.session_id), this.deps.config.mode === 'single' ? 'superseded' : 'concurrency_limit', input.userId);

    const aesKey = newAesKey();
    const session: Session = {
      sessionId: randomUUID(), userId: input.userId, createdAt: now, lastActivity: now,
      expiresAt: now + this.deps.maxLifetimeSec * 1000, deviceFingerprint: input.deviceFingerprint, ipAddress: input.ipAddress,
      userAgent: input.userAgent.slice(0, 512), isActive: true, mfaCompleted: input.mfaCompleted, channel: input.channel,
      idleTimeoutSec: input.limits?.inactivitySec ?? null, aesKey, aesKeyExpiresAt: now + this.deps.sessionKeyTtlSec * 1000,
    };
    await trx.insertInto('sessions').values({
      session_id: session.sessionId, user_id: session.userId, created_at: new Date(now), last_activity: new Date(now),
      expires_at: new Date(session.expiresAt), device_fingerprint: session.deviceFingerprint, ip_address: session.ipAddress,
      user_agent: session.userAgent, is_active: true, mfa_completed: session.mfaCompleted, channel: session.channel,
      idle_timeout_sec: session.idleTimeoutSec, aes_key: this.deps.sensitive.protect(aesKey.toString('hex'), AES_KEY_COLUMN), aes_key_expires_at: new Date(session.aesKeyExpiresAt!),
      ended_at: null, end_reason: null,
    }).execute();
    await this.history(trx, session.sessionId, session.userId, 'created', null);
    return { session, ended: [...stale, ...excess].map((s) => s.session_id) };
  }

  /**
   * SPEC Authentication 5: look up, not expired, not inactive, same device. Records no
   * activity: the caller does (`recordActivity`) once the request is allowed, or writes the
   * session row itself (refresh).
   */
  async validate(sessionId: string, fingerprint: string): Promise<Session> {
    const now = this.deps.clock.now();
    let entry = this.cache.get(sessionId);
    if (!entry || now - entry.fetchedAt > CACHE_TTL_MS) entry = await this.load(sessionId, entry);
    if (!entry || !entry.session.isActive) throw SessionErrors.SESSION_INVALID();
    const s = entry.session;
    if (now >= s.expiresAt) {
      await this.end(sessionId, 'expired');
      throw SessionErrors.SESSION_EXPIRED();
    }
    if (now - s.lastActivity > this.idleMs(s.idleTimeoutSec)) {
      // Another node may have seen activity that this cache has not: ask the database.
      entry = await this.load(sessionId, entry);
      if (!entry || !entry.session.isActive) throw SessionErrors.SESSION_INVALID();
      if (now - entry.session.lastActivity > this.idleMs(entry.session.idleTimeoutSec)) {
        await this.end(sessionId, 'inactivity');
        throw SessionErrors.SESSION_EXPIRED();
      }
    }
    if (entry.session.deviceFingerprint !== '' && fingerprint === '') throw TokenErrors.FINGERPRINT_REQUIRED();
    if (entry.session.deviceFingerprint !== '' && !safeEqual(entry.session.deviceFingerprint, fingerprint)) {
      throw TokenErrors.FINGERPRINT_MISMATCH();
    }
    return entry.session;
  }

  /**
   * A request of `session` was allowed: its activity, written at most every
   * SESSION_ACTIVITY_WRITE_SECONDS and at least twice per idle timeout, so a short channel
   * timeout sees the activity other nodes (and this one, after a reload) had.
   */
  async recordActivity(session: Session): Promise<void> {
    const now = this.deps.clock.now();
    session.lastActivity = now;
    const entry = this.cache.get(session.sessionId);
    if (!entry) return; // ended meanwhile
    entry.session.lastActivity = now; // the same object, or a copy reloaded meanwhile
    const writeEveryMs = Math.min(this.deps.config.activityWriteSec * 1000, this.idleMs(session.idleTimeoutSec) / 2);
    if (now - entry.dbLastActivity < writeEveryMs) return;
    entry.dbLastActivity = now;
    await this.deps.db.updateTable('sessions').set({ last_activity: new Date(now) }).where('session_id', '=', session.sessionId).where('is_active', '=', true).execute();
  }

  /** Reads the row; activity this node saw and has not written yet (`seen`) is kept. */
  private async load(sessionId: string, seen?: CacheEntry): Promise<CacheEntry | undefined> {
    const row = await this.deps.db.selectFrom('sessions').select(COLUMNS).where('session_id', '=', sessionId).executeTakeFirst();
    if (!row) {
      this.cache.delete(sessionId);
      return undefined;
    }
    const session = toSession(row, this.deps.sensitive);
    const dbLastActivity = session.lastActivity;
    if (seen && seen.session.lastActivity > session.lastActivity) session.lastActivity = seen.session.lastActivity;
    const entry = { session, dbLastActivity, fetchedAt: this.deps.clock.now() };
    if (session.isActive) this.cache.set(sessionId, entry);
    else this.cache.delete(sessionId);
    return entry;
  }

  /** The session's transport key while it is valid (24 hours by default), else null. */
  sessionKey(session: Session): Buffer | null {
    return session.aesKey !== null && session.aesKeyExpiresAt !== null && session.aesKeyExpiresAt > this.deps.clock.now() ? session.aesKey : null;
  }

  /**
   * A new transport key for a session (on refresh), valid for the key lifetime from now: the
   * key, and the `sessions` columns that store it, for the caller to write (alone or inside a
   * larger statement). Once that has committed, `rekeyed` puts the key in use.
   */
  newKey(): { key: Buffer; expiresAt: number; set: { aes_key: string; aes_key_expires_at: Date } } {
    const key = newAesKey();
    const expiresAt = this.deps.clock.now() + this.deps.sessionKeyTtlSec * 1000;
    return { key, expiresAt, set: { aes_key: this.deps.sensitive.protect(key.toString('hex'), AES_KEY_COLUMN), aes_key_expires_at: new Date(expiresAt) } };
  }

  /** The SQL that tells other nodes a session changed, to fold into the statement that changes it. */
  changedNotice(sessionId: string): RawBuilder<unknown> {
    return this.deps.bus.remoteNotice({ type: 'session.changed', sessionId });
  }

  /**
   * After the statement that stored the new key (with `last_activity = activityAt`, and
   * carrying `changedNotice`) committed: this node uses the key at once; other nodes drop
   * their copy when the notice reaches them.
   */
  rekeyed(session: Session, key: Buffer, expiresAt: number, activityAt: number): void {
    session.aesKey = key;
    session.aesKeyExpiresAt = expiresAt;
    session.lastActivity = activityAt;
    const entry = this.cache.get(session.sessionId);
    if (entry?.session === session) entry.dbLastActivity = activityAt; // the cached copy is this one: current
    else this.cache.delete(session.sessionId);
    for (const l of this.rekeyListeners) l(session);
  }

  /** Adds a listener told, on this node, of each session given a new key (other nodes hear `session.changed`). Must not throw nor block. */
  onRekeyed(listener: (session: Session) => void): void {
    this.rekeyListeners.push(listener);
  }

  /**
   * Adds a listener told, on the node that ended them, of the sessions `announce` announces, with
   * their users and reasons (every node hears `session.ended`, which carries only the id). Must
   * not throw nor block.
   */
  onEnded(listener: (ended: EndedSession[]) => void): void {
    this.endedListeners.push(listener);
  }

  /** Reads the database, bypassing the cache. */
  async get(sessionId: string): Promise<Session | undefined> {
    return (await this.load(sessionId))?.session;
  }

  /** The cached session when fresh, else from the database. */
  async current(sessionId: string): Promise<Session | undefined> {
    const entry = this.cache.get(sessionId);
    if (entry && this.deps.clock.now() - entry.fetchedAt <= CACHE_TTL_MS) return entry.session;
    return this.get(sessionId);
  }

  /**
   * A user's active sessions within their lifetime, oldest first, read from the database. One
   * idle too long is still listed until its next request ends it: `last_activity` is written at
   * most every SESSION_ACTIVITY_WRITE_SECONDS, so the database alone cannot tell it is idle.
   */
  async activeOf(userId: number): Promise<Session[]> {
    const rows = await this.deps.db.selectFrom('sessions').select(COLUMNS)
      .where('user_id', '=', userId).where('is_active', '=', true).where('expires_at', '>', new Date(this.deps.clock.now()))
      .orderBy('created_at', 'asc').orderBy('session_id').execute();
    return rows.map((r) => toSession(r, this.deps.sensitive));
  }

  /** When `session` ends for inactivity unless a request comes first (as far as its recorded activity tells). */
  idleEndsAt(session: Session): number {
    return session.lastActivity + this.idleMs(session.idleTimeoutSec);
  }

  /** Ends one session and tells every node. */
  async end(sessionId: string, reason: EndReason): Promise<boolean> {
    const ended = await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('sessions').select('user_id').where('session_id', '=', sessionId).where('is_active', '=', true).executeTakeFirst();
      if (!row) return false;
      await this.endMany(trx, [sessionId], reason, row.user_id);
      return true;
    });
    await this.announce([sessionId]);
    return ended;
  }

  /** Ends every active session of a user (of one channel, when given) but `except`; returns their ids. */
  async endAllForUser(trx: Db, userId: number, reason: EndReason, except?: string, channel?: string): Promise<string[]> {
    let q = trx.selectFrom('sessions').select('session_id').where('user_id', '=', userId).where('is_active', '=', true);
    if (except !== undefined) q = q.where('session_id', '!=', except);
    if (channel !== undefined) q = q.where('channel', '=', channel);
    const rows = await q.execute();
    const ids = rows.map((r) => r.session_id);
    await this.endMany(trx, ids, reason, userId);
    return ids;
  }

  /** Marks sessions ended inside `trx` and revokes their refresh families. Call `announce` after commit. */
  async endMany(trx: Db, ids: string[], reason: EndReason, userId: number): Promise<void> {
    if (ids.length === 0) return;
    const now = new Date(this.deps.clock.now());
    await trx.updateTable('sessions').set({ is_active: false, ended_at: now, end_reason: reason }).where('session_id', 'in', ids).where('is_active', '=', true).execute();
    await trx.updateTable('refresh_families').set({ revoked_at: now, revoke_reason: `session_${reason}` }).where('session_id', 'in', ids).where('revoked_at', 'is', null).execute();
    for (const id of ids) await this.history(trx, id, userId, 'ended', reason);
  }

  async announceChanged(sessionId: string): Promise<void> {
    await this.deps.bus.publish({ type: 'session.changed', sessionId });
  }

  async announce(ids: string[]): Promise<void> {
    for (const id of ids) await this.deps.bus.publish({ type: 'session.ended', sessionId: id });
    if (ids.length === 0 || this.endedListeners.length === 0) return;
    const rows = await this.deps.db.selectFrom('sessions').select(['session_id', 'user_id', 'end_reason']).where('session_id', 'in', ids).where('is_active', '=', false).execute();
    const ended = rows.map((r) => ({ sessionId: r.session_id, userId: r.user_id, reason: r.end_reason }));
    if (ended.length > 0) for (const l of this.endedListeners) l(ended);
  }

  private async history(trx: Db, sessionId: string, userId: number, event: string, reason: string | null): Promise<void> {
    await trx.insertInto('session_history').values({ session_id: sessionId, user_id: userId, event, reason, at: new Date(this.deps.clock.now()) }).execute();
  }

  /** Safety net for lost notifications: drop cached sessions that ended since the last sync. */
  async sync(): Promise<void> {
    const now = this.deps.clock.now();
    if (this.syncedUpTo > 0 && this.cache.size > 0) {
      const rows = await this.deps.db.selectFrom('sessions').select('session_id').where('ended_at', '>', new Date(this.syncedUpTo - SYNC_SLACK_MS)).execute();
      for (const r of rows) this.cache.delete(r.session_id);
    }
    this.syncedUpTo = now;
  }

  async countActive(): Promise<number> {
    const row = await this.deps.db.selectFrom('sessions').select(sql<number>`count(*)::int`.as('n')).where('is_active', '=', true).executeTakeFirst();
    return row?.n ?? 0;
  }
}
