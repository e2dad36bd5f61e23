/**
 * `POST /api/v1/notifications/send` (issue 14 section 3; permission `notifications.send`): the
 * platform's other services notify a user; one pending message per active device of theirs goes
 * into the outbox, delivered by the worker. Templates are not here yet: the caller gives the title
 * and body.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { AdminErrors } from '../admin/errors.js';
import type { AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import { CommonErrors } from '../platform/errors.js';
import type { App } from '../platform/http/app.js';
import { errors } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { PushErrors } from './errors.js';
import type { PushProvider } from './fcm.js';
import { contentProblems, PUSH_TEXT_MAX, type PushOutbox } from './outbox.js';

export interface SendRouteDeps {
  db: Db;
  outbox: PushOutbox;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
  /** Undefined when push is not configured: nothing is queued that nobody would send. */
  push: PushProvider | undefined;
}

export function sendRoutes(s: SendRouteDeps): FastifyPluginAsync {
  return async (instance) => {
    const app = instance as unknown as App;
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
