/**
 * Template administration under `/api/v1/admin/notification-templates` (permission
 * `notifications.templates`): list, read, create, reword, delete, and preview with values.
 * Every change is audited; the next send uses it.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/app.js';
import { publicIdSchema, refuseIntegerIds, type PublicIdKind } from '../../platform/http/public-id.js';
import { bullets, errors } from '../../platform/http/schemas.js';
import { requestWho, type Guard, type Who } from '../../sessions/guard.js';
import type { UserStore } from '../../users/store.js';
import { PUSH_TEXT_MAX } from '../outbox.js';
import { LINE_PATTERN } from '../text.js';
import { namedTemplate } from './catalogue.js';
import { TemplateErrors } from './errors.js';
import { templatePlaceholders } from './render.js';
import { allowedPlaceholders, type TemplateService } from './service.js';
import type { TemplateRow } from './store.js';

export interface TemplateRouteDeps {
  templates: TemplateService;
  users: UserStore;
  guard: Guard;
}

const tags = ['Notification templates'];
const security = [{ bearer: [] }];

/** A template's public id: its uuid (one per channel, name and language; the integer `id` stays internal). */
export const TEMPLATE_ID: PublicIdKind = { what: 'notification template', source: 'the `id` of the template in GET /api/v1/admin/notification-templates', example: '9d3f6a2b-7e41-4c58-b0a9-3e5d1c7f8a24' };
const TemplateId = publicIdSchema(TEMPLATE_ID);
const IdParams = Type.Object({ id: TemplateId });
const preValidation = refuseIntegerIds(TEMPLATE_ID, { params: ['id'] });

export const LanguageSchema = Type.Union([Type.Literal('en'), Type.Literal('pt'), Type.Literal('fr')], { description: 'en, pt or fr', examples: ['pt'] });
const ChannelSchema = Type.Union([Type.Literal('push')], { description: 'push (the only channel so far)', examples: ['push'] });
export const TemplateName = Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$', description: 'Letters, digits and underscores, starting with a letter', examples: ['INTERNAL_TRANSFER'] });
const Text = (what: string, example: string) => Type.String({ minLength: 1, maxLength: PUSH_TEXT_MAX, pattern: '\\S', description: `${what}; placeholders in braces`, examples: [example] });
const Subject = Text('The push title', 'Transfer completed');
const Message = Text('The push body', '{debit_name} sent {amount} {currency} to {credit_name}. Reference {transaction_reference_id}.');
export const TemplateValues = Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' }), Type.String({ maxLength: 200, pattern: LINE_PATTERN }), {
  maxProperties: 32, description: 'A value for each placeholder, as text: at most 200 characters each, one line, no control or bidirectional characters',
  examples: [{ debit_name: 'Amina Otieno', credit_name: 'Kofi Mensah', amount: '1,500.00', currency: 'KES', debit_account: '****4471', credit_account: '****9012', transaction_reference_id: 'TRX-20261126-0042' }],
});

