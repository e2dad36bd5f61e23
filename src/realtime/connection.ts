/**
 * One authenticated socket of the real-time channel: bound to one session and its key, it numbers
 * what it sends (1, 2, 3...), refuses a client frame whose number does not increase, and is closed
 * rather than allowed to buffer without limit (a slow reader: 1013).
 */
import type { WebSocket } from 'ws';
import type { SessionCheck } from '../sessions/guard.js';
import { openFrame, parseFrame, sealFrame } from './envelope.js';
import { CLOSE, type CloseCode, type StoredEvent } from './types.js';

export interface ConnectionInit {
  ws: WebSocket;
  userId: number;
  userUuid: string;
  sessionId: string;
  /** The `connection_id` of the auth message: bound into every frame's additional data. */
  connectionId: string;
  key: Buffer;
  /** When the access token expires (epoch ms). */
  tokenExpiresAt: number;
  /** When the session key stops working (epoch ms); null: never. */
  keyExpiresAt: number | null;
  /** The service clock's now, at authentication. */
  now: number;
  /** Beyond this many unsent bytes the socket is closed (1013). */
  maxBufferedBytes: number;
  /** The device fingerprint the `auth` message carried (the session is re-validated with it at each heartbeat). */
  fingerprint?: string;
  /** The access policy's view of this socket (address, user agent...), checked again at each heartbeat. */
  check?: SessionCheck;
}

/** The body of an `event` frame. */
export function eventBody(e: StoredEvent): Record<string, unknown> {
  return { id: e.id, type: e.type, data: e.data, created_at: new Date(e.createdAt).toISOString() };
}

/** How many delivered event ids a socket remembers (more than a delivery's look-back holds for one user). */
export const DELIVERED_KEPT = 1000;

export class Connection {
  readonly ws: WebSocket;
  readonly userId: number;
  readonly userUuid: string;
  readonly sessionId: string;
  readonly connectionId: string;
  readonly openedAt: number;
  readonly tokenExpiresAt: number;
  readonly keyExpiresAt: number | null;
  readonly fingerprint: string;
  readonly check: SessionCheck | undefined;
  key: Buffer;
  /** Whether the client sent its one `resume` (a second closes the socket 4400). */
  resumed = false;
  /** The id of the newest event this socket was sent (or, at first, the user's newest when it opened). */
  lastEventId = 0;
  /** Events at or below it were stored before the socket opened: what a `resume` may send. */
  baselineEventId = 0;
  /** When the client last showed it is there (a frame, a pong), by the service clock. */
  lastSeen: number;
  closed = false;
  /** Told once when this socket is closed by the server (the hub forgets it at once, not when the client answers). */
  onClosed: (() => void) | undefined;
  /** Ids of the events sent lately (at most DELIVERED_KEPT): a late-visible event is sent once. */
  private readonly delivered = new Set<number>();
  private sent = 0;
  private received = 0;
  private readonly maxBuffered: number;

  constructor(init: ConnectionInit) {
    this.ws = init.ws;
    this.userId = init.userId;
    this.userUuid = init.userUuid;
    this.sessionId = init.sessionId;
    this.connectionId = init.connectionId;
    this.key = init.key;
    this.tokenExpiresAt = init.tokenExpiresAt;
    this.keyExpiresAt = init.keyExpiresAt;
    this.openedAt = init.now;
    this.lastSeen = init.now;
    this.maxBuffered = init.maxBufferedBytes;
    this.fingerprint = init.fingerprint ?? '';
    this.check = init.check;
  }

  /** Seals and sends one frame; false (and the socket closed) when the client is too far behind. */
  send(type: string, body: unknown): boolean {
    if (this.closed) return false;
    if (this.ws.bufferedAmount > this.maxBuffered) {
      this.close(CLOSE.SLOW_CONSUMER, 'reading too slowly');
      return false;
    }
    this.sent += 1;
    this.ws.send(JSON.stringify(sealFrame(this.key, 's2c', this.connectionId, this.sent, type, body)));
    return true;
  }

  /** An event frame; whether it was sent. */
  sendEvent(e: StoredEvent): boolean {
    const ok = this.send('event', eventBody(e));
    if (ok) this.had(e.id);
    return ok;
  }

  /** Whether this socket was sent (or passed over) the event. */
  hasHad(id: number): boolean {
    return this.delivered.has(id);
  }

  /** Notes an event as sent or passed over. */
  had(id: number): void {
    if (id > this.lastEventId) this.lastEventId = id;
    this.delivered.add(id);
    if (this.delivered.size > DELIVERED_KEPT) this.delivered.delete(this.delivered.values().next().value!);
  }

  /**
   * Opens a client frame (throws FrameError for anything wrong, the caller closes with 4400):
   * its type and body. The sequence number must be above the last one accepted.
   */
  open(raw: string, now: number): { type: string; body: Record<string, unknown> } {
    const frame = parseFrame(raw);
    const body = openFrame(this.key, 'c2s', this.connectionId, frame, this.received);
    this.received = frame.seq;
    this.lastSeen = now;
    return { type: frame.type, body };
  }

  /** Whether an event is for this socket: a session's event only for it; "ended elsewhere" never for the session that ended. */
  wants(e: StoredEvent): boolean {
    if (e.sessionId !== null && e.sessionId !== this.sessionId) return false;
    return !(e.type === 'session.ended_elsewhere' && e.data.session_id === this.sessionId);
  }

  close(code: CloseCode, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.onClosed?.();
    try {
      this.ws.close(code, reason.slice(0, 120));
    } catch {
      this.ws.terminate();
    }
  }
}
