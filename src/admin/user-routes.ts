/**
 * User lifecycle administration under `/api/v1/admin/users`: find (keyset pages), read, change,
 * soft-delete, and list or end a user's sessions. Each route names its permission; users are
 * named by their uuid (an integer id is refused, saying so).
 */
import type { Hasher } from '../platform/crypto/field-cipher.js';
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import { requestWho, type Guard } from '../sessions/guard.js';
import type { Session, SessionService } from '../sessions/service.js';
import { refuseIntegerUserId, USER_UUID_EXAMPLE, UserIdParams, UserSessionParams } from '../users/public-id.js';
import { EMAIL_MAX_LENGTH, PHONE_PATTERN } from '../users/rules.js';
import type { UserStore } from '../users/store.js';
import { RoleErrors } from '../roles/errors.js';
import { AdminErrors } from './errors.js';
import type { UserLifecycle } from './lifecycle.js';
import { ADMIN_USER_EXAMPLE, AdminUser, ISO, Nullable, presentUser, UserStatusSchema } from './schemas.js';
import type { UserDirectory } from './user-directory.js';

export interface UserRouteDeps {
  lifecycle: UserLifecycle;
  directory: UserDirectory;
  sessions: SessionService;
  users: UserStore;
  guard: Guard;
  /** Keyed hashes of device fingerprints, to tell a user's devices apart without showing one. */
  deviceTags: Hasher;
}

const tags = ['Administration'];
const security = [{ bearer: [] }];
const USER_STATUS_SHORT = '`active`, `disabled`, `locked` (failed attempts; until `locked_until`), `deleted`.';

const ListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 100, pattern: NO_NUL, description: 'Matches the username or full name by case-insensitive substring, or the whole email address or phone number (stored encrypted, found by their blind indexes: a part of one finds nothing).', examples: ['amina'] })),
  role: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL, description: 'Only holders of this role.', examples: ['staff'] })),
  entity: Type.Optional(Type.String({ minLength: 1, maxLength: 32, pattern: NO_NUL, description: 'Only users of this branch (its code, any case).', examples: ['NBO-001'] })),
  status: Type.Optional(UserStatusSchema),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: '^[A-Za-z0-9_-]+$', description: 'The `next_cursor` of the previous page, unchanged; absent for the first page.', examples: ['eyJ2IjoxLCJhZnRlciI6ImFtaW5hLm90aWVubyJ9'] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Users per page, 1 to 200 (default 50).', examples: [50] })),
}, { additionalProperties: false });

const UserPage = Type.Object({
  users: Type.Array(AdminUser),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Send it as `cursor` for the next page; null: this is the last page.' }),
  limit: Type.Integer({ examples: [50] }),
}, { title: 'AdminUserPage', description: 'A page of users in username order.', examples: [{ users: [ADMIN_USER_EXAMPLE], next_cursor: 'eyJ2IjoxLCJhZnRlciI6ImFtaW5hLm90aWVubyJ9', limit: 50 }] });

const UserChangeBody = Type.Object({
  full_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, examples: ['Amina W. Otieno'] }))),
  email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: EMAIL_MAX_LENGTH, examples: ['amina.otieno@bank.example'] }))),
  phone: Type.Optional(Nullable(Type.String({ pattern: PHONE_PATTERN, description: 'E.164', examples: ['+254700000013'] }))),
  language: Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('pt'), Type.Literal('fr'), Type.Null()], { description: 'The language of the user\'s notifications; null: en.', examples: ['fr'] })),
  roles: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 10, uniqueItems: true, description: 'The whole set of roles (replaces the current one).', examples: [['staff', 'operator']] })),
  entities: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { maxItems: 50, uniqueItems: true, description: 'The whole set of branch codes (replaces the current one; `[]` unlinks every branch).', examples: [['NBO-001']] })),
  active: Type.Optional(Type.Boolean({ description: '`false` disables the account and ends its sessions at once; `true` enables it again.', examples: [false] })),
}, { additionalProperties: false, minProperties: 1, title: 'AdminUserChange', description: 'Any of the fields; an absent one stays as it is, `null` clears a nullable one.', examples: [{ roles: ['staff', 'operator'], entities: ['NBO-001'] }, { active: false }] });

