/**
 * `POST /api/v1/notifications/devices/{id}/test`: a test notification to one of the signed-in
 * user's devices, sent now (not queued), so that the app can check its registration and the
 * operator the provider. SPEC's push errors: an invalid token 400, an unregistered or revoked
 * token 410 (and the token marked inactive), a provider failure 500.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../audit/service.js';
import type { DeviceTokenStore } from '../devices/store.js';
import { DeviceErrors } from '../devices/errors.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { requestAuditContext, signedInAccount, type Guard } from '../sessions/guard.js';
import { TokenErrors } from '../tokens/errors.js';
import type { UserStore } from '../users/store.js';
import { PushErrors } from './errors.js';
import type { PushProvider } from './fcm.js';

export interface PushRouteDeps {
  db: Db;
  deviceTokens: DeviceTokenStore;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
  /** Undefined when push is not configured. */
  push: PushProvider | undefined;
}

export function pushRoutes(s: PushRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
    app.post('/api/v1/notifications/devices/:id/test', {
      schema: {
        tags: ['Device tokens'], security: [{ bearer: [] }], summary: 'Send a test notification to one of your devices, now',
        description: [
          'Sends "Test notification" to the device through the push provider at once (not through the queue) and answers what the provider said.',
          '',
          '- `400 PUSH_TOKEN_INVALID`: the provider calls the token malformed; it is marked inactive.',
          '- `410 PUSH_TOKEN_GONE` (`details.reason`): the provider reports the token unregistered (`unregistered`) or of another sender (`sender_id_mismatch`), and it is marked inactive (audited DEVICE_TOKEN_DEACTIVATED); or it is inactive already (`inactive`, nothing sent).',
          '- `500 PUSH_PROVIDER_FAILED` (`details.reason`): the provider failed, timed out or refused our credentials; the token is left as it is.',
          '- `503 PUSH_NOT_CONFIGURED`; `404 DEVICE_TOKEN_NOT_FOUND` for an unknown id and for another user\'s alike.',
        ].join('\n'),
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) }),
        response: {
          200: Type.Object({ status: Type.Literal('sent'), device_id: Type.Integer(), message_id: Type.String({ description: 'The provider\'s name for the message.', examples: ['projects/bank-app/messages/0:1700000000000000%31bd1c9631bd1c96'] }) }),
          ...errors(400, 401, 404, 410, 422, 429, 500, 503),
        },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const user = await s.users.findByUuid(request.auth!.claims.user_id);
      if (!user) throw TokenErrors.TOKEN_REVOKED();
      const device = await s.deviceTokens.get(user.id, request.params.id);
      if (!device) throw DeviceErrors.DEVICE_TOKEN_NOT_FOUND();
      if (!s.push) throw PushErrors.PUSH_NOT_CONFIGURED();
      if (!device.is_active) throw PushErrors.PUSH_TOKEN_GONE({ reason: 'inactive' });
      const result = await s.push.send({ token: device.push_token, title: 'Test notification', body: 'Notifications reach this device.', data: { kind: 'test' } });
      if (result.ok) {
        await s.deviceTokens.markUsed(user.id, device.id);
        return { status: 'sent' as const, device_id: device.id, message_id: result.messageId };
      }
      if (result.deactivate) {
        await s.db.transaction().execute(async (trx) => {
          if (await s.deviceTokens.deactivateDead(user.id, device.id, trx)) {
            await s.audit.record({ ...requestAuditContext(request), eventType: 'DEVICE_TOKEN_DEACTIVATED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { device_token_id: device.id, by: 'push_provider', reason: result.reason } }, trx);
          }
        });
        if (result.reason === 'invalid_token') throw PushErrors.PUSH_TOKEN_INVALID({ reason: result.reason });
        throw PushErrors.PUSH_TOKEN_GONE({ reason: result.reason });
      }
      throw PushErrors.PUSH_PROVIDER_FAILED({ reason: result.reason });
    });
  };
}
