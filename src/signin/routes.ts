/** Core authentication routes: login, refresh, logout, validate; the mobile and agent ones are in channel-routes.ts. */
import Type from 'typebox';
import { auditContext } from '../audit/service.js';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import { clientNetwork } from '../policy/network.js';
import { bodyField } from '../policy/route-limits.js';
import type { Guard } from '../sessions/guard.js';
import type { SessionService } from '../sessions/service.js';
import type { Denylist } from '../tokens/denylist.js';
import type { UserStore } from '../users/store.js';
import type { SignInPipeline } from './pipeline.js';
import type { RefreshService } from './refresh.js';
import type { LocalStrategy } from './strategies/local.js';
import type { Hasher } from '../platform/crypto/field-cipher.js';
import type { App } from '../platform/http/app.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import { fingerprintOf, userAgentOf } from '../sessions/guard.js';
import { useResponseKey } from '../transport/plugin.js';
import type { AuthContext } from '../sessions/guard.js';
import type { ClientContext } from './pipeline.js';
import { SIGN_IN_ERRORS, TOKEN_CHECK_ERRORS } from './error-sets.js';
import { TokenErrors } from '../tokens/errors.js';

const ISO = { format: 'date-time' } as const;

export const SignInResponseSchema = Type.Object(
  {
    access_token: Type.String({ description: 'HS256 JWT; send as `Authorization: Bearer ...`', examples: ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6IjFhMmIzYzRkIn0.eyJ...'] }),
    token_type: Type.Literal('bearer'),
    expires_in: Type.Integer({ description: 'Access token lifetime in seconds', examples: [3600] }),
    refresh_token: Type.String({ description: 'Single-use refresh token (7 days)', examples: ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ...'] }),
    user: Type.Object({
      id: Type.Integer({ deprecated: true, description: 'Deprecated: the user\'s internal number, kept in this response only because published clients read it. Read `uuid`: the one id every other route takes and returns (the `id` of the administration answers).', examples: [42] }),
      uuid: Type.String({ format: 'uuid', description: 'The user\'s one public id.', examples: ['3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77'] }),
      active: Type.Boolean(),
    }),
    permissions: Type.Array(Type.String(), { examples: [['users.read', 'audit.read']] }),
    actions: Type.Array(Type.String(), { description: 'Steps the client should prompt for. `CHANGE_PASSWORD_SOON`: the password expires within the warning period of its account class (`warn_days`, 7 by default).', examples: [[]] }),
    session_id: Type.String({ format: 'uuid' }),
    user_profile: Type.Object({
      username: Type.String({ examples: ['amina.otieno'] }),
      email: Type.Union([Type.String(), Type.Null()], { examples: ['amina@bank.example'] }),
      phone: Type.Union([Type.String(), Type.Null()]),
      full_name: Type.Union([Type.String(), Type.Null()], { examples: ['Amina Otieno'] }),
      roles: Type.Array(Type.String(), { examples: [['staff']] }),
      channel: Type.String({ examples: ['web'] }),
      mfa_completed: Type.Boolean(),
      last_login_at: Type.Union([Type.String(ISO), Type.Null()]),
      password_expires_at: Type.Union([Type.String(ISO), Type.Null()]),
    }),
  },
  { title: 'SignInResponse', description: 'A finished sign-in: the token pair, the session and the user\'s profile.' },
);

const LoginBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 256, pattern: NO_NUL, description: 'Username or email', examples: ['amina.otieno'] }),
    password: Type.String({ minLength: 1, maxLength: 1024, examples: ['c0rrect-Battery-staple!'] }),
    device_fingerprint: Type.Optional(Type.String({ maxLength: 256, pattern: NO_NUL, description: 'Binds the tokens to this device; later requests must send the same value in `X-Device-Fingerprint`.', examples: ['a3f1c9e07b2d4e58'] })),
    channel: Type.Optional(Type.Literal('web', { description: 'Always the web channel; the mobile app and agents sign in at `POST /api/v1/auth/login/mobile`, USSD gateways at `POST /api/v1/auth/login/ussd`, so that a channel is known by how a request arrives, never by what it claims.' })),
  },
  { additionalProperties: false },
);

