/**
 * FAQ administration under `/api/v1/admin/faqs` (permission `faq.manage`): list, read, create,
 * edit, soft delete and restore, reorder, import and export (JSON and CSV). Every change is
 * audited and seen by the next search.
 */
import Type from 'typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { App } from '../platform/http/app.js';
import { publicIdSchema, refuseIntegerIds } from '../platform/http/public-id.js';
import { errors, Pagination } from '../platform/http/schemas.js';
import { requestWho, type Guard, type Who } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { IMPORT_MAX_ITEMS, type FaqAdmin, type FaqInputItem } from './admin.js';
import { FaqErrors } from './errors.js';
import { AdminFaq, Category, FAQ_ID, FAQ_ID_EXAMPLES, FaqId, FaqInput, FaqInputProperties, FaqPatch, presentAdminFaq } from './schemas.js';
import type { FaqStore } from './store.js';

export interface FaqAdminRouteDeps {
  faqAdmin: FaqAdmin;
  faqStore: FaqStore;
  users: UserStore;
  guard: Guard;
}

const tags = ['FAQ administration'];
const security = [{ bearer: [] }];
const IdParams = Type.Object({ id: FaqId });
const IMPORT_BODY_LIMIT = 8 * 1024 * 1024;

const ImportItem = Type.Object({ id: Type.Optional(publicIdSchema(FAQ_ID, 'The uuid of the article this item updates (its `id`); without it the item is created. Integer ids are not accepted.')), ...FaqInputProperties }, { additionalProperties: false });

/** `{id}` of `/api/v1/admin/faqs/{id}` and below: an integer answers 422 VALIDATION_ERROR saying to send the uuid. */
const refuseIntegerId = refuseIntegerIds(FAQ_ID, { params: ['id'] });
const refuseIntegerIdsToReorder = refuseIntegerIds(FAQ_ID, { body: ['ids'] });

/** The import's `faqs[n].id`: an integer is refused as a top-level id would be, naming the item (`faqs.3.id`). */
const refuseIntegerImportIds = refuseIntegerIds(FAQ_ID, { body: ['faqs.*.id'] });

