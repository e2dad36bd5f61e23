/**
 * The real-time hub of one node: the authenticated sockets it holds, by user and by session; the
 * events other capabilities publish (`publish`), stored and announced to every node with a NOTIFY
 * that carries only the user's id; each node that holds a socket of that user reads the new rows
 * and sends them, in id order, once per socket. It closes sockets whose session ended (including
 * for inactivity or at the end of its lifetime, found at each heartbeat), whose access policy
 * refuses them now, whose key changed or expired, whose access token expired, and those that fall
 * silent (`sweep`, by the service clock).
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { BusEvent, EventBus } from '../platform/db/bus.js';
import type { Db } from '../platform/db/database.js';
import { AppError } from '../platform/errors.js';
import type { SessionPolicy } from '../sessions/guard.js';
import type { Session, SessionService } from '../sessions/service.js';
import { eventBody, type Connection } from './connection.js';
import type { RealtimeStore } from './store.js';
import { CLOSE, type CloseCode, type RealtimeEvent, type RealtimeTarget } from './types.js';

export interface RealtimeSettings {
  resumeMinutes: number;
  heartbeatSec: number;
  maxSocketsPerSession: number;
  maxSocketsPerUser: number;
}

export interface RealtimeHubDeps {
  store: RealtimeStore;
  bus: EventBus;
  clock: Clock;
  sessions: Pick<SessionService, 'get' | 'validate'>;
  /** The access policy of the session's channel (schedule, addresses, device), checked again at each heartbeat. */
  policy?: SessionPolicy;
  log: Logger;
  settings: RealtimeSettings;
  /** Called once per event stored (the metric). */
  onPublished?: (type: RealtimeEvent['type']) => void;
}

/** The most events one read (a delivery, a resume) sends. */
export const READ_BATCH = 500;

/**
 * How far back (by the service clock) each delivery looks again for events at or below the ids
 * already sent: an id is taken when its row is written and becomes visible when that commits, so
 * a lower id can appear after a higher one was sent (two nodes, or a publisher's transaction).
 */
export const LOOK_BACK_MS = 60_000;

/** Sockets of one node still waiting for their `auth` message, at most (past it a new socket is closed 1013). */
export const MAX_PENDING_AUTH = 1000;

export class RealtimeHub {
  private readonly byUser = new Map<number, Set<Connection>>();
  private readonly bySession = new Map<string, Set<Connection>>();
  /** Reads and sends of one user, one at a time: each socket gets events in id order, once. */
  private readonly lanes = new Map<number, Promise<void>>();
  /** Sockets of this node that have not authenticated yet (socket.ts counts them). */
  pendingAuth = 0;
  /** At most this many (MAX_PENDING_AUTH; tests lower it). */
  maxPendingAuth = MAX_PENDING_AUTH;

  constructor(private readonly deps: RealtimeHubDeps) {
    deps.bus.subscribe((e) => this.onBus(e));
    deps.bus.onReconnect(() => {
      for (const userId of this.byUser.keys()) this.deliver(userId); // notices may have been lost meanwhile
    });
  }

  /** Open sockets on this node. */
  get size(): number {
    let n = 0;
    for (const set of this.byUser.values()) n += set.size;
    return n;
  }

  /**
   * Stores an event for a user (every socket of theirs) or one session (its sockets only) and
   * tells every node. Resolves to the event's id; null for a session that does not exist.
   */
  async publish(target: RealtimeTarget, event: RealtimeEvent): Promise<number | null> {
    const at = new Date(this.deps.clock.now());
    const stored = await this.deps.store.insert({ ...target, type: event.type, data: event.data, at });
    if (!stored) return null;
    this.deps.onPublished?.(event.type);
    await this.deps.bus.publish({ type: 'realtime.event', userId: stored.userId }); // this node hears it at once
    return stored.id;
  }

