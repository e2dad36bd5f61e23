/**
 * The real-time channel's messages as the client sees them once decrypted (the server's
 * docs/asyncapi.yaml documents each with examples).
 */

/** The event types the server publishes (docs/asyncapi.yaml: the `type` of each `event` payload). */
export const REALTIME_EVENT_TYPES = Object.freeze([
  'second_factor.requested', 'second_factor.approved', 'second_factor.denied', 'second_factor.expired',
  'session.ended_elsewhere', 'security.alert', 'recovery.started',
] as const);

export type RealtimeEventType = (typeof REALTIME_EVENT_TYPES)[number];

/** What a push approval was asked for: a sign-in, or a signed-in session's step-up. */
export const PUSH_APPROVAL_PURPOSES = Object.freeze(['sign_in', 'step_up'] as const);
export type PushApprovalPurpose = (typeof PUSH_APPROVAL_PURPOSES)[number];

/**
 * Why a push approval was denied: `denied` (the person said no), `wrong_number` (another number
 * was picked), `fraud_reported` (the person reported it, or another request, as fraud),
 * `superseded` (a newer request of the account replaced it), `factor_removed` (the push-approval
 * factor was removed: the phone's device token deleted, an account recovery, an MFA reset).
 */
export const PUSH_APPROVAL_DENY_REASONS = Object.freeze(['denied', 'wrong_number', 'fraud_reported', 'superseded', 'factor_removed'] as const);
export type PushApprovalDenyReason = (typeof PUSH_APPROVAL_DENY_REASONS)[number];

/** What each event's `data` holds. */
export interface RealtimeEventData {
  /** A sign-in or a step-up asked this user's phone for a push approval. */
  'second_factor.requested': { method: 'push_approval'; request_id: string; purpose: PushApprovalPurpose; expires_at: string };
  /** The phone approved it: the page may complete the sign-in or the step-up. */
  'second_factor.approved': { method: 'push_approval'; request_id: string };
  /** The phone denied it, a newer request superseded it, or the factor was removed (`reason`). */
  'second_factor.denied': { method: 'push_approval'; request_id: string; reason: PushApprovalDenyReason };
  /** It was not answered within its 5 minutes (published once, within 30 seconds of its `expires_at`): ask again. */
  'second_factor.expired': { method: 'push_approval'; request_id: string; purpose: PushApprovalPurpose };
  /** Another session of this user ended (sign-out, revocation, expiry, an administrator). */
  'session.ended_elsewhere': { session_id: string; reason: string | null };
  /** A security alert was raised about this account. */
  'security.alert': { alert_id: string; rule: string; severity: 'low' | 'medium' | 'high' | 'critical'; channel: string | null; raised_at: string };
  /** Someone started recovering this account (what was lost, when, until when; at a branch or self-service). */
  'recovery.started': { kind: 'password' | 'pin' | 'mfa' | 'device'; started_at: string; expires_at: string; at_branch: boolean };
}

export interface RealtimeEvent<T extends RealtimeEventType = RealtimeEventType> {
  /** Increasing per user: the `after` of a resume. */
  id: number;
  type: T;
  data: RealtimeEventData[T];
  /** ISO 8601. */
  created_at: string;
}

/** The server's first frame after the auth message. */
export interface RealtimeReady {
  session_id: string;
  user_id: string;
  /** When the access token expires: the server closes the socket then (4003). */
  expires_at: string;
  /** The newest event stored for the user when the socket opened. */
  latest_event_id: number;
  heartbeat_seconds: number;
  resume_minutes: number;
}

/** After a resume: how many missed events were sent again. `complete` false: more were missed than one resume sends. */
export interface RealtimeResumed {
  after: number;
  delivered: number;
  complete: boolean;
  resume_minutes: number;
}

export interface RealtimeClose {
  code: number;
  reason: string;
  /** The subscription opens a new socket (after a backoff, or a refresh for 4002 and 4003). */
  willReconnect: boolean;
}

export interface RealtimeHandlers {
  /** Every event, in order, once (a resume's duplicates are dropped). */
  onEvent?: (event: RealtimeEvent) => void;
  /** Per type. */
  on?: { [K in RealtimeEventType]?: (data: RealtimeEventData[K], event: RealtimeEvent<K>) => void };
  onReady?: (ready: RealtimeReady) => void;
  onResumed?: (resumed: RealtimeResumed) => void;
  onClose?: (close: RealtimeClose) => void;
  /** A frame that did not open, a refresh that failed, a socket error. */
  onError?: (error: unknown) => void;
}

/** The part of the WebSocket API the subscription uses: the browser's, Node 22's global, or the `ws` package's. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface RealtimeOptions {
  /** The WebSocket class: defaults to `globalThis.WebSocket` (browsers, Node 22+); on Node 20 pass `WebSocket` from the `ws` package. */
  WebSocket?: WebSocketConstructor;
  /** The last event id a previous subscription saw (`lastEventId`): the first socket resumes after it. */
  resumeAfter?: number;
  /** Reconnect after a dropped socket (default true), with a backoff from 1 s doubling to `maxBackoffMs`. */
  reconnect?: boolean;
  /** Default 30 seconds. */
  maxBackoffMs?: number;
}
