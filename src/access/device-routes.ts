/**
 * `/api/v1/admin/device-bindings`: the approval queue and every user's bound devices
 * (permission `devices.manage`). Bodies are docs/decisions.md "Device binding".
 */
import Type from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../platform/http/app.js';
import { publicIdSchema, refuseIntegerIds, type PublicIdKind } from '../platform/http/public-id.js';
import { errors } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import { USER_ID } from '../users/public-id.js';
import type { UserStore } from '../users/store.js';
import { MAX_PENDING_PER_USER, type DeviceBinding, type DeviceBindings } from './devices.js';
import { AccessErrors } from './errors.js';

/** A device binding's public id. */
export const DEVICE_BINDING_ID: PublicIdKind = { what: 'device binding', source: 'the `id` of the binding in GET /api/v1/admin/device-bindings', example: '7d1e9f3a-8b2c-4a6d-b5e4-3c2f1a0b9e8d' };

const ISO = { format: 'date-time' } as const;

const Binding = Type.Object({
  id: publicIdSchema(DEVICE_BINDING_ID),
  user_id: publicIdSchema(USER_ID, 'The user the device would be bound to: their `id` in GET /api/v1/admin/users.'),
  username: Type.String({ examples: ['agent.wanjiru'] }),
  label: Type.String({ description: 'The user agent of the sign-in that asked for the binding.', examples: ['StrongroomAgent/3.2 (Android 14; SM-A145F)'] }),
  channel: Type.String({ description: 'The channel of that sign-in.', examples: ['agent'] }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('revoked')]),
  requested_at: Type.String(ISO),
  decided_at: Type.Union([Type.String(ISO), Type.Null()]),
  decided_by: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The administrator who approved or revoked it.' }),
});

const IdParams = Type.Object({ id: publicIdSchema(DEVICE_BINDING_ID) });

function present(b: DeviceBinding) {
  return { ...b, requested_at: b.requested_at.toISOString(), decided_at: b.decided_at?.toISOString() ?? null };
}

export interface DeviceRouteDeps {
  deviceBindings: DeviceBindings;
  users: UserStore;
  guard: Guard;
}

export function registerDeviceBindingRoutes(instance: FastifyInstance, s: DeviceRouteDeps): void {
  const app = instance as unknown as App;
  const tags = ['Access policy'];
  const security = [{ bearer: [] }];
  const onRequest = s.guard.requirePermission('devices.manage');
  const actorOf = (request: FastifyRequest) => requestActor(request, s.users);
  /** An integer `{id}` (what earlier versions took) answers 422 saying to send the uuid. */
  const preValidation = refuseIntegerIds(DEVICE_BINDING_ID, { params: ['id'] });
  const HOW = `A channel whose policy has \`require_bound_device\` accepts only devices approved here. A sign-in from another device is refused (\`403 POLICY_RESTRICTED\`, rule \`device\`) and leaves a \`pending\` binding (at most ${MAX_PENDING_PER_USER} open per user), audited as \`DEVICE_BINDING_REQUESTED\`. Approving a \`pending\` or \`revoked\` binding lets that device in; revoking ends the user's sessions on it. An administrator cannot decide on their own devices (\`403 DEVICE_BINDING_SELF_APPROVAL\`).`;

  app.get('/api/v1/admin/device-bindings', {
    config: { personalData: true },
    schema: {
      tags, security, summary: 'List device bindings (permission devices.manage)', description: `${HOW} Newest request first; filter by \`status\` (the approval queue is \`status=pending\`) and \`user_id\`.`,
      querystring: Type.Object({
        status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('revoked')])),
        user_id: Type.Optional(publicIdSchema(USER_ID, 'Only this user\'s bindings: their `id` in GET /api/v1/admin/users. Integer ids are not accepted.')),
        page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1 })),
        page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ bindings: Type.Array(Binding), total: Type.Integer(), page: Type.Integer(), page_size: Type.Integer() }) },
    },
    onRequest, preValidation: refuseIntegerIds(USER_ID, { querystring: ['user_id'] }),
  }, async (request) => {
    const page = request.query.page ?? 1;
    const pageSize = request.query.page_size ?? 20;
    const { bindings, total } = await s.deviceBindings.list({ status: request.query.status, userUuid: request.query.user_id, limit: pageSize, offset: (page - 1) * pageSize });
    return { bindings: bindings.map(present), total, page, page_size: pageSize };
  });

  app.post('/api/v1/admin/device-bindings/:id/approve', {
    schema: { tags, security, summary: 'Approve a device binding (permission devices.manage)', description: `${HOW} Audited as \`DEVICE_BINDING_APPROVED\`; every node accepts the device at once. \`409 DEVICE_BINDING_UNCHANGED\` when it is approved already.`, params: IdParams, response: { 200: Type.Object({ binding: Binding }), ...errors(AccessErrors.DEVICE_BINDING_NOT_FOUND, AccessErrors.DEVICE_BINDING_SELF_APPROVAL, AccessErrors.DEVICE_BINDING_UNCHANGED) } },
    onRequest, preValidation,
  }, async (request) => ({ binding: present(await s.deviceBindings.approve(request.params.id, await actorOf(request), requestAuditContext(request))) }));

  app.post('/api/v1/admin/device-bindings/:id/revoke', {
    schema: { tags, security, summary: 'Revoke a device binding, or refuse a pending one (permission devices.manage)', description: `${HOW} Audited as \`DEVICE_BINDING_REVOKED\`; the user's sessions on that device end and every node refuses it at once. \`409 DEVICE_BINDING_UNCHANGED\` when it is revoked already.`, params: IdParams, response: { 200: Type.Object({ binding: Binding }), ...errors(AccessErrors.DEVICE_BINDING_NOT_FOUND, AccessErrors.DEVICE_BINDING_SELF_APPROVAL, AccessErrors.DEVICE_BINDING_UNCHANGED) } },
    onRequest, preValidation,
  }, async (request) => ({ binding: present(await s.deviceBindings.revoke(request.params.id, await actorOf(request), requestAuditContext(request))) }));
}