  /**
   * `publish` inside a caller's transaction `db`: the event is stored with the caller's change (and
   * rolled back with it), and every node, this one included, is told when it commits. Resolves to
   * the event's id and whether that notice will come (false on PGlite: call `announce` after commit).
   */
  async publishIn(db: Db, target: RealtimeTarget, event: RealtimeEvent): Promise<{ id: number; userId: number; noticeOnCommit: boolean } | null> {
    const stored = await this.deps.store.insert({ ...target, type: event.type, data: event.data, at: new Date(this.deps.clock.now()) }, db);
    if (!stored) return null;
    this.deps.onPublished?.(event.type);
    const notice = this.deps.bus.commitNotice({ type: 'realtime.event', userId: stored.userId });
    if (notice) await sql`SELECT ${notice}`.execute(db);
    return { ...stored, noticeOnCommit: notice !== null };
  }

  /** Tells every node that a user has new events (after a `publishIn` whose transaction committed, where no notice came). */
  announce(userId: number): Promise<void> {
    return this.deps.bus.publish({ type: 'realtime.event', userId });
  }

  /**
   * Adds an authenticated socket; false when it was refused (and closed). Past the session's limit
   * the oldest socket of that same session is closed (4008): a reloaded page must not be locked
   * out by the socket it left behind. Past the user's limit the new socket is refused (4029): the
   * sockets of another session are never closed for it, or a stolen session could silence the
   * holder's by opening sockets of its own.
   */
  async add(conn: Connection): Promise<boolean> {
    const s = this.deps.settings;
    const latest = await this.deps.store.latest(conn.userId);
    conn.lastEventId = latest;
    conn.baselineEventId = latest;
    const ofSession = this.bySession.get(conn.sessionId) ?? new Set<Connection>();
    const ofUser = this.byUser.get(conn.userId) ?? new Set<Connection>();
    if ([...ofSession].some((c) => c.connectionId === conn.connectionId)) { // frames of that socket would open on this one
      conn.close(CLOSE.UNAUTHENTICATED, 'connection_id in use: choose a new random one');
      return false;
    }
    const replaced = Math.max(0, ofSession.size - s.maxSocketsPerSession + 1);
    if (ofUser.size - replaced >= s.maxSocketsPerUser) {
      conn.close(CLOSE.TOO_MANY_SOCKETS, 'too many sockets for this user');
      return false;
    }
    while (ofSession.size >= s.maxSocketsPerSession) this.drop(oldest(ofSession), CLOSE.REPLACED, 'replaced by a newer socket of this session');
    conn.onClosed = () => this.remove(conn);
    ofSession.add(conn);
    ofUser.add(conn);
    this.bySession.set(conn.sessionId, ofSession);
    this.byUser.set(conn.userId, ofUser);
    this.deliver(conn.userId); // anything stored between reading `latest` and now
    return true;
  }

  /** Forgets a socket (it closed). */
  remove(conn: Connection): void {
    const ofSession = this.bySession.get(conn.sessionId);
    ofSession?.delete(conn);
    if (ofSession?.size === 0) this.bySession.delete(conn.sessionId);
    const ofUser = this.byUser.get(conn.userId);
    ofUser?.delete(conn);
    if (ofUser?.size === 0) this.byUser.delete(conn.userId);
  }

  private drop(conn: Connection, code: CloseCode, reason: string): void {
    conn.close(code, reason); // and, through onClosed, removed
    this.remove(conn);
  }

  /**
   * A `resume`: the user's events after `after` that were stored before this socket opened (the
   * ones after are sent live) and within REALTIME_RESUME_MINUTES; then `resumed`.
   */
  resume(conn: Connection, after: number): Promise<void> {
    return this.inLane(conn.userId, async () => {
      const events = after >= conn.baselineEventId ? [] : await this.deps.store.after(conn.userId, after, this.since(), READ_BATCH);
      const older = events.filter((e) => e.id <= conn.baselineEventId);
      let sent = 0;
      for (const e of older) {
        if (!conn.wants(e)) continue;
        if (!conn.send('event', eventBody(e))) return;
        sent += 1;
      }
      conn.send('resumed', { after, delivered: sent, complete: events.length < READ_BATCH, resume_minutes: this.deps.settings.resumeMinutes });
    });
  }

