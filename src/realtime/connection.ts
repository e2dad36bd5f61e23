/**
 * One authenticated socket of the real-time channel: bound to one session and its key, it numbers
 * what it sends (1, 2, 3...), refuses a client frame whose number does not increase, and is closed
 * rather than allowed to buffer without limit (a slow reader: 1013).
 */
import type { WebSocket } from 'ws';
import { openFrame, parseFrame, sealFrame } from './envelope.js';
import { CLOSE, type CloseCode, type StoredEvent } from './types.js';

export interface ConnectionInit {
  ws: WebSocket;
  userId: number;
  userUuid: string;
  sessionId: string;
  key: Buffer;
  /** When the access token expires (epoch ms). */
  tokenExpiresAt: number;
  /** When the session key stops working (epoch ms); null: never. */
  keyExpiresAt: number | null;
  /** The service clock's now, at authentication. */
  now: number;
  /** Beyond this many unsent bytes the socket is closed (1013). */
  maxBufferedBytes: number;
}

/** The body of an `event` frame. */
export function eventBody(e: StoredEvent): Record<string, unknown> {
  return { id: e.id, type: e.type, data: e.data, created_at: new Date(e.createdAt).toISOString() };
}

export class Connection {
  readonly ws: WebSocket;
  readonly userId: number;
  readonly userUuid: string;
  readonly sessionId: string;
  readonly openedAt: number;
  readonly tokenExpiresAt: number;
  readonly keyExpiresAt: number | null;
  key: Buffer;
  /** The id of the newest event this socket was sent (or, at first, the user's newest when it opened). */
  lastEventId = 0;
  /** Events at or below it were stored before the socket opened: what a `resume` may send. */
  baselineEventId = 0;
  /** When the client last showed it is there (a frame, a pong), by the service clock. */
  lastSeen: number;
  closed = false;
  /** Told once when this socket is closed by the server (the hub forgets it at once, not when the client answers). */
  onClosed: (() => void) | undefined;
  private sent = 0;
  private received = 0;
  private readonly maxBuffered: number;

  constructor(init: ConnectionInit) {
    this.ws = init.ws;
    this.userId = init.userId;
    this.userUuid = init.userUuid;
    this.sessionId = init.sessionId;
    this.key = init.key;
    this.tokenExpiresAt = init.tokenExpiresAt;
    this.keyExpiresAt = init.keyExpiresAt;
    this.openedAt = init.now;
    this.lastSeen = init.now;
    this.maxBuffered = init.maxBufferedBytes;
  }

  /** Seals and sends one frame; false (and the socket closed) when the client is too far behind. */
  send(type: string, body: unknown): boolean {
    if (this.closed) return false;
    if (this.ws.bufferedAmount > this.maxBuffered) {
      this.close(CLOSE.SLOW_CONSUMER, 'reading too slowly');
      return false;
    }
    this.sent += 1;
    this.ws.send(JSON.stringify(sealFrame(this.key, 's2c', this.sent, type, body)));
    return true;
  }

  /** An event frame; whether it was sent. */
  sendEvent(e: StoredEvent): boolean {
    const ok = this.send('event', eventBody(e));
    if (ok && e.id > this.lastEventId) this.lastEventId = e.id;
    return ok;
  }

  /**
   * Opens a client frame (throws FrameError for anything wrong, the caller closes with 4400):
   * its type and body. The sequence number must be above the last one accepted.
   */
  open(raw: string, now: number): { type: string; body: Record<string, unknown> } {
    const frame = parseFrame(raw);
    const body = openFrame(this.key, 'c2s', frame, this.received);
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
