/**
 * `/api/v1/admin/access-policies`: list, read, create, replace and delete access policies
 * (permission `policies.manage`). Bodies are docs/decisions.md "Access policy".
 */
import Type, { type Static } from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { App } from '../platform/http/app.js';
import { publicIdSchema, refuseIntegerIds, type PublicIdKind } from '../platform/http/public-id.js';
import { errors, NO_NUL } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { CHANNELS, DEFAULT_MAX_ACCURACY_M, FACTOR_METHODS, type Channel } from './policy.js';
import { MAX_POLYGON_POINTS, MAX_RADIUS_M } from './rules/geo.js';
import { WEEKDAYS } from './rules/schedule.js';
import { registerChannelRoutes } from './channel-routes.js';
import type { ChannelAccessStore } from './channels.js';
import { registerDeviceBindingRoutes } from './device-routes.js';
import type { DeviceBindings } from './devices.js';
import type { AccessPolicyEngine } from './engine.js';
import { registerEvaluateRoute } from './evaluate-routes.js';
import type { Clock } from '../platform/clock.js';
import type { AccessPolicyAdmin } from './service.js';
import type { PolicyInput, PolicyRow } from './store.js';
import { AccessErrors } from './errors.js';

/** An access policy's public id. */
export const ACCESS_POLICY_ID: PublicIdKind = { what: 'access policy', source: 'the `id` of the policy in GET /api/v1/admin/access-policies', example: 'c2a7e4b1-5d3f-4e8a-9b6c-1f0d2e3a4b5c' };

const ISO = { format: 'date-time' } as const;
const Coordinate = Type.Number({ minimum: -180, maximum: 180 });

const Rules = Type.Object({
  allow_channel: Type.Optional(Type.Boolean({ description: '`false`: the users this policy covers may not sign in on the channel at all (rule `channel`).', default: true })),
  ip: Type.Optional(Type.Object({
    allow: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 500, description: 'CIDR blocks or addresses, IPv4 or IPv6; when present and not empty the client address must be in one (rule `ip`).', examples: [['10.20.0.0/16', '2001:db8:40::/48']] })),
    deny: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 500, description: 'CIDR blocks refused even when allowed (deny wins).', examples: [['10.20.99.0/24']] })),
  }, { additionalProperties: false })),
  require_second_factor: Type.Optional(Type.Boolean({ default: false, description: '`true`: the users covered must pass a second factor on this channel; one without a factor enrols one before the sign-in finishes (`403 MFA_SETUP_INCOMPLETE`). Adds to `MFA_REQUIRED_ROLES`.' })),
  require_bound_device: Type.Optional(Type.Boolean({ default: false, description: '`true`: only devices an administrator has bound to the user (`/api/v1/admin/device-bindings`) may sign in or validate on the channel (rule `device`).' })),
  schedule: Type.Optional(Type.Array(Type.Object({
    time_zone: Type.String({ maxLength: 64, description: 'IANA time zone; daylight saving follows the zone\'s rules.', examples: ['Africa/Nairobi'] }),
    days: Type.Array(Type.Union(WEEKDAYS.map((d) => Type.Literal(d))), { minItems: 1, maxItems: 7, examples: [['mon', 'tue', 'wed', 'thu', 'fri', 'sat']] }),
    from: Type.String({ pattern: '^[0-9]{2}:[0-9]{2}$', description: 'Local time, inclusive.', examples: ['07:00'] }),
    to: Type.String({ pattern: '^[0-9]{2}:[0-9]{2}$', description: 'Local time, exclusive; `24:00` is the end of the day; earlier than `from` crosses midnight.', examples: ['20:00'] }),
  }, { additionalProperties: false }), { minItems: 1, maxItems: 50, description: 'Sign-in is allowed inside any window (rule `schedule`).' })),
  geofences: Type.Optional(Type.Array(Type.Union([
    Type.Object({ type: Type.Literal('circle'), lat: Type.Number({ minimum: -90, maximum: 90, examples: [-1.2864] }), lon: Coordinate, radius_m: Type.Number({ exclusiveMinimum: 0, maximum: MAX_RADIUS_M, examples: [250] }) }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('polygon'), points: Type.Array(Type.Tuple([Type.Number({ minimum: -90, maximum: 90 }), Coordinate]), { minItems: 3, maxItems: MAX_POLYGON_POINTS, description: '[latitude, longitude] pairs.' }) }, { additionalProperties: false }),
  ]), { minItems: 1, maxItems: 100, description: 'The reported location, with its whole accuracy circle, must lie inside one area; a sign-in without a location is refused (rule `geofence`).' })),
  max_location_accuracy_m: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 10_000, default: DEFAULT_MAX_ACCURACY_M, description: 'A location less accurate than this is refused.' })),
  second_factor_methods: Type.Optional(Type.Array(Type.Union(FACTOR_METHODS.map((m) => Type.Literal(m))), { minItems: 1, maxItems: FACTOR_METHODS.length, uniqueItems: true, description: 'The second factors that count on this channel (implies `require_second_factor`; `backup_code` goes with `totp`; `passkey` also governs a passwordless passkey sign-in, refused when not listed). Others are not offered; a user holding none of these is refused (`403 POLICY_RESTRICTED`, rule `factor`) and enrols one where they can pass the factor they hold; a user with no factor enrols one of these.', examples: [['totp']] })),
  max_failed_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Failed sign-ins on this channel before the account locks (default `MAX_LOGIN_ATTEMPTS`, 5). One counter per account serves every channel; each channel locks at its own limit. Only on a policy without `role`: attempts are counted before the account is known (422 VALIDATION_ERROR otherwise).', examples: [3] })),
  lockout_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440, description: 'How long that lock lasts (default `ACCOUNT_LOCKOUT_MINUTES`, 15), and how long failures count. Only on a policy without `role`.', examples: [30] })),
  session_inactivity_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440, description: 'A session opened on this channel ends after this long without a request (default `SESSION_INACTIVITY_MINUTES`, 15). Applies to sessions opened after the change.', examples: [5] })),
  max_concurrent_sessions: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Sessions a user may hold on this channel at once; a new sign-in ends the oldest beyond it. `MAX_CONCURRENT_SESSIONS` still bounds all channels together.', examples: [1] })),
}, { additionalProperties: false });

const PolicyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: NO_NUL, examples: ['Agents: bound phone, branch area, working hours'] }),
  channel: Type.Union(CHANNELS.map((c) => Type.Literal(c)), { examples: ['agent'] }),
  role: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL }), Type.Null()], { description: 'Only users holding this role are covered; null or absent: every user on the channel.', examples: ['agent'] })),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  rules: Rules,
}, { additionalProperties: false });

const Policy = Type.Object({
  id: publicIdSchema(ACCESS_POLICY_ID),
  name: Type.String(),
  // The table's CHECK holds a policy to these four; Unsafe keeps the static type (a mapped union is `never` to TypeBox).
  channel: Type.Unsafe<Channel>(Type.Union(CHANNELS.map((c) => Type.Literal(c)), { examples: ['agent'] })),
  role: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  rules: Rules,
  created_at: Type.String(ISO),
  updated_at: Type.String(ISO),
});

const EXAMPLE = {
  name: 'Agents: bound phone, branch area, working hours', channel: 'agent', role: 'agent', enabled: true,
  rules: {
    ip: { deny: ['203.0.113.0/24'] },
    require_bound_device: true,
    schedule: [{ time_zone: 'Africa/Nairobi', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], from: '07:00', to: '20:00' }],
    geofences: [{ type: 'circle', lat: -1.2864, lon: 36.8172, radius_m: 250 }],
    max_location_accuracy_m: 50,
    session_inactivity_minutes: 10,
    max_concurrent_sessions: 1,
  },
};

const IdParams = Type.Object({ id: publicIdSchema(ACCESS_POLICY_ID) });
/** An integer `{id}` (what earlier versions took) answers 422 saying to send the uuid. */
const preValidation = refuseIntegerIds(ACCESS_POLICY_ID, { params: ['id'] });

function present(p: PolicyRow) {
  return { id: p.uuid, name: p.name, channel: p.channel, role: p.role, enabled: p.enabled, rules: p.rules as Static<typeof Rules>, created_at: p.created_at.toISOString(), updated_at: p.updated_at.toISOString() };
}

export interface AccessRouteDeps {
  accessAdmin: AccessPolicyAdmin;
  policyStore: { list(): Promise<PolicyRow[]>; get(uuid: string): Promise<PolicyRow | undefined> };
  /** The engine the sign-in check runs, for the tester (POST .../evaluate). */
  engine: AccessPolicyEngine;
  clock: Clock;
  channels: ChannelAccessStore;
  deviceBindings: DeviceBindings;
  users: UserStore;
  guard: Guard;
}

