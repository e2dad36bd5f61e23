/**
 * Bank branches ("entities") under `/api/v1/admin/entities` (permission `entities.manage`):
 * list, read, create, rename, deactivate and reactivate. The code is what an identity provider's
 * `branch` attribute names (SPEC's SAML step 5), so it never changes once made.
 */
import Type from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AuditLog } from '../audit/service.js';
import type { Db } from '../platform/db/database.js';
import type { App } from '../platform/http/app.js';
import { publicIdSchema, refuseIntegerIds, type PublicIdKind } from '../platform/http/public-id.js';
import { errors, NO_NUL, Pagination } from '../platform/http/schemas.js';
import { requestActor, requestAuditContext, type Guard } from '../sessions/guard.js';
import type { UserStore } from '../users/store.js';
import { EntityErrors } from './errors.js';
import type { EntityRow, EntityStore } from './store.js';

export interface EntityRouteDeps {
  db: Db;
  entities: EntityStore;
  users: UserStore;
  audit: AuditLog;
  guard: Guard;
}

const tags = ['Branches'];
const security = [{ bearer: [] }];
export const ENTITY_CODE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$';

/** A branch's public id: its uuid (the integer `id` of `entities` stays internal). */
export const BRANCH_ID: PublicIdKind = { what: 'branch', source: 'the `id` of the branch in GET /api/v1/admin/entities', example: '5b8e2f14-9c3a-4d71-8f6e-2a0c4b7d9e13' };

const Entity = Type.Object({
  id: publicIdSchema(BRANCH_ID, 'The branch\'s id (a uuid), which `/api/v1/admin/entities/{id}` takes.'),
  code: Type.String({ description: 'What an identity provider\'s `branch` attribute names; unique without regard to case; never changes.', examples: ['NBO-001'] }),
  name: Type.String({ examples: ['Nairobi, Kenyatta Avenue'] }),
  is_active: Type.Boolean({ description: 'A deactivated branch links no new user; existing links stay.' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, examples: ['Nairobi, Kenyatta Avenue'] });
const IdParams = Type.Object({ id: publicIdSchema(BRANCH_ID) });
const preValidation = refuseIntegerIds(BRANCH_ID, { params: ['id'] });

const iso = (d: Date | string): string => new Date(d).toISOString();
const present = (e: EntityRow) => ({ id: e.uuid, code: e.code, name: e.name, is_active: e.is_active, created_at: iso(e.created_at), updated_at: iso(e.updated_at) });

export function entityRoutes(s: EntityRouteDeps): FastifyPluginAsync {
  const onRequest = s.guard.requirePermission('entities.manage');
  return async (instance) => {
    const app = instance as unknown as App;

    app.get('/api/v1/admin/entities', {
      schema: {
        tags, security, summary: 'List branches (permission entities.manage)', description: 'By code. `active=true` (or `false`) lists only active (or deactivated) branches.',
        querystring: Type.Object({ active: Type.Optional(Type.Boolean()), ...Pagination }, { additionalProperties: false }),
        response: { 200: Type.Object({ entities: Type.Array(Entity), total: Type.Integer(), page: Type.Integer(), page_size: Type.Integer() }) },
      },
      onRequest,
    }, async (request) => {
      const page = request.query.page ?? 1;
      const pageSize = request.query.page_size ?? 50;
      const r = await s.entities.list({ active: request.query.active, limit: pageSize, offset: (page - 1) * pageSize });
      return { entities: r.entities.map(present), total: r.total, page, page_size: pageSize };
    });

    app.get('/api/v1/admin/entities/:id', {
      schema: { tags, security, summary: 'Read a branch (permission entities.manage)', params: IdParams, response: { 200: Entity, ...errors(EntityErrors.ENTITY_NOT_FOUND) } },
      onRequest, preValidation,
    }, async (request) => {
      const entity = await s.entities.byUuid(request.params.id);
      if (!entity) throw EntityErrors.ENTITY_NOT_FOUND();
      return present(entity);
    });

    app.post('/api/v1/admin/entities', {
      schema: {
        tags, security, summary: 'Create a branch (permission entities.manage)',
        description: '`409 ENTITY_EXISTS` when another branch has the code in any case (`details.code`). Audited as ENTITY_CREATED.',
        body: Type.Object({
          code: Type.String({ pattern: ENTITY_CODE_PATTERN, description: '1 to 32 letters, digits, `.`, `_` or `-`, starting with a letter or digit.', examples: ['NBO-001'] }),
          name: Name,
        }, { additionalProperties: false }),
        response: { 201: Entity, ...errors(EntityErrors.ENTITY_EXISTS) },
      },
      onRequest,
    }, async (request, reply) => {
      const actor = await requestActor(request, s.users);
      const { code, name } = request.body;
      const created = await s.db.transaction().execute(async (trx) => {
        const row = await s.entities.create(trx, code, name.trim());
        if (row === 'code_taken') return row;
        await s.audit.record({ ...requestAuditContext(request), eventType: 'ENTITY_CREATED', status: 'SUCCESS', userId: actor.uuid, username: actor.username, details: { entity_id: row.uuid, code: row.code } }, trx);
        return row;
      });
      if (created === 'code_taken') throw EntityErrors.ENTITY_EXISTS({ code });
      return reply.status(201).send(present(created));
    });

    app.patch('/api/v1/admin/entities/:id', {
      schema: {
        tags, security, summary: 'Rename, deactivate or reactivate a branch (permission entities.manage)',
        description: 'The code never changes (identity providers name it). A deactivated branch links no new user at sign-in; users already linked stay linked. Audited as ENTITY_UPDATED.',
        params: IdParams,
        body: Type.Object({ name: Type.Optional(Name), is_active: Type.Optional(Type.Boolean()) }, { additionalProperties: false, minProperties: 1, examples: [{ is_active: false }] }),
        response: { 200: Entity, ...errors(EntityErrors.ENTITY_NOT_FOUND) },
      },
      onRequest, preValidation,
    }, async (request) => {
      const actor = await requestActor(request, s.users);
      const { name, is_active: isActive } = request.body;
      const updated = await s.db.transaction().execute(async (trx) => {
        const row = await s.entities.update(trx, request.params.id, { name: name?.trim(), isActive });
        if (!row) return undefined;
        await s.audit.record({ ...requestAuditContext(request), eventType: 'ENTITY_UPDATED', status: 'SUCCESS', userId: actor.uuid, username: actor.username, details: { entity_id: row.uuid, code: row.code, ...(name === undefined ? {} : { renamed: true }), ...(isActive === undefined ? {} : { is_active: isActive }) } }, trx);
        return row;
      });
      if (!updated) throw EntityErrors.ENTITY_NOT_FOUND();
      return present(updated);
    });
  };
}
