/**
 * The bearer-token guard every authenticated route uses (SPEC Authentication 3 and 5): verify
 * the access token, then the session, then the device binding, then the access policy of the
 * session's channel for this request (IP, schedule, bound device), and only then record the
 * session's activity. Puts the caller on `request.auth`. `requirePermission` adds a permission
 * check after it. A rule that guards sign-in guards every request that rides on the session:
 * a token is worth nothing outside the policy that governs its session.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuditContext } from '../audit/service.js';
import { CommonErrors } from '../platform/errors.js';
import type { AccessClaims, TokenService } from '../tokens/service.js';
import { TokenErrors } from '../tokens/errors.js';
import type { Session, SessionService } from './service.js';

/** A location as a device reports it (the access policy checks each field at run time). */
export interface ReportedLocation {
  readonly latitude?: unknown;
  readonly longitude?: unknown;
  readonly accuracy_m?: unknown;
}

/** What the access policy knows of a live session and its request. */
export interface SessionCheck {
  sessionId: string;
  userId: number;
  userUuid: string;
  roles: readonly string[];
  channel: string;
  fingerprint: string;
  ip: string;
  userAgent: string;
  /** Where the device says it is (`POST /auth/agent/validate`); absent: geofences are not looked at. */
  location?: ReportedLocation;
}

/** Ends with 403 POLICY_RESTRICTED when the session's channel policy refuses this request. */
export interface SessionPolicy {
  checkSession(session: SessionCheck): Promise<void>;
}

export interface AuthContext {
  claims: AccessClaims;
  session: Session;
  token: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (typeof header !== 'string') throw TokenErrors.TOKEN_MISSING();
  const match = /^Bearer ([A-Za-z0-9_\-.=]+)$/i.exec(header.trim());
  if (!match) throw TokenErrors.TOKEN_INVALID();
  return match[1]!;
}

/** The User-Agent header, cut to what the audit trail and sessions keep. */
export function userAgentOf(request: FastifyRequest): string {
  const v = request.headers['user-agent'];
  return typeof v === 'string' ? v.slice(0, 512) : '';
}

export function fingerprintOf(request: FastifyRequest): string {
  const v = request.headers['x-device-fingerprint'];
  return typeof v === 'string' ? v.slice(0, 256) : '';
}

/** The audit fields of a signed-in request (an administrator's, say). */
export function requestAuditContext(request: FastifyRequest): { ip: string; deviceFingerprint: string | null; userAgent: string; channel: string | null } {
  return { ip: request.ip, deviceFingerprint: fingerprintOf(request) || null, userAgent: userAgentOf(request), channel: request.auth?.session.channel ?? null };
}

/** Who an administrative change was made by, for the audit trail (null for the CLI and start-up). */
export interface RequestActor {
  uuid: string | null;
  username: string | null;
}

/** Who a signed-in request acts as, for the audit trail: the token's user and their username. */
export async function requestActor(request: FastifyRequest, users: { findByUuid(uuid: string): Promise<{ username: string } | undefined> }): Promise<RequestActor> {
  const uuid = request.auth?.claims.user_id ?? null;
  return { uuid, username: uuid ? ((await users.findByUuid(uuid))?.username ?? null) : null };
}

/** An administrative change's author and request context, as the audit trail records them. */
export interface Who {
  actor: RequestActor;
  context: AuditContext;
}

/** `Who` of a signed-in request. */
export async function requestWho(request: FastifyRequest, users: Parameters<typeof requestActor>[1]): Promise<Who> {
  return { actor: await requestActor(request, users), context: requestAuditContext(request) };
}

/** The signed-in caller's user row; a token whose user is gone is refused like a revoked one (401 TOKEN_REVOKED). */
export async function signedInUser<U>(request: FastifyRequest, users: { findByUuid(uuid: string): Promise<U | undefined> }): Promise<U> {
  const user = await users.findByUuid(request.auth!.claims.user_id);
  if (!user) throw TokenErrors.TOKEN_REVOKED();
  return user;
}

/** The signed-in user a request acts for: the per-account key of a signed-in route's rate limit. */
export function signedInAccount(request: FastifyRequest): string | undefined {
  return request.auth?.claims.user_id;
}