export function faqAdminRoutes(s: FaqAdminRouteDeps): FastifyPluginAsync {
  const onRequest = s.guard.requirePermission('faq.manage');
  const who = (request: FastifyRequest): Promise<Who> => requestWho(request, s.users);

  return async (instance) => {
    const app = instance as unknown as App;

    app.get('/api/v1/admin/faqs', {
      schema: {
        tags, security, summary: 'List FAQ articles, soft-deleted ones too (permission faq.manage)',
        querystring: Type.Object({ category: Type.Optional(Category), active: Type.Optional(Type.Boolean()), ...Pagination }, { additionalProperties: false }),
        response: { 200: Type.Object({ faqs: Type.Array(AdminFaq), total: Type.Integer(), page: Type.Integer(), page_size: Type.Integer() }) },
      },
      onRequest,
    }, async (request) => {
      const page = request.query.page ?? 1;
      const pageSize = request.query.page_size ?? 50;
      const r = await s.faqStore.list({ category: request.query.category, active: request.query.active, limit: pageSize, offset: (page - 1) * pageSize });
      return { faqs: r.faqs.map(presentAdminFaq), total: r.total, page, page_size: pageSize };
    });

    app.get('/api/v1/admin/faqs/export', {
      schema: {
        tags, security, summary: 'Export the FAQ as JSON or CSV (permission faq.manage)',
        description: '`format=json` (default): `{faqs: [...]}`, the shape the import takes. `format=csv`: RFC 4180 with a header (`id,question,answer,category,keywords,order,is_active,helpful_count,unhelpful_count`), `id` being the article\'s uuid; a cell starting with `=`, `+`, `-` or `@` gets a leading `\'` so that a spreadsheet does not run it, and the import removes it again. Active articles only unless `include_inactive=true`. Audited as FAQ_EXPORTED.',
        querystring: Type.Object({ format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { default: 'json' })), include_inactive: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        response: {
          200: { description: 'The articles: JSON, or CSV with `format=csv`.', content: { 'application/json': { schema: Type.Object({ faqs: Type.Array(AdminFaq) }) }, 'text/csv': { schema: { type: 'string', examples: ['id,question,answer,category,keywords,order,is_active,helpful_count,unhelpful_count\r\n6d1f4b2a-8c3e-4f5a-9b7d-2e4c6a8f0b13,I lost my card. How do I block it?,"In the app: Cards, then Block card.",security,"lost card, block card",10,true,42,3\r\n'] } } } },
        },
      },
      onRequest,
    }, async (request, reply) => {
      const format = request.query.format ?? 'json';
      const r = await s.faqAdmin.export(await who(request), format, request.query.include_inactive ?? false);
      if (r.csv === undefined) return { faqs: r.rows.map(presentAdminFaq) };
      return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="faqs.csv"').send(r.csv);
    });

    app.get('/api/v1/admin/faqs/:id', {
      schema: { tags, security, summary: 'Read an article, soft-deleted or not (permission faq.manage)', description: 'By the article\'s uuid (its `id`; an integer is 422).', params: IdParams, response: { 200: AdminFaq, ...errors(FaqErrors.FAQ_NOT_FOUND) } },
      onRequest, preValidation: refuseIntegerId,
    }, async (request) => {
      const row = await s.faqStore.byUuid(request.params.id, { activeOnly: false });
      if (!row) throw FaqErrors.FAQ_NOT_FOUND();
      return presentAdminFaq(row);
    });

    app.post('/api/v1/admin/faqs', {
      schema: {
        tags, security, summary: 'Create an article (permission faq.manage)',
        description: 'Plain text; no control characters (line breaks and tabs allowed in the answer). `order` defaults to 0, `is_active` to true. Audited as FAQ_CREATED; the next search finds it.',
        body: FaqInput,
        response: { 201: AdminFaq },
      },
      onRequest,
    }, async (request, reply) => reply.status(201).send(presentAdminFaq(await s.faqAdmin.create(await who(request), request.body))));

    app.patch('/api/v1/admin/faqs/:id', {
      schema: {
        tags, security, summary: 'Edit an article (permission faq.manage)',
        description: 'Any of the fields. `is_active: false` soft-deletes (audited FAQ_DELETED), `true` restores (FAQ_RESTORED); other changes are FAQ_UPDATED.',
        params: IdParams, body: FaqPatch,
        response: { 200: AdminFaq, ...errors(FaqErrors.FAQ_NOT_FOUND) },
      },
      onRequest, preValidation: refuseIntegerId,
    }, async (request) => presentAdminFaq(await s.faqAdmin.update(await who(request), request.params.id, request.body)));

    app.delete('/api/v1/admin/faqs/:id', {
      schema: {
        tags, security, summary: 'Soft-delete an article (permission faq.manage)',
        description: 'Sets `is_active` to false: hidden from readers and search, kept with its counters; `POST .../restore` brings it back. Audited as FAQ_DELETED.',
        params: IdParams, response: { 200: AdminFaq, ...errors(FaqErrors.FAQ_NOT_FOUND) },
      },
      onRequest, preValidation: refuseIntegerId,
    }, async (request) => presentAdminFaq(await s.faqAdmin.update(await who(request), request.params.id, { is_active: false })));

    app.post('/api/v1/admin/faqs/:id/restore', {
      schema: { tags, security, summary: 'Restore a soft-deleted article (permission faq.manage)', description: 'Audited as FAQ_RESTORED.', params: IdParams, response: { 200: AdminFaq, ...errors(FaqErrors.FAQ_NOT_FOUND) } },
      onRequest, preValidation: refuseIntegerId,
    }, async (request) => presentAdminFaq(await s.faqAdmin.update(await who(request), request.params.id, { is_active: true })));

    app.post('/api/v1/admin/faqs/reorder', {
      schema: {
        tags, security, summary: 'Reorder a category\'s articles (permission faq.manage)',
        description: 'Gives the listed articles (by uuid, their `id`; integers are 422 VALIDATION_ERROR) the display orders 10, 20, 30 ... in the order listed; articles not listed keep theirs. Every id must be an article of `category`, once: otherwise 422 FAQ_REORDER_INVALID and nothing changes. Audited as FAQ_REORDERED.',
        body: Type.Object({ category: Category, ids: Type.Array(FaqId, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false, examples: [{ category: 'security', ids: [...FAQ_ID_EXAMPLES] }] }),
        response: { 200: Type.Object({ status: Type.Literal('success'), category: Category, reordered: Type.Integer() }), ...errors(FaqErrors.FAQ_REORDER_INVALID) },
      },
      onRequest, preValidation: refuseIntegerIdsToReorder,
    }, async (request) => {
      await s.faqAdmin.reorder(await who(request), request.body.category, request.body.ids);
      return { status: 'success' as const, category: request.body.category, reordered: request.body.ids.length };
    });

    app.post('/api/v1/admin/faqs/import', {
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        tags, security, summary: 'Import articles from JSON or CSV (permission faq.manage)',
        description: `All or nothing. \`{faqs: [...]}\` (what the JSON export gives) or \`{csv: "..."}\` (what the CSV export gives; columns in any order, \`question\`, \`answer\` and \`category\` required, counters ignored). An item with \`id\` (the article's uuid, as the export gives it; an integer is 422) updates that article (the fields it gives; a CSV's empty \`order\` or \`is_active\` cell changes nothing); without it one is created. At most ${IMPORT_MAX_ITEMS} items, 8 MiB. Any bad row: 422 FAQ_IMPORT_INVALID with \`details.problems\` \`[{row, field, message}]\` (rows from 1) and nothing imported. Audited as FAQ_IMPORTED.`,
        body: Type.Union([
          Type.Object({ faqs: Type.Array(ImportItem, { minItems: 1, maxItems: IMPORT_MAX_ITEMS }) }, { additionalProperties: false }),
          Type.Object({ csv: Type.String({ minLength: 1, maxLength: IMPORT_BODY_LIMIT }) }, { additionalProperties: false }),
        ], { examples: [{ faqs: [{ question: 'How do I block my card?', answer: 'In the app: Cards, then Block card.', category: 'security', keywords: 'block card, lost card', order: 10 }, { id: FAQ_ID.example, question: 'I lost my card or it was stolen. How do I block it?', answer: 'Block it in the app: Cards, then Block card.', category: 'security' }] }, { csv: `id,question,answer,category\r\n,"How do I block my card?","In the app: Cards, then Block card.",security\r\n${FAQ_ID.example},"I lost my card. How do I block it?","Block it in the app: Cards, then Block card.",security\r\n` }] }),
        response: { 200: Type.Object({ status: Type.Literal('success'), created: Type.Integer(), updated: Type.Integer() }), ...errors(FaqErrors.FAQ_IMPORT_INVALID) },
      },
      onRequest, preValidation: refuseIntegerImportIds,
    }, async (request) => {
      const body = request.body as { faqs: FaqInputItem[] } | { csv: string };
      let items: FaqInputItem[];
      let rows: number[] | undefined;
      if ('csv' in body) {
        const parsed = s.faqAdmin.fromCsv(body.csv);
        if ('problems' in parsed) throw FaqErrors.FAQ_IMPORT_INVALID({ problems: parsed.problems.slice(0, 100), problem_count: parsed.problems.length });
        ({ items, rows } = parsed);
        if (items.length === 0) throw FaqErrors.FAQ_IMPORT_INVALID({ problems: [{ row: 1, field: '(csv)', message: 'has no articles' }], problem_count: 1 });
        if (items.length > IMPORT_MAX_ITEMS) throw FaqErrors.FAQ_IMPORT_INVALID({ problems: [{ row: rows[IMPORT_MAX_ITEMS]!, field: '(csv)', message: `more than ${IMPORT_MAX_ITEMS} articles` }], problem_count: 1 });
      } else items = body.faqs;
      const r = await s.faqAdmin.import(await who(request), items, 'csv' in body ? 'csv' : 'json', rows);
      return { status: 'success' as const, ...r };
    });
  };
}
