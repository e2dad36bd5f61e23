/**
 * SPEC "Device tokens" under `/api/v1/notifications/devices`: every route signed in, each user
 * managing only their own tokens (another user's id answers 404, never 403). Tokens are shown
 * masked (docs/decisions.md "Device tokens"); every change is audited. A token is named by its
 * uuid (`id` in the answers, `{id}` in the paths, the audit details); an integer is refused.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AuditEvent, AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { publicIdSchema } from '../platform/http/public-id.js';
import { errors } from '../platform/http/schemas.js';
import { MfaErrors } from '../mfa/errors.js';
import { requestAuditContext, signedInAccount, signedInUser, type Guard } from '../sessions/guard.js';
import { lockUserRow, type UserRow, type UserStore } from '../users/store.js';
import { DeviceErrors } from './errors.js';
import { DEVICE_TOKEN_ID, DeviceIdParams, refuseIntegerDeviceId } from './public-id.js';
import { MAX_ACTIVE_DEVICES, MAX_DEVICES, maskToken, type DeviceToken, type DeviceTokenStore, type Registered, type Trimmed } from './store.js';

export interface DeviceRouteDeps {
  deviceTokens: DeviceTokenStore;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
}

const tags = ['Device tokens'];
const security = [{ bearer: [] }];
const BASE = '/api/v1/notifications/devices';

/** FCM registration tokens (Android, iOS through FCM, web push): letters, digits, `:`, `_`, `-`, `.`. */
const PUSH_TOKEN_PATTERN = '^[A-Za-z0-9:_.-]+$';

