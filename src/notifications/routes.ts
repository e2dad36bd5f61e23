/**
 * The push routes:
 * - `POST /api/v1/notifications/devices/{id}/test`: a test notification to one of the signed-in
 *   user's devices, sent now (not queued), so that the app can check its registration and the
 *   operator the provider. SPEC's push errors: an invalid token 400, an unregistered or revoked
 *   token 410 (and the token marked inactive), a provider failure 500.
 * - `POST /api/v1/notifications/send` (issue 14 section 3; permission `notifications.send`): the
 *   platform's other services notify a user; one pending message per active device of theirs
 *   goes into the outbox, delivered by the worker; the text is a template in the user's language
 *   filled with the caller's values, or a title and body as given.
 * - `GET`/`PUT /api/v1/notifications/preferences`: the language of the user's notifications.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../audit/service.js';
import type { DeviceTokenStore } from '../devices/store.js';
import { DeviceErrors } from '../devices/errors.js';
import { DEVICE_TOKEN_ID, DeviceIdParams, refuseIntegerDeviceId } from '../devices/public-id.js';
import { publicIdSchema } from '../platform/http/public-id.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { bullets, errors } from '../platform/http/schemas.js';
import type { Clock } from '../platform/clock.js';
import { AdminErrors } from '../admin/errors.js';
import { CommonErrors } from '../platform/errors.js';
import { requestActor, requestAuditContext, signedInAccount, signedInUser, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { retireDeadToken } from './dead-tokens.js';
import { PushErrors } from './errors.js';
import type { PushProvider } from './fcm.js';
import { contentProblems, PUSH_TEXT_MAX, type PushOutbox } from './outbox.js';
import { FALLBACK_LANGUAGE, SEND_2FA } from './templates/catalogue.js';
import { LanguageSchema, TemplateName, TemplateValues } from './templates/routes.js';
import type { TemplateService } from './templates/service.js';
import { TemplateErrors } from './templates/errors.js';

export interface NotificationRouteDeps {
  db: Db;
  deviceTokens: DeviceTokenStore;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
  /** Undefined when push is not configured (nothing is sent, nor queued that nobody would send). */
  push: PushProvider | undefined;
  outbox: PushOutbox;
  templates: TemplateService;
  clock: Clock;
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
        params: DeviceIdParams,
        response: {
          200: Type.Object({ status: Type.Literal('sent'), device_id: publicIdSchema(DEVICE_TOKEN_ID, 'The device token\'s id (a uuid): the `{id}` of the path.'), message_id: Type.String({ description: 'The provider\'s name for the message.', examples: ['projects/bank-app/messages/0:1700000000000000%31bd1c9631bd1c96'] }) }),
          ...errors(DeviceErrors.DEVICE_TOKEN_NOT_FOUND, PushErrors.PUSH_TOKEN_INVALID, PushErrors.PUSH_TOKEN_GONE, PushErrors.PUSH_PROVIDER_FAILED, PushErrors.PUSH_NOT_CONFIGURED),
        },
      },
      onRequest: s.guard.authenticate, preValidation: refuseIntegerDeviceId,
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
        return { status: 'sent' as const, device_id: device.uuid, message_id: result.messageId };
      }
      if (result.deactivate) {
        await retireDeadToken(s, user.id, device.id, result.reason, { ...requestAuditContext(request), userId: user.uuid, username: user.username });
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
          'The text is either a template, `template` and its `values`, written in the user\'s language (en when the template has none in theirs, or the user chose none), or `title` and `body` as given. The named templates: `INTERNAL_TRANSFER` (`debit_name`, `credit_name`, `amount`, `currency`, `debit_account`, `credit_account`, `transaction_reference_id`), `DEPOSIT` (`amount`, `currency`, `account`, `transaction_reference_id`), `INITIAL_DEPOSIT` (`name`, `amount`, `currency`, `account`).',
          '',
          bullets(
            '`422 TEMPLATE_VALUES_INVALID` (`details.missing`, `details.unknown`): a placeholder without a value, or a value the template has no placeholder for. Nothing is queued: a message never goes out with braces in it.',
            '`404 TEMPLATE_NOT_FOUND`: no such template in the user\'s language nor in en.',
            '`422 VALIDATION_ERROR`: `send2FA` and `push_data.kind: one_time_code` are reserved for the one-time codes the service sends itself.',
            `\`422 VALIDATION_ERROR\` naming the field: the limits (\`title\` and \`body\`, once filled, at most ${PUSH_TEXT_MAX} characters; \`push_data\` string keys and string values only; \`image_url\` https only), or \`template\` together with \`title\`/\`body\`, or neither.`,
            '`404 USER_NOT_FOUND`: no such user. `503 PUSH_NOT_CONFIGURED`: this service has no push provider (nothing is queued that nobody would send).',
            'A user with no active device: `queued: 0`. Audited as PUSH_QUEUED (the template\'s name, never the text).',
          ),
        ].join('\n'),
        body: Type.Object({
          user_id: Type.String({ format: 'uuid', description: 'The user to notify.' }),
          template: Type.Optional(TemplateName),
          values: Type.Optional(TemplateValues),
          title: Type.Optional(Type.String({ minLength: 1, maxLength: PUSH_TEXT_MAX * 2, examples: ['Money received'] })),
          body: Type.Optional(Type.String({ minLength: 1, maxLength: PUSH_TEXT_MAX * 2, examples: ['Kofi Mensah sent you 1,500.00 KES.'] })),
          push_data: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 32, examples: [{ kind: 'transfer', reference: 'TRX-20261126-0042' }] })),
          image_url: Type.Optional(Type.String({ maxLength: 2048, examples: ['https://cdn.bank.example/push/transfer.png'] })),
        }, {
          additionalProperties: false,
          examples: [
            { user_id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', template: 'INTERNAL_TRANSFER', values: { debit_name: 'Amina Otieno', credit_name: 'Kofi Mensah', amount: '1,500.00', currency: 'KES', debit_account: '****4471', credit_account: '****9012', transaction_reference_id: 'TRX-20261126-0042' }, push_data: { kind: 'transfer', reference: 'TRX-20261126-0042' } },
            { user_id: '3f0c8a5e-2b7d-4d6a-9a51-0c6b1e2f4a77', title: 'Branch closed on Friday', body: 'The Westlands branch is closed on 4 December; the app and agents work as usual.' },
          ],
        }),
        response: {
          202: Type.Object({
            status: Type.Literal('queued'),
            queued: Type.Integer({ description: 'Messages queued: one per active device.' }),
            message_ids: Type.Array(Type.String()),
            language: Type.Optional(Type.String({ description: 'With a template: the language it was written in.', examples: ['pt'] })),
          }),
          ...errors(AdminErrors.USER_NOT_FOUND, TemplateErrors.TEMPLATE_NOT_FOUND, TemplateErrors.TEMPLATE_VALUES_INVALID, PushErrors.PUSH_NOT_CONFIGURED),
        },
      },
      onRequest: s.guard.requirePermission('notifications.send'),
    }, async (request, reply) => {
      const b = request.body;
      if (!s.push) throw PushErrors.PUSH_NOT_CONFIGURED();
      const shape = b.template !== undefined
        ? [...(b.title !== undefined ? ['title'] : []), ...(b.body !== undefined ? ['body'] : [])].map((field) => ({ location: 'body', field, message: 'must not be given with template' }))
        : [...(b.values !== undefined ? [{ location: 'body', field: 'values', message: 'needs template' }] : []), ...(b.title === undefined && b.body === undefined ? [{ location: 'body', field: 'template', message: 'give template (and values), or title and body' }] : [])];
      // A one-time code push comes only from the MFA work: nobody else may send what looks like one.
      if (b.template === SEND_2FA) shape.push({ location: 'body', field: 'template', message: `${SEND_2FA} is reserved for one-time codes (POST /api/v1/auth/2fa/request)` });
      if (b.push_data?.kind === 'one_time_code') shape.push({ location: 'body', field: 'push_data.kind', message: 'one_time_code is reserved for one-time codes' });
      if (shape.length > 0) throw CommonErrors.VALIDATION_ERROR({ fields: shape });
      const user = await s.users.findByUuid(b.user_id);
      if (!user) throw AdminErrors.USER_NOT_FOUND();
      const rendered = b.template === undefined ? undefined : await s.templates.render('push', b.template, user.language, b.values ?? {});
      const content = { title: rendered?.title ?? b.title, body: rendered?.body ?? b.body, data: b.push_data, imageUrl: b.image_url };
      const problems = contentProblems(content);
      if (problems.length > 0) throw CommonErrors.VALIDATION_ERROR({ fields: problems.map((p) => ({ location: 'body', ...p, ...(rendered ? { message: `${p.message} once the template is filled` } : {}) })) });
      const actor = await requestActor(request, s.users);
      const ids = await s.db.transaction().execute(async (trx) => {
        const queued = await s.outbox.enqueue(trx, user.id, { title: content.title!, body: content.body!, ...(b.push_data === undefined ? {} : { data: b.push_data as Record<string, string> }), ...(b.image_url === undefined ? {} : { imageUrl: b.image_url }) });
        await s.audit.record({ ...requestAuditContext(request), eventType: 'PUSH_QUEUED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { queued: queued.length, by: actor.username, ...(rendered ? { template: b.template, language: rendered.language } : {}) } }, trx);
        return queued;
      });
      return reply.status(202).send({ status: 'queued' as const, queued: ids.length, message_ids: ids, ...(rendered ? { language: rendered.language } : {}) });
    });

    const Preferences = Type.Object({ language: LanguageSchema }, { examples: [{ language: 'pt' }] });
    app.get('/api/v1/notifications/preferences', {
      schema: {
        tags: ['Device tokens'], security: [{ bearer: [] }], summary: 'The language your notifications are written in',
        description: 'en until you choose another (or the administrator who created your account did).',
        response: { 200: Preferences },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const user = await signedInUser(request, s.users);
      return { language: user.language ?? FALLBACK_LANGUAGE };
    });

    app.put('/api/v1/notifications/preferences', {
      schema: {
        tags: ['Device tokens'], security: [{ bearer: [] }], summary: 'Choose the language of your notifications: en, pt or fr',
        description: 'Templates are written in this language when they exist in it, else in en. Audited as NOTIFICATION_LANGUAGE_CHANGED.',
        body: Type.Object({ language: LanguageSchema }, { additionalProperties: false }),
        response: { 200: Preferences },
      },
      onRequest: s.guard.authenticate,
      config: { rateLimit: { group: 'account', account: signedInAccount } },
    }, async (request) => {
      const user = await signedInUser(request, s.users);
      const { language } = request.body;
      await s.db.transaction().execute(async (trx) => {
        const before = await s.users.setLanguage(trx, user.id, language, new Date(s.clock.now()));
        if ((before ?? FALLBACK_LANGUAGE) !== language) {
          await s.audit.record({ ...requestAuditContext(request), eventType: 'NOTIFICATION_LANGUAGE_CHANGED', status: 'SUCCESS', userId: user.uuid, username: user.username, details: { from: before ?? FALLBACK_LANGUAGE, to: language } }, trx);
        }
      });
      return { language };
    });
  };
}