export function accessRoutes(s: AccessRouteDeps): FastifyPluginAsync {
  const actorOf = (request: FastifyRequest) => requestActor(request, s.users);
  const ctxOf = requestAuditContext;
  const input = (b: { name: string; channel: PolicyInput['channel']; role?: string | null; enabled?: boolean; rules: PolicyInput['rules'] }): PolicyInput =>
    ({ name: b.name, channel: b.channel, role: b.role ?? null, enabled: b.enabled ?? true, rules: b.rules });

  return async (instance) => {
    const app = instance as unknown as App;
    const tags = ['Access policy'];
    const security = [{ bearer: [] }];
    const onRequest = s.guard.requirePermission('policies.manage');
    const RULES_TEXT = 'A sign-in on a channel must satisfy every enabled policy of that channel that covers the user (no `role`, or a role the user holds); a refused one is `403 POLICY_RESTRICTED` with `details.rule` (`channel`, `ip`, `schedule`, `device`, `geofence`, or `factor`: the user holds no second factor the channel accepts) and is audited as `POLICY_VIOLATION`. Every request of a live session (validate, refresh and every authenticated route) is checked against the same policies (IP, schedule, device; geofences on `POST /auth/agent/validate`, which carries a location), and refused alike. Rules that do not compile (a bad CIDR block, time zone or coordinate) are `422 VALIDATION_ERROR` naming the field. Every change is audited and reaches every node at once.';

    app.get('/api/v1/admin/access-policies', {
      schema: { tags, security, summary: 'List access policies (permission policies.manage)', description: RULES_TEXT, response: { 200: Type.Object({ policies: Type.Array(Policy) }) } },
      onRequest,
    }, async () => ({ policies: (await s.policyStore.list()).map(present) }));

    app.post('/api/v1/admin/access-policies', {
      schema: {
        tags, security, summary: 'Create an access policy (permission policies.manage)', description: `${RULES_TEXT} \`409 ACCESS_POLICY_EXISTS\` when the name is taken.`,
        body: { ...PolicyBody, examples: [EXAMPLE] },
        response: { 201: Type.Object({ policy: Policy }, { examples: [{ policy: { id: ACCESS_POLICY_ID.example, ...EXAMPLE, created_at: '2026-11-23T09:00:00.000Z', updated_at: '2026-11-23T09:00:00.000Z' } }] }), ...errors(AccessErrors.ACCESS_POLICY_EXISTS) },
      },
      onRequest,
    }, async (request, reply) => {
      const row = await s.accessAdmin.create(input(request.body), await actorOf(request), ctxOf(request));
      reply.status(201);
      return { policy: present(row) };
    });

    app.get('/api/v1/admin/access-policies/:id', {
      schema: { tags, security, summary: 'Read an access policy (permission policies.manage)', params: IdParams, response: { 200: Type.Object({ policy: Policy }), ...errors(AccessErrors.ACCESS_POLICY_NOT_FOUND) } },
      onRequest, preValidation,
    }, async (request) => ({ policy: present(await s.accessAdmin.get(request.params.id)) }));

    app.put('/api/v1/admin/access-policies/:id', {
      schema: {
        tags, security, summary: 'Replace an access policy (permission policies.manage)', description: `The whole policy is replaced. ${RULES_TEXT}`,
        params: IdParams, body: PolicyBody, response: { 200: Type.Object({ policy: Policy }), ...errors(AccessErrors.ACCESS_POLICY_NOT_FOUND, AccessErrors.ACCESS_POLICY_EXISTS) },
      },
      onRequest, preValidation,
    }, async (request) => ({ policy: present(await s.accessAdmin.update(request.params.id, input(request.body), await actorOf(request), ctxOf(request))) }));

    app.delete('/api/v1/admin/access-policies/:id', {
      schema: { tags, security, summary: 'Delete an access policy (permission policies.manage)', params: IdParams, response: { 200: Type.Object({ status: Type.Literal('success') }), ...errors(AccessErrors.ACCESS_POLICY_NOT_FOUND) } },
      onRequest, preValidation,
    }, async (request) => {
      await s.accessAdmin.delete(request.params.id, await actorOf(request), ctxOf(request));
      return { status: 'success' as const };
    });

    registerDeviceBindingRoutes(instance, s);
    registerChannelRoutes(instance, s);
    registerEvaluateRoute(instance, s);
  };
}