const UserChanged = Type.Object({
  user: AdminUser,
  sessions_ended: Type.Integer({ minimum: 0, description: 'Sessions of the user this change ended (disabled, deleted, or roles changed).', examples: [2] }),
}, { title: 'AdminUserChanged', examples: [{ user: { ...ADMIN_USER_EXAMPLE, roles: ['staff', 'operator'] }, sessions_ended: 0 }] });

const SessionView = Type.Object({
  session_id: Type.String({ format: 'uuid', examples: ['8e2b7c1d-4f3a-4b5c-9d6e-7f8a9b0c1d2e'] }),
  channel: Type.String({ examples: ['web'] }),
  created_at: Type.String(ISO),
  last_activity: Type.String({ ...ISO, description: 'Written at most every SESSION_ACTIVITY_WRITE_SECONDS (default 60), so up to that much behind.' }),
  expires_at: Type.String({ ...ISO, description: 'The end of the session\'s lifetime, whatever its activity.' }),
  idle_expires_at: Type.String({ ...ISO, description: 'When it ends for inactivity unless a request comes first (from the recorded activity).' }),
  mfa_completed: Type.Boolean(),
  device_tag: Nullable(Type.String({ description: 'The device the session is bound to, as a keyed hash of its fingerprint (HMAC-SHA-256 under the server\'s key, hex): the same device shows the same tag on every session and node; the fingerprint itself is never shown and cannot be guessed from the tag. null: not bound to a device.', examples: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'] })),
  ip_address: Type.String({ description: 'As stored: an HMAC of the client address under the server\'s key, never the address itself.', examples: ['5d41402abc4b2a76b9719d911017c592ae1c2b7dd1b0ea6b51cdc0f1a2b3c4d5'] }),
  user_agent: Type.String({ examples: ['Mozilla/5.0 (X11; Linux x86_64)'] }),
}, { title: 'AdminUserSession', description: 'A session as administrators see it: never a token or a key.' });

const SESSION_EXAMPLE = {
  session_id: '8e2b7c1d-4f3a-4b5c-9d6e-7f8a9b0c1d2e', channel: 'web', created_at: '2026-11-27T08:00:00.000Z', last_activity: '2026-11-27T08:40:00.000Z',
  expires_at: '2026-12-04T08:00:00.000Z', idle_expires_at: '2026-11-27T09:10:00.000Z', mfa_completed: true, device_tag: null,
  ip_address: '5d41402abc4b2a76b9719d911017c592ae1c2b7dd1b0ea6b51cdc0f1a2b3c4d5', user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
};
const SessionList = Type.Object({ user_id: Type.String({ format: 'uuid', examples: [USER_UUID_EXAMPLE] }), sessions: Type.Array(SessionView, { description: 'Oldest first.' }) }, {
  title: 'AdminUserSessions', description: 'The user\'s active sessions.', examples: [{ user_id: USER_UUID_EXAMPLE, sessions: [SESSION_EXAMPLE] }],
});
const SessionsEnded = Type.Object({
  status: Type.Literal('success'),
  sessions_ended: Type.Array(Type.String({ format: 'uuid' }), { description: 'The ids of the sessions ended (empty: there were none).', examples: [['8e2b7c1d-4f3a-4b5c-9d6e-7f8a9b0c1d2e']] }),
}, { title: 'AdminSessionsEnded', examples: [{ status: 'success', sessions_ended: ['8e2b7c1d-4f3a-4b5c-9d6e-7f8a9b0c1d2e'] }] });

const TOKENS_TEXT = 'Disabling ends every session of the user at once: their access tokens are refused from the next request (`401 SESSION_INVALID`), their refresh tokens too. Any change of `roles` ends the user\'s sessions the same way (a new role may require a second factor or channel access the session never passed): the user signs in again. Branches are not carried in tokens.';

function presentSession(sessions: SessionService, tags: Hasher, s: Session) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    session_id: s.sessionId, channel: s.channel, created_at: iso(s.createdAt), last_activity: iso(s.lastActivity), expires_at: iso(s.expiresAt),
    idle_expires_at: iso(Math.min(sessions.idleEndsAt(s), s.expiresAt)), mfa_completed: s.mfaCompleted,
    device_tag: s.deviceFingerprint === '' ? null : tags.hex(s.deviceFingerprint),
    ip_address: s.ipAddress, user_agent: s.userAgent,
  };
}

type Who = (request: FastifyRequest) => ReturnType<typeof requestWho>;

/** `GET /api/v1/admin/users`. */
function findRoute(app: App, s: UserRouteDeps): void {
  app.get('/api/v1/admin/users', {
    config: { personalData: true },
    schema: {
      tags, security, summary: 'Find users (permission users.read)',
      description: `Users in username order, a page at a time: \`limit\` per page, and \`next_cursor\` to send as \`cursor\` for the next one (null on the last page). Filters combine: \`search\` (username or full name by case-insensitive substring; the whole email address or phone number, found by their blind indexes), \`role\`, \`entity\` (a branch code) and \`status\`. Deleted accounts are listed only with \`status=deleted\`. Status: ${USER_STATUS_SHORT}`,
      querystring: ListQuery,
      response: { 200: UserPage, ...errors(CommonErrors.VALIDATION_ERROR) },
    },
    onRequest: s.guard.requirePermission('users.read'),
  }, async (request) => {
    const q = request.query;
    const limit = q.limit ?? 50;
    const page = await s.directory.page({ search: q.search, role: q.role, entity: q.entity, status: q.status, cursor: q.cursor, limit });
    return { users: page.users.map(presentUser), next_cursor: page.nextCursor, limit };
  });
}

/** `GET`, `PATCH` and `DELETE /api/v1/admin/users/{id}`. */
function userRoute(app: App, s: UserRouteDeps, who: Who): void {
  const preValidation = refuseIntegerUserId;
  app.get('/api/v1/admin/users/:id', {
    config: { personalData: true },
    schema: {
      tags, security, summary: 'Read a user (permission users.read)', description: 'Deleted accounts too (`status: deleted`). `404 USER_NOT_FOUND` for an unknown uuid; an integer id is refused (`422 VALIDATION_ERROR`): send the uuid.',
      params: UserIdParams,
      response: { 200: Type.Object({ user: AdminUser }, { title: 'AdminUserRead', examples: [{ user: ADMIN_USER_EXAMPLE }] }), ...errors(AdminErrors.USER_NOT_FOUND) },
    },
    onRequest: s.guard.requirePermission('users.read'), preValidation,
  }, async (request) => ({ user: presentUser(await s.lifecycle.get(request.params.id)) }));

  app.patch('/api/v1/admin/users/:id', {
    schema: {
      tags, security, summary: 'Change a user (permission users.update)',
      description: `Changes the name, contacts, language, roles, branches or whether the account is active; audited as USER_UPDATED (USER_DISABLED or USER_ENABLED when \`active\` changes), with the fields changed (never a contact's value). ${TOKENS_TEXT} Refusals: \`409 USER_EXISTS\` (\`details.fields\`) when another account has the email or phone number; \`409 IDENTIFIER_CONFLICT\` when the email is another account's username; \`422 UNKNOWN_ROLE\`; \`403 PERMISSION_NOT_HELD\` for a role granting a permission you do not hold yourself (\`details.permissions\`, \`details.roles\`); \`403 ACCOUNT_MORE_PRIVILEGED\` for an account holding a permission you do not hold (\`details.permissions\`); \`422 UNKNOWN_ENTITY\` for a branch that does not exist, or a deactivated one the user is not linked to yet; \`409 CANNOT_DISABLE_SELF\` for your own account with \`active: false\`; \`409 LAST_ADMIN\` when no other active account would hold the admin role; \`409 ACCOUNT_DELETED\` for a deleted account.`,
      params: UserIdParams, body: UserChangeBody,
      response: {
        200: UserChanged,
        ...errors(AdminErrors.USER_NOT_FOUND, AdminErrors.USER_EXISTS, AdminErrors.IDENTIFIER_CONFLICT, AdminErrors.UNKNOWN_ROLE, AdminErrors.UNKNOWN_ENTITY, AdminErrors.CANNOT_DISABLE_SELF, AdminErrors.LAST_ADMIN, AdminErrors.ACCOUNT_DELETED, RoleErrors.PERMISSION_NOT_HELD, RoleErrors.ACCOUNT_MORE_PRIVILEGED),
      },
    },
    onRequest: s.guard.requirePermission('users.update'), preValidation,
  }, async (request) => {
    const b = request.body;
    const r = await s.lifecycle.update(request.params.id, {
      fullName: b.full_name, email: b.email === undefined || b.email === null ? b.email : b.email.trim(), phone: b.phone, language: b.language, roles: b.roles, entities: b.entities, active: b.active,
    }, await who(request));
    return { user: presentUser(r.user), sessions_ended: r.sessionsEnded };
  });

  app.delete('/api/v1/admin/users/:id', {
    schema: {
      tags, security, summary: 'Delete a user (permission users.delete)',
      description: 'Soft deletion: the account is disabled for good and marked deleted (`status: deleted`, `deleted_at`), every session and refresh token of the user ends at once, and the row stays for the audit trail (USER_DELETED). It can still be read, not changed (`409 ACCOUNT_DELETED`); its username, email and phone stay taken. Erasing personal data is a data-rights request, not this route. `409 CANNOT_DISABLE_SELF` for your own account; `409 LAST_ADMIN` when no other active account would hold the admin role.',
      params: UserIdParams,
      response: { 200: UserChanged, ...errors(AdminErrors.USER_NOT_FOUND, AdminErrors.CANNOT_DISABLE_SELF, AdminErrors.LAST_ADMIN, AdminErrors.ACCOUNT_DELETED, RoleErrors.ACCOUNT_MORE_PRIVILEGED) },
    },
    onRequest: s.guard.requirePermission('users.delete'), preValidation,
  }, async (request) => {
    const r = await s.lifecycle.delete(request.params.id, await who(request));
    return { user: presentUser(r.user), sessions_ended: r.sessionsEnded };
  });
}

/** A user's sessions: list, end all, end one. */
function sessionRoutes(app: App, s: UserRouteDeps, who: Who): void {
  const preValidation = refuseIntegerUserId;
  app.get('/api/v1/admin/users/:id/sessions', {
    config: { personalData: true },
    schema: {
      tags, security, summary: 'List a user\'s sessions (permission users.read)',
      description: 'The user\'s active sessions, oldest first: never a token or a session key; the device as `device_tag` (a keyed hash of its fingerprint), the client address as the stored HMAC.',
      params: UserIdParams,
      response: { 200: SessionList, ...errors(AdminErrors.USER_NOT_FOUND) },
    },
    onRequest: s.guard.requirePermission('users.read'), preValidation,
  }, async (request) => {
    const r = await s.lifecycle.sessionsOf(request.params.id);
    return { user_id: r.user.uuid, sessions: r.sessions.map((x) => presentSession(s.sessions, s.deviceTags, x)) };
  });

  app.delete('/api/v1/admin/users/:id/sessions', {
    schema: {
      tags, security, summary: 'End every session of a user (permission users.update)',
      description: 'Ends every active session of the user now, on every node: their access tokens are refused from the next request and their refresh tokens are revoked. The account stays usable: the user can sign in again. Audited as SESSION_ENDED.',
      params: UserIdParams,
      response: { 200: SessionsEnded, ...errors(AdminErrors.USER_NOT_FOUND, RoleErrors.ACCOUNT_MORE_PRIVILEGED) },
    },
    onRequest: s.guard.requirePermission('users.update'), preValidation,
  }, async (request) => ({ status: 'success' as const, sessions_ended: await s.lifecycle.endSessions(request.params.id, undefined, await who(request)) }));

  app.delete('/api/v1/admin/users/:id/sessions/:session_id', {
    schema: {
      tags, security, summary: 'End one session of a user (permission users.update)',
      description: 'Ends the session now, on every node (its access and refresh tokens with it). `404 SESSION_NOT_FOUND` when the user has no active session with this id. Audited as SESSION_ENDED.',
      params: UserSessionParams,
      response: { 200: SessionsEnded, ...errors(AdminErrors.USER_NOT_FOUND, AdminErrors.SESSION_NOT_FOUND, RoleErrors.ACCOUNT_MORE_PRIVILEGED) },
    },
    onRequest: s.guard.requirePermission('users.update'), preValidation,
  }, async (request) => ({ status: 'success' as const, sessions_ended: await s.lifecycle.endSessions(request.params.id, request.params.session_id, await who(request)) }));
}

export function userRoutes(s: UserRouteDeps): FastifyPluginAsync {
  const who: Who = (request) => requestWho(request, s.users);
  return async (instance) => {
    const app = instance as unknown as App;
    findRoute(app, s);
    userRoute(app, s, who);
    sessionRoutes(app, s, who);
  };
}
