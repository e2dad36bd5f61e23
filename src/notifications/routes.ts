/**
 * The push routes:
 * - `POST /api/v1/notifications/devices/{id}/test`: a test notification to one of the signed-in
 *   user's devices, sent now (not queued), so that the app can check its registration and the
 *   operator the provider. SPEC's push errors: an invalid token 400, an unregistered or revoked
 *   token 410 (and the token marked inactive), a provider failure 500.
 * - `POST /api/v1/notifications/send` (issue 14 section 3; permission `notifications.send`): the
 *   platform's other services notify a user; one pending message per active device of theirs
 *   goes into the outbox, delivered by the worker. Templates are not here yet: the caller gives
 *   the title and body.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../audit/service.js';
import type { DeviceTokenStore } from '../devices/store.js';
import { DeviceErrors } from '../devices/errors.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { AdminErrors } from '../admin/errors.js';
import { CommonErrors } from '../platform/errors.js';
import { requestActor, requestAuditContext, signedInAccount, signedInUser, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { PushErrors } from './errors.js';
import type { PushProvider } from './fcm.js';
import { contentProblems, PUSH_TEXT_MAX, type PushOutbox } from './outbox.js';

export interface NotificationRouteDeps {
  db: Db;
  deviceTokens: DeviceTokenStore;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
  /** Undefined when push is not configured (nothing is sent, nor queued that nobody would send). */
  push: PushProvider | undefined;
  outbox: PushOutbox;
}

export function notificationRoutes(s: NotificationRouteDeps): FastifyPluginAsync {
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
      const user = await signedInUser(request, s.users);
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

    app.post('/api/v1/notifications/send', {
      schema: {
        tags: ['Device tokens'], security: [{ bearer: [] }], summary: 'Notify a user on their devices (permission notifications.send)',
        description: [
          'Queues one push notification per active device of the user (`user_id`, their UUID) and answers at once; the delivery worker sends them (at least once, retried with backoff; docs/decisions.md "Push delivery").',
          '',
          `SPEC's limits: \`title\` and \`body\` at most ${PUSH_TEXT_MAX} characters, \`push_data\` string keys and string values only, \`image_url\` https only; a violation is \`422 VALIDATION_ERROR\` naming the field. \`404 USER_NOT_FOUND\`: no such user. \`503 PUSH_NOT_CONFIGURED\`: this service has no push provider (nothing is queued that nobody would send). A user with no active device: \`queued: 0\`. Audited as PUSH_QUEUED.`,
        ].join('\n'),
        body: Type.Object({
          user_id: Type.String({ format: 'uuid', description: 'The user to notify.' }),
          title: Type.String({ minLength: 1, maxLength: PUSH_TEXT_MAX * 2, examples: ['Money received'] }),
          body: Type.String({ minLength: 1, maxLength: PUSH_TEXT_MAX * 2, examples: ['Kofi Mensah sent you 1,500.00 KES.'] }),
          push_data: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 32, examples: [{ kind: 'transfer', reference: 'TRX-20261126-0042' }] })),
          image_url: Type.Optional(Type.String({ maxLength: 2048, examples: ['https://cdn.bank.example/push/transfer.png'] })),
        }, { additionalProperties: false }),
        response: { 202: Type.Object({ status: Type.Literal('queued'), queued: Type.Integer({ description: 'Messages queued: one per active device.' }), message_ids: Type.Array(Type.String()) }), ...errors(400, 401, 403, 404, 413, 415, 422, 429, 503) },
      },
      onRequest: s.guard.requirePermission('notifications.send'),
    }, async (request, reply) => {
      const b = request.body;
      if (!s.push) throw PushErrors.PUSH_NOT_CONFIGURED();
      const problems = contentProblems({ title: b.title, body: b.body, data: b.push_data, imageUrl: b.image_url });
      if (problems.length > 0) throw CommonErrors.VALIDATION_ERROR({ fields: problems.map((p) => ({ location: 'body', ...p })) });
      const user = await s.users.findByUuid(b.user_id);
      if (!user) throw AdminErrors.USER_NOT_FOUND();
      const actor = await requestActor(request, s.users);
      const ids = await s.db.transaction().execute(async (trx) => {
        const queued = await s.outbox.enqueue(trx, user.id, { title: b.title, body: b.body, ...(b.push_data === undefined ? {} : { data: b.push_data as Record<string, string> }), ...(b.image_url === undefined ? {} : { imageUrl: b.image_url }) });
        await s.audit.record({ ...requestAuditContext(request), eventType: 'PUSH_QUEUED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { queued: queued.length, by: actor.username } }, trx);
        return queued;
      });
      return reply.status(202).send({ status: 'queued' as const, queued: ids.length, message_ids: ids });
    });
  };
}