const Device = Type.Object({
  id: publicIdSchema(DEVICE_TOKEN_ID, 'The device token\'s id (a uuid): what `/api/v1/notifications/devices/{id}` and the `device_id` of `POST /api/v1/2fa/otp/setup` take.'),
  push_token: Type.String({ description: 'Masked: the first 6 and last 4 characters (all but the last 4 when shorter than 17). The full token is never shown again.', examples: ['dQw4w9…Xc3A'] }),
  platform: Type.Union([Type.Literal('mobile'), Type.Literal('web')]),
  device_name: Type.Union([Type.String(), Type.Null()], { examples: ['Amina\'s Pixel 8'] }),
  is_active: Type.Boolean({ description: 'Whether the token receives notifications; the push provider reporting it unregistered turns it off.' }),
  receives_codes: Type.Boolean({ description: 'Whether one-time codes by push go to this device (the one confirmed at push enrolment; at most one).' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a notification last went to it.' }),
  created_on: Type.String({ format: 'date-time' }),
  updated_on: Type.String({ format: 'date-time' }),
});

const iso = (d: Date | string): string => new Date(d).toISOString();

/** What turning off or deleting the phone that approves sign-ins does (src/push-approval listens). */
const APPROVAL_PHONE = 'The phone enrolled for push approval: turning its token off or deleting it removes the `push_approval` second factor (audited `PUSH_APPROVAL_REMOVED`) and denies its pending requests; its owner must have proved a second factor in this session in the last 10 minutes first (`403 STEP_UP_REQUIRED`, checked in the same transaction as the change).';

function present(d: DeviceToken) {
  return {
    id: d.uuid, push_token: maskToken(d.push_token), platform: d.platform, device_name: d.device_name, is_active: d.is_active, receives_codes: d.receives_codes,
    last_used_at: d.last_used_at === null ? null : iso(d.last_used_at), created_on: iso(d.created_on), updated_on: iso(d.updated_on),
  };
}

const EVENTS: Record<Registered['outcome'], AuditEvent> = { created: 'DEVICE_TOKEN_REGISTERED', reactivated: 'DEVICE_TOKEN_REACTIVATED', transferred: 'DEVICE_TOKEN_TRANSFERRED' };

export function deviceRoutes(s: DeviceRouteDeps & { db: Db }): FastifyPluginAsync {
  const owner = (request: FastifyRequest): Promise<UserRow> => signedInUser(request, s.users);
  const audit = async (request: FastifyRequest, user: UserRow, eventType: AuditEvent, details: Record<string, unknown>, trx?: Db): Promise<void> => {
    await s.audit.record({ ...requestAuditContext(request), eventType, status: 'SUCCESS', userId: user.uuid, username: user.username, details }, trx);
  };
  const onRequest = s.guard.authenticate;

  /** The tokens a registration or activation retired to keep the user within the limits. */
  const auditTrimmed = async (request: FastifyRequest, user: UserRow, t: Trimmed, trx: Db): Promise<void> => {
    if (t.deactivated.length > 0) await audit(request, user, 'DEVICE_TOKEN_DEACTIVATED', { device_token_ids: t.deactivated, by: 'device_limit', limit: MAX_ACTIVE_DEVICES }, trx);
    if (t.deleted.length > 0) await audit(request, user, 'DEVICE_TOKEN_DELETED', { device_token_ids: t.deleted, by: 'device_limit', limit: MAX_DEVICES }, trx);
  };

  return async (instance) => {
    const app = instance as unknown as App;

    app.post(`${BASE}/register`, {
      schema: {
        tags, security, summary: 'Register this device\'s push token',
        description: [
          'Registers the push token the app got from the push provider (Firebase Cloud Messaging) for the signed-in user.',
          '',
          '- A token nobody has: created, `201`.',
          '- A token the user has already: reactivated (and its platform and name updated) instead of duplicated, `200`.',
          '- A token another user has (a phone that changed hands): it moves to the signed-in user, `200`; audited as DEVICE_TOKEN_TRANSFERRED naming both users, on both trails. When it was the previous owner\'s phone for push approval, their `push_approval` factor stays (anyone holding the token could register it: that must not strip their second factor), but is not offered while the token is not theirs: their sign-in asks for another factor, or, when it is their only one, answers `401 2FA_REQUIRED` with no method and names a device recovery. Their app registering the token again brings it back.',
          '',
          `Limits per user: ${MAX_ACTIVE_DEVICES} active tokens (each notification and each code by push goes to every one) and ${MAX_DEVICES} in all. Past them the least recently used active token is turned off (audited DEVICE_TOKEN_DEACTIVATED, \`by: device_limit\`), then the least recently used inactive one deleted (DEVICE_TOKEN_DELETED); the token being registered is never the one.`,
          '',
          'The token is stored encrypted (DB_FIELD_ENCRYPTION) and answered masked. `422 VALIDATION_ERROR`: a token of other characters than letters, digits, `:`, `_`, `-`, `.`, or not 20 to 4,096 long; a platform other than `mobile` or `web`; a device name over 100 characters or with control characters.',
        ].join('\n'),
        body: Type.Object({
          push_token: Type.String({ minLength: 20, maxLength: 4096, pattern: PUSH_TOKEN_PATTERN, description: 'The registration token from the push provider.', examples: ['dQw4w9WgXcQ:APA91bH2x7k3Lq9Zr0Xc3A'] }),
          platform: Type.Union([Type.Literal('mobile'), Type.Literal('web')], { description: 'mobile or web.' }),
          device_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^(?=[^]*\\S)[^\\u0000-\\u001F\\u007F]+$', description: 'Some text besides spaces, no control characters; trimmed.', examples: ['Amina\'s Pixel 8'] })),
        }, { additionalProperties: false, examples: [{ push_token: 'dQw4w9WgXcQ:APA91bH2x7k3Lq9Zr0Xc3A', platform: 'mobile', device_name: 'Amina\'s Pixel 8' }] }),
        response: { 200: Device, 201: Device, ...errors(DeviceErrors.DEVICE_TOKEN_BUSY) },
      },
      onRequest,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request, reply) => {
      const user = await owner(request);
      const { push_token: pushToken, platform, device_name: deviceName } = request.body;
      const r = await s.deviceTokens.register(user.id, { pushToken, platform, deviceName: deviceName?.trim() ?? null }, async (trx, registered) => {
        const from = registered.outcome === 'transferred' ? await s.users.findById(registered.fromUserId, trx) : undefined;
        await audit(request, user, EVENTS[registered.outcome], { device_token_id: registered.device.uuid, platform, ...(from ? { from_user_id: from.uuid, from_username: from.username } : {}) }, trx);
        // The previous owner's history says it too: their notifications stopped going to that device.
        if (from) await audit(request, from, 'DEVICE_TOKEN_TRANSFERRED', { device_token_id: registered.device.uuid, platform, to_user_id: user.uuid, to_username: user.username }, trx);
        await auditTrimmed(request, user, registered.trimmed, trx);
      }, requestAuditContext(request));
      return reply.status(r.outcome === 'created' ? 201 : 200).send(present(r.device));
    });

    app.get(BASE, {
      schema: {
        tags, security, summary: 'List your device tokens',
        description: 'Oldest first. `active_only=true`: only the tokens that receive notifications.',
        querystring: Type.Object({ active_only: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        response: { 200: Type.Object({ devices: Type.Array(Device), total: Type.Integer() }) },
      },
      onRequest,
      config: { personalData: true },
    }, async (request) => {
      const user = await owner(request);
      const devices = await s.deviceTokens.list(user.id, request.query.active_only ?? false);
      return { devices: devices.map(present), total: devices.length };
    });

    app.get(`${BASE}/:id`, {
      schema: { tags, security, summary: 'One of your device tokens', description: '`404 DEVICE_TOKEN_NOT_FOUND` for an unknown id and for another user\'s alike.', params: DeviceIdParams, response: { 200: Device, ...errors(DeviceErrors.DEVICE_TOKEN_NOT_FOUND) } },
      onRequest, preValidation: refuseIntegerDeviceId,
      config: { personalData: true },
    }, async (request) => {
      const user = await owner(request);
      const device = await s.deviceTokens.get(user.id, request.params.id);
      if (!device) throw DeviceErrors.DEVICE_TOKEN_NOT_FOUND();
      return present(device);
    });

    for (const [verb, active, event] of [['deactivate', false, 'DEVICE_TOKEN_DEACTIVATED'], ['activate', true, 'DEVICE_TOKEN_ACTIVATED']] as const) {
      app.put(`${BASE}/:id/${verb}`, {
        schema: {
          tags, security, summary: active ? 'Turn notifications to a device back on' : 'Stop notifications to a device',
          description: `Sets \`is_active\` to ${active}. \`404 DEVICE_TOKEN_NOT_FOUND\` for an unknown id and for another user's alike. Audited as ${event}.${active ? '' : `\n\n${APPROVAL_PHONE}`}`,
          params: DeviceIdParams, response: { 200: Device, ...errors(DeviceErrors.DEVICE_TOKEN_NOT_FOUND, ...(active ? [] : [MfaErrors.STEP_UP_REQUIRED])) },
        },
        onRequest, preValidation: refuseIntegerDeviceId,
        config: { rateLimit: { group: 'account', account: signedInAccount } },
      }, async (request) => {
        const user = await owner(request);
        const device = await s.db.transaction().execute(async (trx) => {
          await lockUserRow(trx, user.id);
          // Turning off: the listeners' checks (the phone that approves sign-ins needs a step-up) run in this transaction, under the locks.
          const d = await s.deviceTokens.setActive(user.id, request.params.id, active, trx, requestAuditContext(request), request.auth!);
          if (d) await audit(request, user, event, { device_token_id: d.uuid }, trx);
          if (d && active) await auditTrimmed(request, user, await s.deviceTokens.trim(trx, user.id, d.id), trx);
          return d;
        });
        if (!device) throw DeviceErrors.DEVICE_TOKEN_NOT_FOUND();
        return present(device);
      });
    }

    const Deleted = Type.Object({ status: Type.Literal('success'), deleted: Type.Integer({ description: 'How many tokens were deleted.' }) });

    app.delete(`${BASE}/:id`, {
      schema: { tags, security, summary: 'Delete one of your device tokens', description: `\`404 DEVICE_TOKEN_NOT_FOUND\` for an unknown id and for another user's alike. Audited as DEVICE_TOKEN_DELETED.\n\n${APPROVAL_PHONE}`, params: DeviceIdParams, response: { 200: Deleted, ...errors(DeviceErrors.DEVICE_TOKEN_NOT_FOUND, MfaErrors.STEP_UP_REQUIRED) } },
      onRequest, preValidation: refuseIntegerDeviceId,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const user = await owner(request);
      const ids = await s.db.transaction().execute(async (trx) => {
        const deleted = await s.deviceTokens.delete(user.id, request.params.id, trx, requestAuditContext(request), request.auth!);
        if (deleted.length > 0) await audit(request, user, 'DEVICE_TOKEN_DELETED', { device_token_ids: deleted }, trx);
        return deleted;
      });
      if (ids.length === 0) throw DeviceErrors.DEVICE_TOKEN_NOT_FOUND();
      return { status: 'success' as const, deleted: ids.length };
    });

    app.delete(BASE, {
      schema: { tags, security, summary: 'Delete all your device tokens', description: `Every token of the signed-in user (signing out of every device's notifications). \`deleted: 0\` when there were none. Audited as DEVICE_TOKEN_DELETED.\n\n${APPROVAL_PHONE}`, response: { 200: Deleted, ...errors(MfaErrors.STEP_UP_REQUIRED) } },
      onRequest,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const user = await owner(request);
      const ids = await s.db.transaction().execute(async (trx) => {
        const deleted = await s.deviceTokens.delete(user.id, undefined, trx, requestAuditContext(request), request.auth!);
        if (deleted.length > 0) await audit(request, user, 'DEVICE_TOKEN_DELETED', { device_token_ids: deleted, all: true }, trx);
        return deleted;
      });
      return { status: 'success' as const, deleted: ids.length };
    });
  };
}