  /** Reads the user's new events and sends each socket of theirs on this node those it has not had. */
  deliver(userId: number): void {
    if (!this.byUser.has(userId)) return;
    void this.inLane(userId, async () => {
      const conns = [...(this.byUser.get(userId) ?? [])].filter((c) => !c.closed);
      if (conns.length === 0) return;
      const from = Math.min(...conns.map((c) => c.lastEventId));
      const since = this.since();
      const lookBack = new Date(Math.max(since.getTime(), this.deps.clock.now() - LOOK_BACK_MS));
      const [late, events] = await Promise.all([
        this.deps.store.recent(userId, from, lookBack, READ_BATCH),
        this.deps.store.after(userId, from, since, READ_BATCH),
      ]);
      for (const conn of conns) {
        for (const e of [...late, ...events]) {
          // Stored before the socket opened (a resume's), or already sent: skipped; one above the last sent
          // id but older (it became visible late) is sent now, out of id order.
          if (e.id <= conn.baselineEventId || conn.hasHad(e.id) || (e.id <= conn.lastEventId && e.createdAt < lookBack.getTime())) continue;
          if (!conn.wants(e)) {
            conn.had(e.id);
            continue;
          }
          if (!conn.sendEvent(e)) break;
        }
      }
      if (events.length === READ_BATCH) this.deliver(userId); // more than one batch behind
    });
  }

  private inLane(userId: number, work: () => Promise<void>): Promise<void> {
    const run = (this.lanes.get(userId) ?? Promise.resolve()).then(work).catch((err: unknown) => {
      this.deps.log.warn({ err, user_id: userId }, 'real-time events not delivered; the client gets them when it resumes');
    });
    this.lanes.set(userId, run);
    void run.finally(() => {
      if (this.lanes.get(userId) === run) this.lanes.delete(userId);
    });
    return run;
  }

  private since(): Date {
    return new Date(this.deps.clock.now() - this.deps.settings.resumeMinutes * 60_000);
  }

  private onBus(e: BusEvent): void {
    if (e.type === 'realtime.event') this.deliver(e.userId);
    else if (e.type === 'session.ended') this.closeSession(e.sessionId, CLOSE.SESSION_ENDED, 'session ended');
    else if (e.type === 'session.changed' && this.bySession.has(e.sessionId)) void this.recheck(e.sessionId);
  }

  /** Closes every socket of a session on this node; how many. */
  closeSession(sessionId: string, code: CloseCode, reason: string): number {
    const conns = [...(this.bySession.get(sessionId) ?? [])];
    for (const conn of conns) this.drop(conn, code, reason);
    return conns.length;
  }

  /** Another node changed the session: ended, or given a new key. */
  private async recheck(sessionId: string): Promise<void> {
    try {
      const session = await this.deps.sessions.get(sessionId);
      if (!session || !session.isActive) this.closeSession(sessionId, CLOSE.SESSION_ENDED, 'session ended');
      else this.rekeyed(session);
    } catch (err) {
      this.deps.log.warn({ err }, 'could not re-read a session that changed; its sockets are checked again at the next heartbeat');
    }
  }

  /** The session has a new key: its sockets, bound to the old one, close (4002) and the client reconnects. */
  rekeyed(session: Session): void {
    for (const conn of [...(this.bySession.get(session.sessionId) ?? [])]) {
      if (session.aesKey && !session.aesKey.equals(conn.key)) this.drop(conn, CLOSE.KEY_ROTATED, 'session key rotated');
    }
  }