export const ValidateResponse = Type.Object({
  valid: Type.Literal(true),
  user_id: Type.String({ format: 'uuid' }),
  session_id: Type.String({ format: 'uuid' }),
  roles: Type.Array(Type.String()),
  permissions: Type.Array(Type.String()),
  expires_at: Type.String({ ...ISO, description: 'When the access token expires' }),
  channel: Type.String({ description: 'The channel the session was opened on.', examples: ['web'] }),
});

/** The validate answer for an authenticated request (after its access-policy check). */
export function validated(auth: AuthContext) {
  const { claims, session } = auth;
  return {
    valid: true as const,
    user_id: claims.user_id,
    session_id: session.sessionId,
    roles: claims.roles,
    permissions: claims.permissions,
    expires_at: new Date(claims.exp * 1000).toISOString(),
    channel: session.channel,
  };
}

export function clientContext(request: FastifyRequest, ipHasher: Hasher, channel: string, bodyFingerprint?: string): ClientContext {
  return {
    ip: request.ip,
    ipHash: ipHasher.hex(request.ip),
    networkHash: ipHasher.hex(clientNetwork(request.ip)),
    fingerprint: bodyFingerprint?.slice(0, 256) ?? fingerprintOf(request), // the header is cut already
    userAgent: userAgentOf(request),
    channel,
  };
}

export interface SigninRouteDeps {
  db: Db;
  ipHasher: Hasher;
  pipeline: SignInPipeline;
  local: LocalStrategy;
  refresh: RefreshService;
  guard: Guard;
  users: UserStore;
  sessions: SessionService;
  denylist: Denylist;
  audit: AuditLog;
}

