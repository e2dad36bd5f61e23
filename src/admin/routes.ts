/** Administration: users and the audit trail. Each route names the permission it needs. */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, type AuditLog } from '../audit/service.js';
import type { App } from '../platform/http/app.js';
import { errors, NO_NUL, Pagination } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import { EMAIL_MAX_LENGTH, PHONE_PATTERN, USERNAME_PATTERN, USERNAME_RULE } from '../users/rules.js';
import type { UserRow, UserStore } from '../users/store.js';
import type { AdminService } from './service.js';

const ISO = { format: 'date-time' } as const;

const AdminUser = Type.Object({
  id: Type.Integer({ examples: [42] }),
  uuid: Type.String({ format: 'uuid' }),
  username: Type.String({ examples: ['amina.otieno'] }),
  email: Type.Union([Type.String(), Type.Null()], { examples: ['amina@bank.example'] }),
  phone: Type.Union([Type.String(), Type.Null()], { examples: ['+254700000012'] }),
  full_name: Type.Union([Type.String(), Type.Null()], { examples: ['Amina Otieno'] }),
  roles: Type.Array(Type.String(), { examples: [['staff']] }),
  is_active: Type.Boolean(),
  must_change_password: Type.Boolean(),
  last_login_at: Type.Union([Type.String(ISO), Type.Null()]),
  created_at: Type.String(ISO),
});

const CreateUserBody = Type.Object(
  {
    username: Type.String({ pattern: USERNAME_PATTERN, description: USERNAME_RULE, examples: ['amina.otieno'] }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: EMAIL_MAX_LENGTH, examples: ['amina@bank.example'] })),
    phone: Type.Optional(Type.String({ pattern: PHONE_PATTERN, description: 'E.164', examples: ['+254700000012'] })),
    full_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, examples: ['Amina Otieno'] })),
    language: Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('pt'), Type.Literal('fr')], { description: 'The language of the user\'s notifications (default en); the user may change it (`PUT /api/v1/notifications/preferences`)', examples: ['pt'] })),
    roles: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 10, uniqueItems: true, examples: [['staff']] }),
  },
  { additionalProperties: false },
);

const DELIVERY_TEXT = 'Where the temporary password went. `email`: sent to the user\'s email address (email delivery is configured and the user has one); `temporary_password` is then absent, and nobody but the user sees it. `response`: returned once here as `temporary_password`.';
const Delivery = Type.Union([Type.Literal('email'), Type.Literal('response')], { description: DELIVERY_TEXT, examples: ['email'] });
const TemporaryPassword = Type.Optional(Type.String({ description: 'Present only when `delivery` is `response`. Shown once; never retrievable again.', examples: ['q7N#vX2m-Tb9@kLp4Rz'] }));
const MAIL_FAILURE_TEXT = '`503 MAIL_DELIVERY_FAILED` when email delivery applies and the SMTP server does not accept the message: nothing was changed (the transaction rolled back), so try again.';

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

const AuditEntrySchema = Type.Object({
  audit_id: Type.String({ format: 'uuid' }),
  timestamp: Type.String(ISO),
  event_type: Type.String({ examples: ['USER_LOGIN'] }),
  user_id: Type.Union([Type.String(), Type.Null()]),
  username: Type.Union([Type.String(), Type.Null()]),
  status: Type.String({ examples: ['SUCCESS'] }),
  ip_address: Type.Union([Type.String(), Type.Null()]),
  device_fingerprint: Type.Union([Type.String(), Type.Null()]),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  channel: Type.Union([Type.String(), Type.Null()]),
  mfa_method: Type.Union([Type.String(), Type.Null()]),
  location: Type.Union([Type.Object({ country: Type.Optional(Type.String()), city: Type.Optional(Type.String()), latitude: Type.Optional(Type.Number()), longitude: Type.Optional(Type.Number()) }), Type.Null()]),
  security_events: Type.Array(Type.Object({ event: Type.String(), count: Type.Integer(), timestamp: Type.String(ISO) })),
  risk_score: Type.Union([Type.Number(), Type.Null()]),
  suspicious_indicators: Type.Array(Type.Unknown()),
  details: Type.Record(Type.String(), Type.Unknown()),
});

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

