/** Administration: users and the audit trail. Each route names the permission it needs. */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, COUNT_CAP, type AuditLog } from '../audit/service.js';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { errors, NO_NUL, Pagination } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import { refuseIntegerUserId, UserIdParams } from '../users/public-id.js';
import { EMAIL_MAX_LENGTH, PHONE_PATTERN, USERNAME_PATTERN, USERNAME_RULE } from '../users/rules.js';
import type { UserStore } from '../users/store.js';
import { ADMIN_USER_EXAMPLE, AdminUser, ISO, presentUser } from './schemas.js';
import { CredentialErrors } from '../credentials/errors.js';
import { RoleErrors } from '../roles/errors.js';
import { AdminErrors } from './errors.js';
import type { AdminService } from './service.js';
import type { UserDirectory } from './user-directory.js';


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

const AuditLocation = Type.Object({
  internal: Type.Optional(Type.Boolean({ description: 'true: an internal address (the bank\'s own networks, a proxy, loopback), never a country; no other field is present.' })),
  country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2.', examples: ['KE'] })),
  asn: Type.Optional(Type.Integer({ description: 'Autonomous system number of the network (with an ASN database).', examples: [33771] })),
  as_org: Type.Optional(Type.String({ description: 'The network\'s organisation as the ASN database names it.', examples: ['Safaricom Limited'] })),
  city: Type.Optional(Type.String({ description: 'With a city database.', examples: ['Nairobi'] })),
  latitude: Type.Optional(Type.Number({ examples: [-1.2864] })),
  longitude: Type.Optional(Type.Number({ examples: [36.8172] })),
  accuracy_km: Type.Optional(Type.Number({ description: 'The city database\'s accuracy radius in kilometres, when it gives one.', examples: [20] })),
}, {
  title: 'AuditLocation',
  examples: [
    { country: 'KE', asn: 33771, as_org: 'Safaricom Limited', city: 'Nairobi', latitude: -1.2864, longitude: 36.8172, accuracy_km: 20 },
    { country: 'PT' },
    { internal: true },
  ],
});

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
  location: Type.Union([AuditLocation, Type.Null()], { description: 'Where the client address was when the entry was written, from the operator\'s geolocation databases: a country (with the network and, with a city database, the city), `{"internal": true}` for a private, loopback, link-local, carrier-grade NAT or unique-local address, or null (no client address, or none the databases know).' }),
  security_events: Type.Array(Type.Object({ event: Type.String(), count: Type.Integer(), timestamp: Type.String(ISO) })),
  risk_score: Type.Union([Type.Number(), Type.Null()]),
  suspicious_indicators: Type.Array(Type.Unknown()),
  details: Type.Record(Type.String(), Type.Unknown()),
});

const AuditPage = Type.Object({
  entries: Type.Array(AuditEntrySchema),
  page: Type.Integer({ description: 'The page number asked for (1 when `cursor` was sent).' }),
  page_size: Type.Integer(),
  total: Type.Integer({ description: `Entries matching the filters, counted up to ${COUNT_CAP}.` }),
  total_exact: Type.Boolean({ description: `false: more than ${COUNT_CAP} entries match, and \`total\` says ${COUNT_CAP}.` }),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Send as `cursor` for the next page; null on the last page.' }),
}, { title: 'AuditPage', examples: [{ entries: [], page: 1, page_size: 50, total: 1000, total_exact: false, next_cursor: 'eyJ2IjoxLCJhdCI6IjIwMjYtMTEtMjhUMDE6MDI6MDMuMTIzNDU2WiIsImlkIjoiMGI5ZS4uLiJ9' }] });

