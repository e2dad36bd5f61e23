/**
 * The life of one socket of `GET /api/v1/ws`: the first message authenticates it (the access
 * token, checked by the shared bearer guard exactly as for an HTTP request: signature, expiry,
 * revocation, session, device binding, access policy), within REALTIME_AUTH_TIMEOUT_SECONDS;
 * from then on every frame is sealed under the session's key (envelope.ts). Anything wrong closes
 * the socket with its code (types.ts `CLOSE`); nothing a client sends can throw out of here.
 */
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';
import type { Clock } from '../platform/clock.js';
import { AppError } from '../platform/errors.js';
import { sessionCheck, type Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import { Connection } from './connection.js';
import { CONNECTION_ID, FrameError, MAX_CLIENT_FRAME_BYTES } from './envelope.js';
import type { RealtimeHub, RealtimeSettings } from './hub.js';
import { CLOSE } from './types.js';

export interface SocketDeps {
  hub: RealtimeHub;
  guard: Guard;
  sessions: Pick<SessionService, 'sessionKey'>;
  clock: Clock;
  log: Logger;
  settings: RealtimeSettings & { authTimeoutSec: number; maxBufferedBytes: number };
}

/** Query parameters that would carry a token in the URL (refused: URLs end up in logs). */
const TOKEN_PARAMS = ['access_token', 'token', 'authorization', 'bearer'];

/** Frames of one socket waiting to be handled, at most: past it the client floods and is closed (1008). */
export const MAX_QUEUED_FRAMES = 32;

/** Longest a timer is set for (setTimeout's limit); a later expiry is looked at again then. */
const MAX_TIMER_MS = 2_147_000_000;

function text(data: RawData, isBinary: boolean): string | null {
  if (isBinary) return null;
  const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
  return buf.length > MAX_CLIENT_FRAME_BYTES ? null : buf.toString('utf8');
}

/**
 * The `auth` message: `{"type":"auth","access_token":"...","connection_id":"...","device_fingerprint":"..."}`;
 * null when it is not one.
 */
export function parseAuth(raw: string | null): { token: string; connectionId: string; fingerprint: string } | null {
  if (raw === null) return null;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const m = v as Record<string, unknown>;
  if (m.type !== 'auth' || typeof m.access_token !== 'string' || m.access_token.length === 0 || m.access_token.length > 8192) return null;
  if (typeof m.connection_id !== 'string' || !CONNECTION_ID.test(m.connection_id)) return null;
  if (m.device_fingerprint !== undefined && typeof m.device_fingerprint !== 'string') return null;
  return { token: m.access_token, connectionId: m.connection_id, fingerprint: ((m.device_fingerprint as string | undefined) ?? '').slice(0, 256) };
}

export function handleSocket(deps: SocketDeps, ws: WebSocket, request: FastifyRequest): void {
  const query = (request.query ?? {}) as Record<string, unknown>;
  if (TOKEN_PARAMS.some((p) => query[p] !== undefined)) {
    ws.close(CLOSE.UNAUTHENTICATED, 'send the access token in the first message, never in the URL');
    return;
  }
  if (deps.hub.pendingAuth >= deps.hub.maxPendingAuth) {
    ws.close(CLOSE.BUSY, 'too many sockets waiting to authenticate: try again later');
    return;
  }
  deps.hub.pendingAuth += 1;
  let pending = true;
  const authenticated = (): void => {
    if (pending) deps.hub.pendingAuth -= 1;
    pending = false;
  };
  let conn: Connection | null = null;
  let expiryTimer: NodeJS.Timeout | undefined;
  let inbox: Promise<void> = Promise.resolve();
  let queued = 0;
  const authTimer = setTimeout(() => ws.close(CLOSE.UNAUTHENTICATED, 'no auth message in time'), deps.settings.authTimeoutSec * 1000);
  authTimer.unref();

  const armExpiry = (c: Connection): void => {
    const due = Math.min(c.tokenExpiresAt, c.keyExpiresAt ?? Number.POSITIVE_INFINITY) - deps.clock.now();
    expiryTimer = setTimeout(() => {
      if (!c.closed && !deps.hub.checkExpiry(c)) armExpiry(c);
    }, Math.max(1000, Math.min(due, MAX_TIMER_MS)));
    expiryTimer.unref();
  };

  const handle = async (raw: string | null): Promise<void> => {
    if (conn === null) {
      conn = await authenticate(deps, ws, request, parseAuth(raw));
      authenticated();
      clearTimeout(authTimer);
      if (conn) armExpiry(conn);
      return;
    }
    await onFrame(deps, conn, raw);
  };

  ws.on('message', (data, isBinary) => {
    if (ws.readyState !== ws.OPEN) return;
    if (queued >= MAX_QUEUED_FRAMES) {
      if (conn) conn.close(CLOSE.FLOODED, 'too many frames waiting');
      else ws.close(CLOSE.FLOODED, 'too many frames waiting');
      return;
    }
    queued += 1;
    const raw = text(data, isBinary);
    inbox = inbox.then(() => (ws.readyState === ws.OPEN ? handle(raw) : undefined)).catch((err: unknown) => {
      deps.log.error({ err }, 'real-time socket failed; closed');
      ws.close(1011, 'internal error');
    }).finally(() => {
      queued -= 1;
    });
  });
  ws.on('pong', () => {
    if (conn) conn.lastSeen = deps.clock.now();
  });
  ws.on('close', () => {
    authenticated();
    clearTimeout(authTimer);
    clearTimeout(expiryTimer);
    if (conn) {
      conn.closed = true;
      deps.hub.remove(conn);
    }
  });
}

/** Checks the auth message with the bearer guard; the connection, or null (the socket closed 4401). */
async function authenticate(deps: SocketDeps, ws: WebSocket, request: FastifyRequest, auth: ReturnType<typeof parseAuth>): Promise<Connection | null> {
  if (!auth) {
    ws.close(CLOSE.UNAUTHENTICATED, 'the first message must be {"type":"auth","access_token":"...","connection_id":"..."}');
    return null;
  }
  // The guard reads what an HTTP request carries: the token and the device fingerprint as headers.
  request.headers.authorization = `Bearer ${auth.token}`;
  request.headers['x-device-fingerprint'] = auth.fingerprint;
  request.auth = null;
  try {
    await deps.guard.authenticate(request);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    ws.close(CLOSE.UNAUTHENTICATED, err.code);
    return null;
  }
  const { session, claims } = request.auth!;
  const key = deps.sessions.sessionKey(session);
  if (!key) {
    ws.close(CLOSE.KEY_ROTATED, 'the session has no usable key: refresh, then reconnect');
    return null;
  }
  if (ws.readyState !== ws.OPEN) return null;
  const conn = new Connection({
    ws, userId: session.userId, userUuid: claims.user_id, sessionId: session.sessionId, connectionId: auth.connectionId, key, tokenExpiresAt: claims.exp * 1000,
    keyExpiresAt: session.aesKeyExpiresAt, now: deps.clock.now(), maxBufferedBytes: deps.settings.maxBufferedBytes,
    fingerprint: auth.fingerprint, check: sessionCheck(request, request.auth!),
  });
  if (!(await deps.hub.add(conn))) return null; // refused (4029), closed
  if (ws.readyState !== ws.OPEN) { // the client left while it was being added
    conn.closed = true;
    deps.hub.remove(conn);
    return null;
  }
  conn.send('ready', {
    session_id: session.sessionId, user_id: claims.user_id, expires_at: new Date(conn.tokenExpiresAt).toISOString(),
    latest_event_id: conn.baselineEventId, heartbeat_seconds: deps.settings.heartbeatSec, resume_minutes: deps.settings.resumeMinutes,
  });
  return conn;
}

async function onFrame(deps: SocketDeps, conn: Connection, raw: string | null): Promise<void> {
  let msg: { type: string; body: Record<string, unknown> };
  try {
    if (raw === null) throw new FrameError();
    msg = conn.open(raw, deps.clock.now());
  } catch (err) {
    if (!(err instanceof FrameError)) throw err;
    conn.close(CLOSE.BAD_FRAME, 'bad frame');
    return;
  }
  const { type, body } = msg;
  if (type === 'ping') conn.send('pong', { at: new Date(deps.clock.now()).toISOString() });
  else if (type === 'ack') return; // the client has these events; nothing to keep
  else if (type === 'resume' && Number.isSafeInteger(body.after) && (body.after as number) >= 0) {
    if (conn.resumed) {
      conn.close(CLOSE.BAD_FRAME, 'one resume per socket'); // each is a database read: not to be repeated at will
      return;
    }
    conn.resumed = true;
    await deps.hub.resume(conn, body.after as number);
  } else conn.close(CLOSE.BAD_FRAME, 'unknown message');
}