function present(u: UserRow, roles: string[]) {
  return {
    id: u.id, uuid: u.uuid, username: u.username, email: u.email, phone: u.phone, full_name: u.full_name, roles,
    is_active: u.is_active, must_change_password: u.must_change_password, last_login_at: iso(u.last_login_at), created_at: iso(u.created_at)!,
  };
}

export interface AdminRouteDeps {
  admin: AdminService;
  users: UserStore;
  guard: Guard;
  audit: AuditLog;
}

export function adminRoutes(s: AdminRouteDeps): FastifyPluginAsync {
  const { admin } = s;
  const actorOf = (request: FastifyRequest) => requestActor(request, s.users);
  const ctxOf = requestAuditContext;

  return async (instance) => {
    const app = instance as unknown as App;
    const tags = ['Administration'];
    const security = [{ bearer: [] }];

    app.post('/api/v1/admin/users', {
      schema: {
        tags, security, summary: 'Create a user (permission users.create)',
        description: `Creates the user with a temporary password. When email delivery is configured (SMTP_URL) and \`email\` is given, the password is emailed to the user and the response holds \`delivery: "email"\` and no password; otherwise it is returned once as \`temporary_password\` with \`delivery: "response"\`. The user must change it at first sign-in (\`403 PASSWORD_CHANGE_REQUIRED\`). \`409 USER_EXISTS\` when the username, email or phone number is taken (\`details.fields\` names which; a phone number names one USSD subscriber); \`409 IDENTIFIER_CONFLICT\` when the username is another account's email or the email another account's username (sign-in accepts either, so one would reach the other); \`422 UNKNOWN_ROLE\` for a role that does not exist; ${MAIL_FAILURE_TEXT}`,
        body: CreateUserBody,
        response: {
          201: Type.Object({ user: AdminUser, delivery: Delivery, temporary_password: TemporaryPassword }, {
            examples: [
              { user: { id: 42, uuid: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', username: 'amina.otieno', email: 'amina@bank.example', phone: null, full_name: 'Amina Otieno', roles: ['staff'], is_active: true, must_change_password: true, last_login_at: null, created_at: '2026-01-15T09:00:00.000Z' }, delivery: 'email' },
              { user: { id: 43, uuid: '9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e', username: 'branch.kiosk', email: null, phone: null, full_name: null, roles: ['operator'], is_active: true, must_change_password: true, last_login_at: null, created_at: '2026-01-15T09:00:00.000Z' }, delivery: 'response', temporary_password: 'q7N#vX2m-Tb9@kLp4Rz' },
            ],
          }),
          ...errors(400, 401, 403, 409, 422, 503),
        },
      },
      onRequest: s.guard.requirePermission('users.create'),
    }, async (request, reply) => {
      const b = request.body;
      const created = await admin.createUser({ username: b.username, email: b.email ?? null, phone: b.phone ?? null, fullName: b.full_name ?? null, language: b.language ?? null, roles: b.roles }, await actorOf(request), ctxOf(request));
      reply.status(201);
      const delivery = created.delivery ?? 'response';
      return { user: present(created.user, created.roles), delivery, ...(delivery === 'response' ? { temporary_password: created.temporaryPassword! } : {}) };
    });

    app.get('/api/v1/admin/users', {
      schema: {
        tags, security, summary: 'List users (permission users.read)',
        description: '`search` matches username or full name by case-insensitive substring, or the whole email address (case-insensitive; emails are stored encrypted and found by their blind index).',
        querystring: Type.Object({ search: Type.Optional(Type.String({ maxLength: 100, pattern: NO_NUL })), ...Pagination }, { additionalProperties: false }),
        response: { 200: Type.Object({ users: Type.Array(AdminUser), page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() }), ...errors(401, 403, 422) },
      },
      onRequest: s.guard.requirePermission('users.read'),
    }, async (request) => {
      const page = request.query.page ?? 1;
      const pageSize = request.query.page_size ?? 50;
      const r = await s.users.list({ search: request.query.search, limit: pageSize, offset: (page - 1) * pageSize });
      return { users: r.users.map((u) => present(u, u.roles)), page, page_size: pageSize, total: r.total };
    });

    app.post('/api/v1/admin/users/:id/reset-password', {
      schema: {
        tags, security, summary: 'Reset a user\'s password (permission users.update)',
        description: `Issues a new temporary password, forces a change at next sign-in and ends every session of the user. The password is emailed to the user when email delivery is configured and the user has an email address (\`delivery: "email"\`, no password in the response); otherwise it is returned once as \`temporary_password\` (\`delivery: "response"\`). ${MAIL_FAILURE_TEXT} The old password and the sessions stay as they were. A directory (LDAP) user's password is the directory's: \`409 PASSWORD_MANAGED_EXTERNALLY\`, and nothing changes (a local password would outlive their directory account).`,
        params: IdParams,
        response: {
          200: Type.Object({ status: Type.Literal('success'), delivery: Delivery, temporary_password: TemporaryPassword }, {
            examples: [{ status: 'success', delivery: 'email' }, { status: 'success', delivery: 'response', temporary_password: 'q7N#vX2m-Tb9@kLp4Rz' }],
          }),
          ...errors(400, 401, 403, 404, 409, 422, 503),
        },
      },
      onRequest: s.guard.requirePermission('users.update'),
    }, async (request) => {
      const r = await admin.resetPassword(request.params.id, await actorOf(request), ctxOf(request));
      return { status: 'success' as const, delivery: r.delivery, ...(r.delivery === 'response' ? { temporary_password: r.temporaryPassword } : {}) };
    });

    app.post('/api/v1/admin/users/:id/unlock', {
      schema: {
        tags, security, summary: 'Unlock an account (permission users.update)',
        description: 'Clears the failed sign-in counters and any lock of the account: the password\'s and the USSD PIN\'s.',
        params: IdParams,
        response: { 200: Type.Object({ status: Type.Literal('success'), user: AdminUser }), ...errors(400, 401, 403, 404, 422) },
      },
      onRequest: s.guard.requirePermission('users.update'),
    }, async (request) => {
      const user = await admin.unlock(request.params.id, await actorOf(request), ctxOf(request));
      return { status: 'success' as const, user: present(user, (await s.users.grants(user.id)).roles) };
    });

    app.get('/api/v1/admin/audit', {
      schema: {
        tags, security, summary: 'Read the audit trail (permission audit.read)',
        description: `Newest first. Filter by \`user_id\` (the user's uuid), \`event_type\` (${AUDIT_EVENTS.join(', ')}) and a time range \`[from, to)\`.`,
        querystring: Type.Object({
          user_id: Type.Optional(Type.String({ format: 'uuid' })),
          event_type: Type.Optional(Type.String({ pattern: '^[A-Z0-9_]{1,64}$' })),
          from: Type.Optional(Type.String(ISO)),
          to: Type.Optional(Type.String(ISO)),
          ...Pagination,
        }, { additionalProperties: false }),
        response: { 200: Type.Object({ entries: Type.Array(AuditEntrySchema), page: Type.Integer(), page_size: Type.Integer(), total: Type.Integer() }), ...errors(401, 403, 422) },
      },
      onRequest: s.guard.requirePermission('audit.read'),
    }, async (request) => {
      const q = request.query;
      const page = q.page ?? 1;
      const pageSize = q.page_size ?? 50;
      const r = await s.audit.query({ userId: q.user_id, eventType: q.event_type, from: q.from, to: q.to, limit: pageSize, offset: (page - 1) * pageSize });
      return { entries: r.entries as never, page, page_size: pageSize, total: r.total };
    });
  };
}