export function signinRoutes(s: SigninRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    const tags = ['Core authentication'];
    const bearer = [{ bearer: [] }];

    app.post('/api/v1/auth/login', {
      schema: {
        tags, summary: 'Sign in with username or email and password',
        description: [
          'Checks the password, then the account and password state, access policy and second factor, then issues an access token, a single-use refresh token and a session.',
          '',
          '- `401 INVALID_CREDENTIALS`: wrong username or password. Unknown usernames get the same status, body and timing.',
          '- `429 ACCOUNT_LOCKED` (with `Retry-After`): too many failures; the lock lasts `ACCOUNT_LOCKOUT_MINUTES`.',
          '- `429 RATE_LIMITED` (with `Retry-After`): too many sign-ins from this network or for this username.',
          '- `403 PASSWORD_CHANGE_REQUIRED`: temporary or expired password; `details.reset_token` (10 minutes) goes to `POST /api/v1/auth/reset/password`.',
          '- `401 2FA_REQUIRED`: a second factor must follow; `details` carries `two_factor_token`, `methods`, `expires_in`. Empty `methods`: the account has second factors but none can be used now (the phone that approves sign-ins unreachable, say); `details.recover`, `recover_path` and `recover_lost` name the account recovery to start.',
        ].join('\n'),
        body: LoginBody,
        response: { 200: SignInResponseSchema, ...errors(...SIGN_IN_ERRORS) },
      },
      config: { rateLimit: { group: 'signin', account: bodyField('username') } },
    }, async (request) => {
      const ctx = clientContext(request, s.ipHasher, 'web', request.body.device_fingerprint);
      const result = await s.pipeline.signIn(s.local, { username: request.body.username, password: request.body.password }, ctx);
      useResponseKey(request, result.sessionKey); // an encrypted sign-in hands the client its session key
      return result.body;
    });

    app.post('/api/v1/auth/refresh', {
      schema: {
        tags, summary: 'Exchange a refresh token for a new token pair',
        description: 'Single use: the presented refresh token is spent and a new access token and refresh token are returned. Presenting a spent refresh token again ends its session and every token of its family (`401 REFRESH_TOKEN_REUSED`).',
        body: Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 8192 }) }, { additionalProperties: false }),
        response: { 200: SignInResponseSchema, ...errors(TokenErrors.TOKEN_INVALID, TokenErrors.TOKEN_EXPIRED, TokenErrors.TOKEN_REVOKED, TokenErrors.REFRESH_TOKEN_REUSED, TokenErrors.FINGERPRINT_REQUIRED, TokenErrors.FINGERPRINT_MISMATCH) },
      },
      config: { rateLimit: { group: 'token' } },
    }, async (request) => {
      const ctx = clientContext(request, s.ipHasher, 'web');
      const result = await s.refresh.refresh(request.body.refresh_token, ctx);
      useResponseKey(request, result.sessionKey);
      return result.body;
    });

    app.post('/api/v1/auth/logout', {
      schema: {
        tags, security: bearer, summary: 'End the session',
        description: 'Revokes the access token (its id is denylisted until it expires), ends the session and its refresh tokens. With `all_sessions: true`, every session of the user ends. The one authenticated route the access policy does not refuse: ending a session is never a privilege, so a session refused where it is now can still be ended.',
        body: Type.Object({ all_sessions: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false, description: 'Optional: an empty request body means `{}`.' }),
        response: { 200: Type.Object({ status: Type.Literal('success'), sessions_ended: Type.Integer({ examples: [1] }) }) },
      },
      config: { rateLimit: { group: 'token' } },
      preValidation: async (request) => {
        request.body ??= {}; // no body at all is a plain logout
      },
      onRequest: s.guard.identify,
    }, async (request) => {
      const auth = request.auth!;
      const ctx = clientContext(request, s.ipHasher, auth.session.channel);
      const all = request.body.all_sessions === true;
      const expiresAt = auth.claims.exp * 1000;
      const user = await s.users.findByUuid(auth.claims.user_id);
      const ended = await s.db.transaction().execute(async (trx) => {
        await s.denylist.spend(auth.claims.jti, expiresAt, 'logout', trx); // a parallel logout may have spent it: either way it is denied
        const ids = all ? await s.sessions.endAllForUser(trx, auth.session.userId, 'logout_all') : [auth.session.sessionId];
        if (!all) await s.sessions.endMany(trx, ids, 'logout', auth.session.userId);
        await s.audit.record({ eventType: 'LOGOUT', status: 'SUCCESS', userId: auth.claims.user_id, username: user?.username ?? null, ...auditContext(ctx), details: { all_sessions: all, sessions_ended: ids } }, trx);
        return ids;
      });
      await s.denylist.announce(auth.claims.jti, expiresAt);
      await s.sessions.announce(ended);
      return { status: 'success' as const, sessions_ended: ended.length };
    });

    app.post('/api/v1/auth/validate', {
      schema: {
        tags, security: bearer, summary: 'Validate an access token and its session',
        description: 'The hot path other services call on every request: verifies signature, exp, nbf, iss, aud, the denylist, the session (active, not idle, same device) and the device fingerprint (`X-Device-Fingerprint`), then the access policy of the session\'s channel for this request (IP, schedule, bound device; geofences only on `POST /api/v1/auth/agent/validate`, which carries a location), as every authenticated route does. 200 with the caller, 401 with the reason in `error_code`, or `403 POLICY_RESTRICTED` with `details.rule`. A pre-auth route of transport encryption: `400 DECRYPTION_FAILED` for an envelope that does not open, `422 ENCRYPTION_REQUIRED` for a plaintext call when enforcement is on.',
        response: { 200: ValidateResponse, ...errors(...TOKEN_CHECK_ERRORS) },
      },
      // A pre-auth route (SPEC 3): authenticate after decryption, so token errors are sealed too.
      preHandler: s.guard.authenticate,
    }, async (request) => validated(request.auth!));

  };
}