export interface AdminRouteDeps {
  admin: AdminService;
  users: UserStore;
  directory: UserDirectory;
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
        description: `Creates the user with a temporary password. When email delivery is configured (SMTP_URL) and \`email\` is given, the password is emailed to the user and the response holds \`delivery: "email"\` and no password; otherwise it is returned once as \`temporary_password\` with \`delivery: "response"\`. The user must change it at first sign-in (\`403 PASSWORD_CHANGE_REQUIRED\`). \`409 USER_EXISTS\` when the username, email or phone number is taken (\`details.fields\` names which; a phone number names one USSD subscriber); \`409 IDENTIFIER_CONFLICT\` when the username is another account's email or the email another account's username (sign-in accepts either, so one would reach the other); \`422 UNKNOWN_ROLE\` for a role that does not exist; \`403 PERMISSION_NOT_HELD\` for a role granting a permission you do not hold yourself; ${MAIL_FAILURE_TEXT}`,
        body: CreateUserBody,
        response: {
          201: Type.Object({ user: AdminUser, delivery: Delivery, temporary_password: TemporaryPassword }, {
            examples: [
              { user: { ...ADMIN_USER_EXAMPLE, must_change_password: true, last_login_at: null, entities: [] }, delivery: 'email' },
              { user: { ...ADMIN_USER_EXAMPLE, id: '9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e', uuid: '9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e', username: 'branch.kiosk', email: null, phone: null, full_name: null, roles: ['operator'], entities: [], must_change_password: true, last_login_at: null }, delivery: 'response', temporary_password: 'q7N#vX2m-Tb9@kLp4Rz' },
            ],
            title: 'AdminUserCreated',
          }),
          ...errors(AdminErrors.USER_EXISTS, AdminErrors.IDENTIFIER_CONFLICT, AdminErrors.UNKNOWN_ROLE, RoleErrors.PERMISSION_NOT_HELD, AdminErrors.MAIL_DELIVERY_FAILED),
        },
      },
      onRequest: s.guard.requirePermission('users.create'),
    }, async (request, reply) => {
      const b = request.body;
      const created = await admin.createUser({ username: b.username, email: b.email ?? null, phone: b.phone ?? null, fullName: b.full_name ?? null, language: b.language ?? null, roles: b.roles }, await actorOf(request), ctxOf(request));
      reply.status(201);
      const delivery = created.delivery ?? 'response';
      return { user: presentUser((await s.directory.byUuid(created.user.uuid))!), delivery, ...(delivery === 'response' ? { temporary_password: created.temporaryPassword! } : {}) };
    });

    app.post('/api/v1/admin/users/:id/reset-password', {
      schema: {
        tags, security, summary: 'Reset a user\'s password (permission users.update)',
        description: `Issues a new temporary password, forces a change at next sign-in and ends every session of the user. The password is emailed to the user when email delivery is configured and the user has an email address (\`delivery: "email"\`, no password in the response); otherwise it is returned once as \`temporary_password\` (\`delivery: "response"\`). ${MAIL_FAILURE_TEXT} The old password and the sessions stay as they were. A directory (LDAP) user's password is the directory's: \`409 PASSWORD_MANAGED_EXTERNALLY\`, and nothing changes (a local password would outlive their directory account).`,
        params: UserIdParams,
        response: {
          200: Type.Object({ status: Type.Literal('success'), delivery: Delivery, temporary_password: TemporaryPassword }, {
            examples: [{ status: 'success', delivery: 'email' }, { status: 'success', delivery: 'response', temporary_password: 'q7N#vX2m-Tb9@kLp4Rz' }],
            title: 'AdminPasswordReset',
          }),
          ...errors(AdminErrors.USER_NOT_FOUND, AdminErrors.ACCOUNT_DELETED, CredentialErrors.PASSWORD_MANAGED_EXTERNALLY, AdminErrors.MAIL_DELIVERY_FAILED, RoleErrors.ACCOUNT_MORE_PRIVILEGED),
        },
      },
      onRequest: s.guard.requirePermission('users.update'), preValidation: refuseIntegerUserId,
    }, async (request) => {
      const r = await admin.resetPassword(request.params.id, await actorOf(request), ctxOf(request));
      return { status: 'success' as const, delivery: r.delivery, ...(r.delivery === 'response' ? { temporary_password: r.temporaryPassword } : {}) };
    });

    app.post('/api/v1/admin/users/:id/unlock', {
      schema: {
        tags, security, summary: 'Unlock an account (permission users.update)',
        description: 'Clears the failed sign-in counters and any lock of the account: the password\'s and the USSD PIN\'s.',
        params: UserIdParams,
        response: { 200: Type.Object({ status: Type.Literal('success'), user: AdminUser }, { title: 'AdminUserUnlocked', examples: [{ status: 'success', user: ADMIN_USER_EXAMPLE }] }), ...errors(AdminErrors.USER_NOT_FOUND, RoleErrors.ACCOUNT_MORE_PRIVILEGED) },
      },
      onRequest: s.guard.requirePermission('users.update'), preValidation: refuseIntegerUserId,
    }, async (request) => {
      const user = await admin.unlock(request.params.id, await actorOf(request), ctxOf(request));
      return { status: 'success' as const, user: presentUser((await s.directory.byUuid(user.uuid))!) };
    });

    app.get('/api/v1/admin/audit', {
      config: { personalData: true },
      schema: {
        tags, security, summary: 'Read the audit trail (permission audit.read)',
        description: `Newest first. Filter by \`user_id\` (the user's uuid), \`event_type\` (${AUDIT_EVENTS.join(', ')}), \`status\` (\`SUCCESS\`, \`FAILURE\`, \`DETECTED\`), \`channel\` (the client's channel: \`web\`, \`mobile\`, \`ussd\`, \`agent\`), \`country\` (ISO 3166-1 alpha-2, upper case: entries whose \`location.country\` is that country, located when they were written) and a time range \`[from, to)\`. Page through with \`cursor\`: send the \`next_cursor\` of a page to get the next one (null on the last page); each page then costs the same however deep it is. \`page\` numbers still work but read past every entry before the page; \`page\` is ignored when \`cursor\` is sent. \`total\` counts the matching entries exactly up to ${COUNT_CAP}; past that it says ${COUNT_CAP} with \`total_exact: false\` ("more than"), so a busy day's first page does not wait for a count of the whole day.`,
        querystring: Type.Object({
          user_id: Type.Optional(Type.String({ format: 'uuid' })),
          event_type: Type.Optional(Type.String({ pattern: '^[A-Z0-9_]{1,64}$' })),
          status: Type.Optional(Type.Union([Type.Literal('SUCCESS'), Type.Literal('FAILURE'), Type.Literal('DETECTED')], { description: 'Only entries with this outcome.', examples: ['FAILURE'] })),
          channel: Type.Optional(Type.String({ pattern: '^[a-z0-9_-]{1,32}$', description: 'Only entries written for a client on this channel (`web`, `mobile`, `ussd`, `agent`).', examples: ['web'] })),
          country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 country code, upper case: only entries located in that country. Anything else is `422 VALIDATION_ERROR` naming `country`.', examples: ['KE'] })),
          from: Type.Optional(Type.String(ISO)),
          to: Type.Optional(Type.String(ISO)),
          cursor: Type.Optional(Type.String({ maxLength: 256, description: 'The `next_cursor` of the previous page, unchanged.' })),
          ...Pagination,
        }, { additionalProperties: false }),
        response: { 200: AuditPage, ...errors(CommonErrors.VALIDATION_ERROR) },
      },
      onRequest: s.guard.requirePermission('audit.read'),
    }, async (request) => {
      const q = request.query;
      const page = q.page ?? 1;
      const pageSize = q.page_size ?? 50;
      const r = await s.audit.query({ userId: q.user_id, eventType: q.event_type, status: q.status, channel: q.channel, country: q.country, from: q.from, to: q.to, limit: pageSize, offset: (page - 1) * pageSize, cursor: q.cursor });
      return { entries: r.entries as never, page: q.cursor === undefined ? page : 1, page_size: pageSize, total: r.total, total_exact: r.totalExact, next_cursor: r.nextCursor };
    });
  };
}