  /**
   * The heartbeat (every REALTIME_HEARTBEAT_SECONDS, by the scheduler): checks each session that
   * has sockets here as a request would (without recording activity: a socket does not keep its
   * session alive): one idle past its timeout or past its lifetime is ended, which tells every
   * node (its sockets close 4001, the user's other sessions hear `session.ended_elsewhere`); one
   * the access policy now refuses (a schedule that closed, an address no longer allowed) has its
   * sockets closed 4401 POLICY_RESTRICTED. Then closes sockets whose access token (4003) or key
   * (4002) expired by the service clock, or whose client was silent for two intervals (4009);
   * pings the others. Returns how many it closed.
   */
  async sweep(): Promise<number> {
    let closed = 0;
    for (const [sessionId, set] of [...this.bySession]) closed += await this.checkSession(sessionId, [...set]);
    const now = this.deps.clock.now();
    const silentMs = 2 * this.deps.settings.heartbeatSec * 1000;
    for (const set of [...this.byUser.values()]) {
      for (const conn of [...set]) {
        const why = closeReason(conn, now, silentMs);
        if (why) {
          this.drop(conn, why.code, why.reason);
          closed += 1;
        } else if (!conn.closed) conn.ws.ping();
      }
    }
    return closed;
  }

  /** A session's validity and access policy, for its sockets on this node; how many it closed. */
  private async checkSession(sessionId: string, conns: Connection[]): Promise<number> {
    const live = conns.filter((c) => !c.closed);
    if (live.length === 0) return 0;
    try {
      await this.deps.sessions.validate(sessionId, live[0]!.fingerprint); // ends an idle or expired session (and says so on the bus)
    } catch (err) {
      if (!(err instanceof AppError)) {
        this.deps.log.warn({ err, session_id: sessionId }, 'could not check a session with real-time sockets; checked again at the next heartbeat');
        return 0;
      }
      return this.closeSession(sessionId, CLOSE.SESSION_ENDED, 'session ended');
    }
    let closed = 0;
    for (const conn of live) {
      if (!this.deps.policy || !conn.check || conn.closed) continue;
      try {
        await this.deps.policy.checkSession(conn.check);
      } catch (err) {
        if (!(err instanceof AppError)) {
          this.deps.log.warn({ err, session_id: sessionId }, 'could not check the access policy of a real-time socket; checked again at the next heartbeat');
          continue;
        }
        this.drop(conn, CLOSE.UNAUTHENTICATED, err.code);
        closed += 1;
      }
    }
    return closed;
  }

  /** The expiry check of one socket (its timer fired): closed when due. */
  checkExpiry(conn: Connection): boolean {
    const why = closeReason(conn, this.deps.clock.now(), Number.POSITIVE_INFINITY);
    if (why) this.drop(conn, why.code, why.reason);
    return why !== null;
  }

  /** Closes every socket (1001: the server is going away; clients reconnect elsewhere). */
  closeAll(): void {
    for (const set of [...this.byUser.values()]) for (const conn of [...set]) this.drop(conn, CLOSE.GOING_AWAY, 'server shutting down');
  }

  /** Resolves once every read under way has ended. */
  async settled(): Promise<void> {
    while (this.lanes.size > 0) await Promise.allSettled([...this.lanes.values()]);
  }
}

function oldest(set: Set<Connection>): Connection {
  return [...set].reduce((a, b) => (b.openedAt < a.openedAt ? b : a));
}

function closeReason(conn: Connection, now: number, silentMs: number): { code: CloseCode; reason: string } | null {
  if (now >= conn.tokenExpiresAt) return { code: CLOSE.TOKEN_EXPIRED, reason: 'access token expired' };
  if (conn.keyExpiresAt !== null && now >= conn.keyExpiresAt) return { code: CLOSE.KEY_ROTATED, reason: 'session key expired' };
  if (now - conn.lastSeen > silentMs) return { code: CLOSE.SILENT, reason: 'no heartbeat' };
  return null;
}