/** The access-policy check of a signed-in request; `location` only where the route carries one. */
export function sessionCheck(request: FastifyRequest, auth: AuthContext, location?: ReportedLocation): SessionCheck {
  return {
    sessionId: auth.session.sessionId, userId: auth.session.userId, userUuid: auth.claims.user_id, roles: auth.claims.roles, channel: auth.session.channel,
    fingerprint: auth.session.deviceFingerprint, ip: request.ip, userAgent: userAgentOf(request), location,
  };
}

export interface Guard {
  /** Token, session, device, access policy; then the session's activity. Every authenticated route. */
  authenticate(request: FastifyRequest, reply?: FastifyReply): Promise<void>;
  /** `authenticate` for a route whose request reports where the device is: its geofences are checked too. */
  authenticateAt(locate: (request: FastifyRequest) => ReportedLocation | undefined): (request: FastifyRequest, reply?: FastifyReply) => Promise<void>;
  /**
   * Token, session and device only: who is calling, for what may be done outside the policy
   * (ending one's own session; opening an encrypted body before the route's own guard runs).
   * Records no activity: a refused request must not keep a session alive.
   */
  identify(request: FastifyRequest, reply?: FastifyReply): Promise<void>;
  requirePermission(permission: string): (request: FastifyRequest, reply?: FastifyReply) => Promise<void>;
}

export interface GuardDeps {
  tokens: TokenService;
  sessions: SessionService;
  policy: SessionPolicy;
  ipHash: (ip: string) => string;
}

/**
 * What a guard hook checks, for the OpenAPI document (src/openapi.ts adds the bearer scheme, the
 * fingerprint header and the guard's error codes to every route one of these hooks guards).
 * `policy`: the access policy too (403 POLICY_RESTRICTED); `permission`: the one it requires.
 */
export interface GuardHookInfo {
  policy: boolean;
  permission?: string;
}

const hookInfo = new WeakMap<object, GuardHookInfo>();

function tagged<F extends object>(hook: F, info: GuardHookInfo): F {
  hookInfo.set(hook, info);
  return hook;
}

/** What `hook` checks when it is one of a guard's hooks; undefined for any other function. */
export function guardHookInfo(hook: unknown): GuardHookInfo | undefined {
  return typeof hook === 'function' ? hookInfo.get(hook) : undefined;
}

export function createGuard(deps: GuardDeps): Guard {
  /** Requests that passed the whole guard: later hooks of the same request do not check again. */
  const admitted = new WeakSet<FastifyRequest>();

  /** Idempotent: a request identified by an earlier hook (transport, route) is not verified twice. */
  const identify = async (request: FastifyRequest): Promise<void> => {
    if (request.auth) return;
    const token = bearerToken(request);
    const claims = await deps.tokens.verify(token, 'access');
    const fingerprint = fingerprintOf(request);
    deps.tokens.checkBinding(claims, { fingerprint, ipHash: () => deps.ipHash(request.ip) });
    const session = await deps.sessions.validate(claims.session_id, fingerprint);
    request.auth = { claims, session, token };
  };

  /** The whole guard once per request; activity is recorded only for a request the policy allows. */
  const admit = async (request: FastifyRequest, location?: ReportedLocation): Promise<void> => {
    if (admitted.has(request)) return;
    await identify(request);
    const auth = request.auth!;
    await deps.policy.checkSession(sessionCheck(request, auth, location));
    await deps.sessions.recordActivity(auth.session);
    admitted.add(request);
  };
  const authenticate = tagged((request: FastifyRequest): Promise<void> => admit(request), { policy: true });

  return {
    authenticate,
    authenticateAt: (locate) => tagged((request: FastifyRequest) => admit(request, locate(request)), { policy: true }),
    identify: tagged(identify, { policy: false }),
    requirePermission(permission: string) {
      return tagged(async (request: FastifyRequest) => {
        await authenticate(request);
        if (!request.auth!.claims.permissions.includes(permission)) {
          throw CommonErrors.PERMISSION_DENIED({ required_permission: permission });
        }
      }, { policy: true, permission });
    },
  };
}
