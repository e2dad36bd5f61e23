/**
 * What the real-time channel carries (docs/realtime.md, docs/asyncapi.yaml): the event types, the
 * message types of each direction, and the close codes.
 */

/** The events a user's sockets receive. */
export const REALTIME_EVENT_TYPES = [
  'second_factor.requested', 'second_factor.approved', 'second_factor.denied', 'second_factor.expired',
  'session.ended_elsewhere', 'security.alert', 'recovery.started',
] as const;
export type RealtimeEventType = (typeof REALTIME_EVENT_TYPES)[number];

export const isRealtimeEventType = (t: string): t is RealtimeEventType => (REALTIME_EVENT_TYPES as readonly string[]).includes(t);

/** Who an event is for: every socket of a user, or only those of one session. */
export type RealtimeTarget = { userId: number } | { sessionId: string };

export interface RealtimeEvent {
  type: RealtimeEventType;
  /** Small and about the user only: ids, kinds, times; never a secret, a code or a token. */
  data: Record<string, unknown>;
}

/** An event as stored and sent (`event` frames). */
export interface StoredEvent {
  id: number;
  userId: number;
  /** Only this session's sockets receive it; null: every socket of the user. */
  sessionId: string | null;
  type: RealtimeEventType;
  data: Record<string, unknown>;
  createdAt: number;
}

/** Frames the server sends (the `type` of their envelope). */
export const SERVER_MESSAGES = ['ready', 'event', 'resumed', 'pong'] as const;
/** Frames a client sends after `auth`. */
export const CLIENT_MESSAGES = ['resume', 'ping', 'ack'] as const;

/**
 * Close codes. 4xxx are the channel's own (RFC 6455 7.4.2: private use); 1001, 1008 and 1013 are the
 * protocol's. A client reconnects after 1001, 1013 and 4009 (with backoff), refreshes its tokens
 * and reconnects after 4002 and 4003, and stops after 1008, 4001, 4008, 4029, 4400 and 4401.
 */
export const CLOSE = {
  /** The server is shutting down: reconnect (another node will answer). */
  GOING_AWAY: 1001,
  /** Too many frames waiting to be handled on one socket (more than 32): the client floods. */
  FLOODED: 1008,
  /** The client reads too slowly: its unsent frames passed REALTIME_MAX_BUFFERED_KB. */
  SLOW_CONSUMER: 1013,
  /** Too many sockets on this node are still waiting for their `auth` message: try again later (same code as SLOW_CONSUMER). */
  BUSY: 1013,
  /** The session ended (sign-out, revocation, expiry, an administrator). */
  SESSION_ENDED: 4001,
  /** The session's key changed (a refresh) or expired: reconnect with the new key. */
  KEY_ROTATED: 4002,
  /** The access token expired: refresh, then reconnect. */
  TOKEN_EXPIRED: 4003,
  /** A newer socket of the same session took this one's place (REALTIME_MAX_SOCKETS_PER_SESSION). */
  REPLACED: 4008,
  /**
   * The user already has REALTIME_MAX_SOCKETS_PER_USER sockets on this node: this new one is
   * refused (another session's sockets are never closed to make room).
   */
  TOO_MANY_SOCKETS: 4029,
  /** No pong nor message for two heartbeat intervals. */
  SILENT: 4009,
  /** A frame that does not open: tampered, replayed (sequence not increasing), malformed or of an unknown type; a second `resume`. */
  BAD_FRAME: 4400,
  /**
   * No valid `auth` message first, in time; a refused token (the reason names the error code); a
   * token in the URL; later, the session's access policy refusing it at a heartbeat (reason
   * `POLICY_RESTRICTED`).
   */
  UNAUTHENTICATED: 4401,
} as const;
export type CloseCode = (typeof CLOSE)[keyof typeof CLOSE];