const Template = Type.Object({
  id: publicIdSchema(TEMPLATE_ID, 'The template\'s id (a uuid; one per channel, name and language), which `/api/v1/admin/notification-templates/{id}` takes.'),
  channel: ChannelSchema,
  language: LanguageSchema,
  name: TemplateName,
  subject: Subject,
  message: Message,
  placeholders: Type.Array(Type.String(), { description: 'The placeholders this text uses', examples: [['debit_name', 'amount', 'currency', 'credit_name', 'transaction_reference_id']] }),
  allowed_placeholders: Type.Array(Type.String(), { description: 'The placeholders values may name: a named template\'s declared set, or those its languages use' }),
  named: Type.Boolean({ description: 'One of the named templates the platform\'s services send (send2FA, INTERNAL_TRANSFER, DEPOSIT, INITIAL_DEPOSIT): reworded, never given a placeholder its callers do not send' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

function present(t: TemplateRow, family: readonly TemplateRow[]) {
  return {
    id: t.uuid, channel: t.channel, language: t.language, name: t.name, subject: t.subject, message: t.message,
    placeholders: templatePlaceholders(t),
    allowed_placeholders: allowedPlaceholders(t.name, family),
    named: namedTemplate(t.name) !== undefined,
    created_at: new Date(t.created_at).toISOString(), updated_at: new Date(t.updated_at).toISOString(),
  };
}

const TEXT_ERRORS = '`422 TEMPLATE_INVALID` (`details.fields`): a brace that is not part of a placeholder, or, in a named template, a placeholder its callers do not send.';

/** POST .../:id/preview: the stored text or an unsaved draft, filled with values. */
const PREVIEW_SCHEMA = {
  tags, security, summary: 'Fill a template with values, without sending',
  description: bullets(
    'The stored text, or a draft of it: `subject` and `message` given (either or both) stand for the stored ones, unsaved, so that an editor shows what a send would give once the draft is saved.',
    `${TEXT_ERRORS} (a draft's, as saving it would answer)`,
    '`422 TEMPLATE_VALUES_INVALID` (`details.missing`, `details.unknown`): as a send would answer.',
    '`404 TEMPLATE_NOT_FOUND`.',
  ),
  params: IdParams,
  body: Type.Object({ values: TemplateValues, subject: Type.Optional(Subject), message: Type.Optional(Message) }, { additionalProperties: false, examples: [{ values: { amount: '1,500.00', currency: 'KES', account: '****4471', transaction_reference_id: 'TRX-20261126-0042' } }, { values: { amount: '1,500.00', currency: 'KES', account: '****4471', transaction_reference_id: 'TRX-20261126-0042' }, message: 'Recebeu {amount} {currency} na conta {account}. Ref. {transaction_reference_id}.' }] }),
  response: { 200: Type.Object({ language: LanguageSchema, title: Type.String({ examples: ['Transfer completed'] }), body: Type.String({ examples: ['Amina Otieno sent 1,500.00 KES from account ****4471 to Kofi Mensah, account ****9012. Reference TRX-20261126-0042.'] }) }), ...errors(TemplateErrors.TEMPLATE_NOT_FOUND, TemplateErrors.TEMPLATE_INVALID, TemplateErrors.TEMPLATE_VALUES_INVALID) },
};

export function templateRoutes(s: TemplateRouteDeps): FastifyPluginAsync {
  const onRequest = s.guard.requirePermission('notifications.templates');
  const who = (request: FastifyRequest): Promise<Who> => requestWho(request, s.users);
  const presentOne = async (t: TemplateRow) => present(t, await s.templates.store.family(t.channel, t.name));
  const found = async (id: string): Promise<TemplateRow> => {
    const t = await s.templates.store.byUuid(id);
    if (!t) throw TemplateErrors.TEMPLATE_NOT_FOUND({ id });
    return t;
  };

  return async (instance) => {
    const app = instance as unknown as App;

    app.get('/api/v1/admin/notification-templates', {
      schema: {
        tags, security, summary: 'List notification templates (permission notifications.templates)',
        querystring: Type.Object({ channel: Type.Optional(ChannelSchema), name: Type.Optional(TemplateName), language: Type.Optional(LanguageSchema) }, { additionalProperties: false }),
        response: { 200: Type.Object({ templates: Type.Array(Template) }) },
      },
      onRequest,
    }, async (request) => {
      const rows = await s.templates.store.list(request.query);
      const all = request.query.language ? await s.templates.store.list({ channel: request.query.channel, name: request.query.name }) : rows;
      return { templates: rows.map((t) => present(t, all.filter((r) => r.channel === t.channel && r.name === t.name))) };
    });

    app.get('/api/v1/admin/notification-templates/:id', {
      schema: { tags, security, summary: 'Read a notification template', params: IdParams, response: { 200: Template, ...errors(TemplateErrors.TEMPLATE_NOT_FOUND) } },
      onRequest, preValidation,
    }, async (request) => presentOne(await found(request.params.id)));

    app.post('/api/v1/admin/notification-templates', {
      schema: {
        tags, security, summary: 'Add a template, or a language of one',
        description: bullets('`409 TEMPLATE_EXISTS` (`details.id`, the id of the one that exists): this channel, name and language exist; reword it with PUT.', TEXT_ERRORS, 'Audited as NOTIFICATION_TEMPLATE_CREATED.'),
        body: Type.Object({ channel: Type.Optional(ChannelSchema), name: TemplateName, language: LanguageSchema, subject: Subject, message: Message }, { additionalProperties: false }),
        response: { 201: Template, ...errors(TemplateErrors.TEMPLATE_EXISTS, TemplateErrors.TEMPLATE_INVALID, TemplateErrors.TEMPLATE_FALLBACK_MISSING) },
      },
      onRequest,
    }, async (request, reply) => {
      const b = request.body;
      const row = await s.templates.create(await who(request), { channel: b.channel ?? 'push', name: b.name, language: b.language, subject: b.subject, message: b.message });
      return reply.status(201).send(await presentOne(row));
    });

    app.put('/api/v1/admin/notification-templates/:id', {
      schema: {
        tags, security, summary: 'Reword a template',
        description: bullets('`404 TEMPLATE_NOT_FOUND`.', TEXT_ERRORS, 'Audited as NOTIFICATION_TEMPLATE_UPDATED.'),
        params: IdParams,
        body: Type.Object({ subject: Subject, message: Message }, { additionalProperties: false }),
        response: { 200: Template, ...errors(TemplateErrors.TEMPLATE_NOT_FOUND, TemplateErrors.TEMPLATE_INVALID) },
      },
      onRequest, preValidation,
    }, async (request) => presentOne(await s.templates.update(await who(request), request.params.id, request.body)));

    app.delete('/api/v1/admin/notification-templates/:id', {
      schema: {
        tags, security, summary: 'Delete one language of a template',
        description: bullets('`409 TEMPLATE_REQUIRED`: the en version of a named template, or of a template that has other languages, is the fallback and stays.', '`404 TEMPLATE_NOT_FOUND`.', 'Audited as NOTIFICATION_TEMPLATE_DELETED.'),
        params: IdParams,
        response: { 200: Type.Object({ deleted: Type.Literal(true), id: TemplateId }), ...errors(TemplateErrors.TEMPLATE_NOT_FOUND, TemplateErrors.TEMPLATE_REQUIRED) },
      },
      onRequest, preValidation,
    }, async (request) => {
      await s.templates.delete(await who(request), request.params.id);
      return { deleted: true as const, id: request.params.id };
    });

    app.post('/api/v1/admin/notification-templates/:id/preview', {
      schema: PREVIEW_SCHEMA,
      onRequest, preValidation,
    }, async (request) => {
      const t = await found(request.params.id);
      const b = request.body;
      const r = await s.templates.preview(t, { subject: b.subject ?? t.subject, message: b.message ?? t.message }, b.values);
      return { language: r.language, title: r.title, body: r.body };
    });
  };
}
